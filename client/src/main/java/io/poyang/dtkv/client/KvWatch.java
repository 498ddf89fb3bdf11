package io.poyang.dtkv.client;

import java.util.Collections;
import java.util.List;

/** A registered watch: its keys and listener. {@link #close()} stops it. */
public final class KvWatch implements AutoCloseable {

    final int groupId;
    final List<String> keys;
    final KvWatchListener listener;
    private final KvWatches owner;
    volatile boolean closed;
    /**
     * Its start ran on the event executor (it was given the client's copy of its keys): until then
     * notifications only update that copy, which the start reads. Guarded by the KvWatches monitor.
     */
    boolean started;
    /**
     * Its place among its group's handles, in the order they were made: a state reaches the handles
     * that watch it in this order. Set when it is registered, under the KvWatches monitor.
     */
    long order;

    KvWatch(KvWatches owner, int groupId, List<String> keys, KvWatchListener listener) {
        this.owner = owner;
        this.groupId = groupId;
        this.keys = Collections.unmodifiableList(keys);
        this.listener = listener;
    }

    /** The watched keys and directories. */
    public List<String> keys() {
        return keys;
    }

    /** The watch of {@code key} this client has, the key itself or a directory above it; null if none. */
    String coveringKey(String key) {
        for (String k : keys) {
            if (k.isEmpty() || k.equals(key) || (key.length() > k.length() && key.startsWith(k)
                    && key.charAt(k.length()) == '.')) {
                return k;
            }
        }
        return null;
    }

    /** Stops the watch: no more events reach the listener. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            owner.unwatch(this);
        }
    }
}
