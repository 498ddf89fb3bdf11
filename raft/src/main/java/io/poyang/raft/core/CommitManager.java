package io.poyang.raft.core;

import io.poyang.log.ImpossibleStates;
import io.poyang.raft.store.LogStore;

/**
 * Decides the commit index. On the leader: the highest index persisted on a majority of the
 * voters — the leader's own {@link LogStore#persistedIndex()} is one vote, each follower reports
 * the index it persisted in its AppendEntries answers — and only an entry of the leader's own term
 * commits directly (earlier ones commit with it). On a follower the commit index comes from the
 * leader ({@link #advanceTo}). Also keeps, per voter, the send time of the last request it
 * acknowledged: the leader's proof that a majority still follows it (and, later, its read lease).
 * Dispatcher thread.
 */
final class CommitManager {

    private final RaftGroup g;
    private long[] matchIndex;
    private long[] lastAckSendNanos;
    private long[] scratch;
    private int selfSlot;

    CommitManager(RaftGroup g) {
        this.g = g;
    }

    /** The group became leader: nothing is known of the followers yet, and their lease clock starts now. */
    void resetForLeader(long nowNanos) {
        Members m = g.state.members;
        int n = m.voterCount();
        matchIndex = new long[n];
        lastAckSendNanos = new long[n];
        scratch = new long[n];
        selfSlot = m.voterIndex(g.state.selfId);
        for (int i = 0; i < n; i++) {
            lastAckSendNanos[i] = nowNanos;
        }
        if (selfSlot >= 0) {
            matchIndex[selfSlot] = g.store.persistedIndex();
        }
    }

    /** The leader's own log persisted up to {@code persisted}. */
    void onSelfPersisted(long persisted) {
        if (g.state.isLeader() && selfSlot >= 0) {
            matchIndex[selfSlot] = persisted;
            recompute();
        }
    }

    /** A follower persisted (and matches the leader) up to {@code match}. */
    void onFollowerMatch(int voterSlot, long match) {
        if (match > matchIndex[voterSlot]) {
            matchIndex[voterSlot] = match;
            recompute();
        }
    }

    /** A follower acknowledged a request sent at {@code sendNanos}. */
    void onFollowerAck(int voterSlot, long sendNanos) {
        if (sendNanos - lastAckSendNanos[voterSlot] > 0) {
            lastAckSendNanos[voterSlot] = sendNanos;
        }
    }

    long matchIndexOf(int voterSlot) {
        return matchIndex[voterSlot];
    }

    /** The lowest index some follower still needs (for the tail cache), or Long.MAX_VALUE. */
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
     * True while a majority of voters (this leader counting itself) acknowledged a request sent
     * within the last election timeout: the leader may go on leading.
     */
    boolean hasQuorumContact(long nowNanos, long windowNanos) {
        Members m = g.state.members;
        int ok = 0;
        for (int i = 0; i < lastAckSendNanos.length; i++) {
            if (i == selfSlot || nowNanos - lastAckSendNanos[i] < windowNanos) {
                ok++;
            }
        }
        return ok >= m.quorum();
    }

    private void recompute() {
        long[] s = scratch;
        int n = matchIndex.length;
        System.arraycopy(matchIndex, 0, s, 0, n);
        // insertion sort, descending: groups have a handful of voters
        for (int i = 1; i < n; i++) {
            long v = s[i];
            int j = i - 1;
            while (j >= 0 && s[j] < v) {
                s[j + 1] = s[j];
                j--;
            }
            s[j + 1] = v;
        }
        long candidate = s[g.state.members.quorum() - 1];
        RaftState st = g.state;
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
            g.wakeReplicators();
        }
    }
}
