package io.poyang.dtkv.client;

import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;

/**
 * Hears the states of watched keys, in order, on the client's callback executor (one event at a
 * time). {@code node} is the key's latest state: {@code node.exists()} is false when the key was
 * removed (or never existed). {@code watchKey} is the watch it came through (the key itself, or the
 * watched directory above it).
 */
@FunctionalInterface
public interface KvWatchListener {

    void onChange(String watchKey, KvNode node);

    /**
     * The node refused to watch keys of this watch ({@link io.poyang.dtkv.KvCode#TOO_MANY_WATCHES}: the
     * connection watches as many keys of the group as the node allows). Those keys hear nothing:
     * the client leaves them out when it registers its watches again after a reconnect or failover
     * (the node refuses a registration whole, so the others go on), and only a new watch of such a
     * key asks the node again (close this one). Also called for every watch of the group when even
     * that re-registration is refused (a leader with a lower limit). The client logs it at error
     * level in any case.
     */
    default void onError(KvException error) {
    }
}
