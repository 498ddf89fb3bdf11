package io.poyang.raft.core;

/**
 * A read of a group's state machine, handed to {@link RaftGroup#read}. Exactly one of the two
 * methods is called, once.
 */
public interface ReadTask {

    /**
     * The read is safe: the state machine has applied at least the confirmed read index. Called on
     * the group's dispatcher thread, between two apply batches, so the state machine can be read
     * without locks. Must be quick and must not block; an exception it throws is logged.
     */
    void run();

    /**
     * The read cannot be served here: {@link io.poyang.raft.client.NotLeaderException} (this node
     * is not the leader, or for a follower read no leader is known; the leader id, if any, is in the
     * exception), {@link io.poyang.common.PoyangTimeoutException} (the deadline passed first) or
     * {@link io.poyang.common.StoppedException} (the group is stopping or failed). Called on the
     * thread that called {@code read} when the read is refused at once, else on the dispatcher
     * thread.
     */
    void fail(Throwable error);
}
