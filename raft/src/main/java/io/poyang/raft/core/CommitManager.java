package io.poyang.raft.core;

import io.poyang.log.ImpossibleStates;
import io.poyang.raft.store.LogStore;

/**
 * Decides the commit index. On the leader: the highest index persisted on a majority of the
 * voters — the leader's own {@link LogStore#persistedIndex()} is one vote, each follower reports
 * the index it persisted in its AppendEntries answers — and only an entry of the leader's own term
 * commits directly (earlier ones commit with it). On a follower the commit index comes from the
 * leader ({@link #advanceTo}). Also keeps, per voter, the send time of the last request it
 * acknowledged: the leader's proof that a majority still follows it (check-quorum; the read lease
 * is {@link LeaseReadTracker}'s).
 * Dispatcher thread.
 */
final class CommitManager {

    private final RaftGroup g;
    /** Per slot of the configuration ({@link Members#slotOf}): the index persisted there (the leader's own too). */
    private long[] matchIndex = new long[0];
    /** Per slot: the send time (dispatcher clock) of the last request that node acknowledged in this term. */
    private long[] lastAckSendNanos = new long[0];
    private long[] scratch = new long[0];
    private long[] work = new long[0];
    private Members members;
    private int selfSlot = -1;

    CommitManager(RaftGroup g) {
        this.g = g;
    }

    /** The group became leader: nothing is known of the followers yet, and their lease clock starts now. */
    void resetForLeader(long nowNanos) {
        Members m = g.state.members;
        members = m;
        int n = m.slotCount();
        matchIndex = new long[n];
        lastAckSendNanos = new long[n];
        scratch = new long[n];
        work = new long[n];
        selfSlot = m.slotOf(g.state.selfId);
        for (int i = 0; i < n; i++) {
            lastAckSendNanos[i] = nowNanos;
        }
        if (selfSlot >= 0) {
            matchIndex[selfSlot] = g.store.persistedIndex();
        }
    }

    /**
     * The configuration changed while this node leads: the per-node figures are carried over by node
     * id; a node new to the configuration starts with nothing matched and a fresh contact time.
     */
    void onMembersChanged(Members m, long nowNanos) {
        Members old = members;
        if (old == null || !g.state.isLeader()) {
            return;
        }
        int n = m.slotCount();
        long[] match = new long[n];
        long[] ack = new long[n];
        for (int i = 0; i < n; i++) {
            int was = old.slotOf(m.nodeAt(i));
            match[i] = was < 0 ? 0 : matchIndex[was];
            ack[i] = was < 0 ? nowNanos : lastAckSendNanos[was];
        }
        members = m;
        matchIndex = match;
        lastAckSendNanos = ack;
        scratch = new long[n];
        work = new long[n];
        selfSlot = m.slotOf(g.state.selfId);
        if (selfSlot >= 0) {
            matchIndex[selfSlot] = g.store.persistedIndex();
        }
        recompute();
    }

    /** The leader's own log persisted up to {@code persisted}. */
    void onSelfPersisted(long persisted) {
        if (g.state.isLeader() && selfSlot >= 0) {
            matchIndex[selfSlot] = persisted;
            recompute();
        }
    }

    /** Follower {@code nodeId} persisted (and matches the leader) up to {@code match}. */
    void onFollowerMatch(int nodeId, long match) {
        int slot = members.slotOf(nodeId);
        if (slot >= 0 && match > matchIndex[slot]) {
            matchIndex[slot] = match;
            if (members.isVoterSlot(slot)) {
                recompute();
            }
        }
    }

    /**
     * Follower {@code nodeId} lost entries it had acknowledged: its match goes back to {@code match}.
     * The commit index stays (it never goes back); later commits count the follower only for what
     * it acknowledges again.
     */
    void onFollowerLostEntries(int nodeId, long match) {
        int slot = members.slotOf(nodeId);
        if (slot >= 0 && match < matchIndex[slot]) {
            matchIndex[slot] = match;
        }
    }

    /** Follower {@code nodeId} acknowledged a request sent at {@code sendNanos}. */
    void onFollowerAck(int nodeId, long sendNanos) {
        int slot = members.slotOf(nodeId);
        if (slot >= 0 && sendNanos - lastAckSendNanos[slot] > 0) {
            lastAckSendNanos[slot] = sendNanos;
        }
    }

    /** The index node {@code nodeId} is known to have persisted, or 0. */
    long matchIndexOf(int nodeId) {
        int slot = members == null ? -1 : members.slotOf(nodeId);
        return slot < 0 ? 0 : matchIndex[slot];
    }

    /**
     * Whether node {@code nodeId} of the configuration acknowledged a request sent within the last
     * {@code windowNanos} (at the start of a term every node counts as heard from at its start).
     */
    boolean answeredWithin(int nodeId, long nowNanos, long windowNanos) {
        int slot = members == null ? -1 : members.slotOf(nodeId);
        return slot >= 0 && nowNanos - lastAckSendNanos[slot] < windowNanos;
    }

    /** The lowest index some follower or observer still needs (for the tail cache), or Long.MAX_VALUE. */
    long lowestNeeded() {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < matchIndex.length; i++) {
            if (i != selfSlot) {
                min = Math.min(min, matchIndex[i] + 1);
            }
        }
        return min;
    }

    /**
     * True while a majority of voters (of each set, during a joint change; this leader counting
     * itself) acknowledged a request sent within the last {@code windowNanos}: the leader may go on
     * leading.
     */
    boolean hasQuorumContact(long nowNanos, long windowNanos) {
        long[] w = work;
        System.arraycopy(lastAckSendNanos, 0, w, 0, w.length);
        if (selfSlot >= 0) {
            w[selfSlot] = nowNanos;
        }
        return nowNanos - members.quorumValue(w, scratch) < windowNanos;
    }

    private void recompute() {
        RaftState st = g.state;
        long candidate = members.quorumValue(matchIndex, scratch);
        if (candidate > st.commitIndex && candidate <= g.store.lastIndex()
                && g.store.termOf(candidate) == st.currentTerm) {
            advanceTo(candidate);
        }
    }

    /** Moves the commit index up (leader: a quorum persisted it; follower: the leader said so). */
    void advanceTo(long commit) {
        RaftState st = g.state;
        if (commit <= st.commitIndex) {
            return;
        }
        if (commit > g.store.lastIndex()) {
            ImpossibleStates.report("group {}: commit index {} beyond the last log index {}", st.groupId, commit,
                    g.store.lastIndex());
            return;
        }
        st.commitIndex = commit;
        g.store.setCommitIndex(Math.min(commit, g.store.persistedIndex()));
        g.applyManager.wake();
        if (st.isLeader()) {
            g.reads.onLeaderCommit(commit);
            g.membership.onLeaderCommit(commit);
            g.wakeReplicators();
        }
    }
}
