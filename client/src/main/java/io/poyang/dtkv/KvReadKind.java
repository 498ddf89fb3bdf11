package io.poyang.dtkv;

/**
 * How a DtKV read (get, batchGet, list) is made linearizable — field {@code read_kind} of
 * {@code KvReq}, mapped by the server to raft's read kinds (DESIGN §6). Every kind returns data at
 * least as new as every write acknowledged before the read was sent; they differ in cost and in
 * which node serves the read.
 */
public enum KvReadKind {
    /**
     * The default. The leader serves the read from its applied state while its lease holds (no
     * message sent: the lease, counted from the send time of a round a majority acknowledged, ends
     * before any other node can be elected); when the lease is not valid it falls back to
     * {@link #READ_INDEX}. Sent to the leader.
     */
    LEASE_READ(0),
    /**
     * The leader confirms its commit index with a heartbeat round a majority acknowledges (reads
     * waiting together share one round), then serves the read once it applied that far. Does not
     * depend on clocks. Sent to the leader.
     */
    READ_INDEX(1),
    /**
     * Any node serves the read: a follower (or observer) asks the leader for a confirmed read index
     * (one request for every read waiting on that node) and answers once it applied that far, so
     * read load spreads over the group. KvClient sends these to the nodes in turn (or to
     * {@code KvClientConfig.readNodeId}); on the leader it is a {@link #LEASE_READ}.
     */
    FOLLOWER_READ(2);

    private static final KvReadKind[] BY_NUMBER = {LEASE_READ, READ_INDEX, FOLLOWER_READ};

    private final int number;

    KvReadKind(int number) {
        this.number = number;
    }

    /** The wire number (raft's read-kind code). */
    public int number() {
        return number;
    }

    /** The kind of a wire number, or null when this version does not know it. */
    public static KvReadKind of(int number) {
        return number >= 0 && number < BY_NUMBER.length ? BY_NUMBER[number] : null;
    }
}
