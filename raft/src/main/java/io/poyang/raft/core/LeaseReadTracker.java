package io.poyang.raft.core;

import io.poyang.common.TimeSource;

import java.util.concurrent.TimeUnit;

/**
 * The leader's read lease. Each request a replicator sends carries its send time on the lease
 * clock; when a follower acknowledges it in the leader's term, that time is recorded for the
 * follower. The lease starts at the latest send time a majority of every voting set has
 * acknowledged (the leader counting itself) and lasts {@code electionTimeout − leaseDriftMargin}.
 *
 * <p>Why that is safe: a follower that acknowledged a request received it after it was sent, and
 * refuses pre-votes and votes for an election timeout after hearing from its leader (and for an
 * election timeout after it starts). A new leader needs the vote of at least one node of that
 * majority, so it cannot exist before {@code send time + electionTimeout} as measured by that
 * node; the margin covers the difference of clock rates and the dispatcher's cached clock.
 *
 * <p>No lease: before a majority acknowledged anything in this term, before the leader's no-op
 * entry of the term committed (the caller checks), from the start of a leader transfer
 * ({@link #suspend}) — for the rest of the term once TIMEOUT_NOW went out — and on a node that does
 * not lead. A group with one voter always has it while
 * it leads. Dispatcher thread.
 */
final class LeaseReadTracker {

    private final RaftGroup g;
    private final TimeSource clock;
    private final long leaseNanos;
    private Members members;
    private long[] ackSendNanos = new long[0];
    private long[] work = new long[0];
    private long[] scratch = new long[0];
    private int selfSlot = -1;
    /** The lease start as last computed; recomputed when an acknowledgement moves a slot. */
    private long leaseStartNanos;
    private boolean dirty;
    private boolean suspended;

    /**
     * @param clock the lease clock: the configured {@link RaftConfig#leaseClock()}, or null for the
     *              dispatcher's (the system clock)
     */
    LeaseReadTracker(RaftGroup g, TimeSource clock) {
        this.g = g;
        this.clock = clock;
        RaftConfig c = g.config;
        this.leaseNanos = TimeUnit.MILLISECONDS.toNanos(c.electionTimeoutMillis() - c.leaseDriftMarginMillis());
    }

    /** The lease clock now, for stamping a request about to be sent ({@code dispatcherNanos}: the cached clock). */
    long sendStamp(long dispatcherNanos) {
        return clock == null ? dispatcherNanos : clock.nanoTime();
    }

    /** A fresh reading of the lease clock, for judging the lease. */
    long now() {
        return clock == null ? System.nanoTime() : clock.nanoTime();
    }

    /** The node became leader: no follower has acknowledged anything in this term yet. */
    void resetForLeader() {
        setMembers(g.state.members, true);
        suspended = false;
    }

    /** The configuration changed while leading: figures are kept by node id, newcomers start with none. */
    void onMembersChanged(Members m) {
        if (members != null && g.state.isLeader()) {
            setMembers(m, false);
        }
    }

    private void setMembers(Members m, boolean reset) {
        Members old = members;
        long never = now() - TimeUnit.DAYS.toNanos(1);
        int n = m.slotCount();
        long[] acks = new long[n];
        for (int i = 0; i < n; i++) {
            int was = reset || old == null ? -1 : old.slotOf(m.nodeAt(i));
            acks[i] = was < 0 ? never : ackSendNanos[was];
        }
        members = m;
        ackSendNanos = acks;
        work = new long[n];
        scratch = new long[n];
        selfSlot = m.slotOf(g.state.selfId);
        dirty = true;
    }

    /** Node {@code nodeId} acknowledged, in this leader's term, a request stamped {@code sendStamp}. */
    void onAck(int nodeId, long sendStamp) {
        int slot = members == null ? -1 : members.slotOf(nodeId);
        if (slot >= 0 && sendStamp - ackSendNanos[slot] > 0) {
            ackSendNanos[slot] = sendStamp;
            dirty = true;
        }
    }

    /**
     * A leader transfer started: no lease reads — the target may win at once. It lasts until the
     * next term ({@link #resetForLeader}) unless the transfer gives it back ({@link #resume}) because
     * the target was never told to stand.
     */
    void suspend() {
        suspended = true;
    }

    /** The transfer ended before TIMEOUT_NOW was sent: the lease is as safe as before it. */
    void resume() {
        suspended = false;
    }

    /** True when a read may be served now under the lease (the no-op check is the caller's). */
    boolean isValid(long nowStamp) {
        if (suspended || members == null || !g.state.isLeader()) {
            return false;
        }
        long start = leaseStart();
        return start == Long.MAX_VALUE || nowStamp - start < leaseNanos;
    }

    /** The lease clock time at which the current lease ends (Long.MAX_VALUE: a one-voter group); for status. */
    long leaseEnd() {
        long start = leaseStart();
        return start == Long.MAX_VALUE ? Long.MAX_VALUE : start + leaseNanos;
    }

    private long leaseStart() {
        if (dirty) {
            long[] w = work;
            System.arraycopy(ackSendNanos, 0, w, 0, w.length);
            if (selfSlot >= 0) {
                w[selfSlot] = Long.MAX_VALUE;
            }
            leaseStartNanos = members.quorumValue(w, scratch);
            dirty = false;
        }
        return leaseStartNanos;
    }
}
