package io.poyang.raft.core;

/**
 * How a linearizable read is made safe (DESIGN §6). Every kind returns data at least as new as
 * every write acknowledged before the read began.
 */
public enum ReadKind {
    /**
     * On the leader, under its lease: no message is sent. The lease starts at the send time of the
     * last round of requests a majority acknowledged and lasts {@code electionTimeout − leaseDriftMargin};
     * until it ends no other node can have become leader. When the lease is not valid (just elected,
     * contact lost, a leader transfer under way) the read falls back to {@link #READ_INDEX}. The default.
     */
    LEASE_READ,
    /**
     * On the leader: the commit index at the time of the read is confirmed by a heartbeat round that
     * a majority acknowledges (one round for every read queued meanwhile), then the read waits until
     * that index is applied.
     */
    READ_INDEX,
    /**
     * On a follower or observer: the node asks the leader for a confirmed read index (one request
     * for every read queued meanwhile) and serves the read once it applied that far, so read load
     * spreads over the group. On the leader it is a {@link #LEASE_READ}.
     */
    FOLLOWER_READ;

    private static final ReadKind[] VALUES = values();

    /** The kind for a wire code (its ordinal); unknown codes are the default, {@link #LEASE_READ}. */
    public static ReadKind of(int code) {
        return code >= 0 && code < VALUES.length ? VALUES[code] : LEASE_READ;
    }
}
