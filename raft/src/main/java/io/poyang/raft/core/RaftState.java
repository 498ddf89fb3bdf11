package io.poyang.raft.core;

import io.poyang.raft.client.RaftRole;

/**
 * The state of one raft group on this node: term, vote, role, leader, commit and apply progress,
 * members. Touched only on the group's dispatcher thread; what other threads may read is copied
 * into {@link RaftGroup}'s published fields by {@link RaftGroup#publish()}.
 */
final class RaftState {

    final int groupId;
    final int selfId;
    Members members;

    int currentTerm;
    /** The candidate voted for in {@link #currentTerm}; 0: none. */
    int votedFor;
    RaftRole role = RaftRole.FOLLOWER;
    /** The leader of {@link #currentTerm} as far as this node knows; 0: none. */
    int leaderId;

    long commitIndex;
    long lastApplied;
    int lastAppliedTerm;

    /** Changes with every role or term change; fibers that belong to one role compare it after resuming. */
    long roleEpoch;
    /** When this node last heard from the leader of its term (AppendEntries or InstallSnapshot), nanoTime scale. */
    long lastLeaderContactNanos;
    /** When this node became leader (the lease grace starts there). */
    long leaderSinceNanos;
    /** The wall clock (ms since the epoch) when this node last became leader: the base of {@link RaftGroup#leaderClockMillis}. */
    long leaderSinceWallMillis;

    /** The follower is truncating its log or installing a snapshot: no election starts meanwhile. */
    boolean logBusy;
    /** The group is stopping: fibers finish. */
    boolean stopping;
    /** A fatal error (state machine or log failure): the group takes part in nothing until restarted. */
    Throwable failure;

    RaftState(int groupId, int selfId, Members members) {
        this.groupId = groupId;
        this.selfId = selfId;
        this.members = members;
    }

    boolean isLeader() {
        return role == RaftRole.LEADER;
    }

    @Override
    public String toString() {
        return "group " + groupId + " on node " + selfId + ": " + role + " of term " + currentTerm + ", leader "
                + leaderId + ", voted for " + votedFor + ", commit " + commitIndex + ", applied " + lastApplied;
    }
}
