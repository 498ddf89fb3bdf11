package io.poyang.dtkv.server;

import io.poyang.dtkv.KvLockEvent;

/**
 * What the state machine tells the server while applying, for pushes to clients. Called on the
 * apply thread, in apply order, on every replica (each node pushes to the clients connected to it);
 * implementations must not block.
 */
public interface KvListener {

    /** A lock was granted to a waiting client, or a holder lost it when its lease ran out. */
    void onLockEvent(KvLockEvent event);

    KvListener NONE = event -> {
    };
}
