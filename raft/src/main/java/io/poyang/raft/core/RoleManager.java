package io.poyang.raft.core;

import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.client.RaftRole;

/**
 * The role changes of a group — follower, candidate, leader — and what each starts or stops: a
 * new leader resets the commit bookkeeping, starts one replicator per follower and has the leader
 * writer append its no-op entry; a leader that steps down lets its replicators end. Each change
 * moves {@link RaftState#roleEpoch}, which fibers of the old role check after resuming. Term and
 * vote changes are made in memory here; callers make them durable ({@link StatusSaver}) before
 * anything depending on them leaves the node. Dispatcher thread.
 */
final class RoleManager {

    private static final PoyangLog log = PoyangLogs.get(RoleManager.class);

    private final RaftGroup g;

    RoleManager(RaftGroup g) {
        this.g = g;
    }

    /** Becomes (or stays) a follower in {@code term} (≥ the current one) of {@code leaderId} (0: unknown). */
    void becomeFollower(int term, int leaderId) {
        RaftState s = g.state;
        if (term < s.currentTerm) {
            ImpossibleStates.report("group {}: asked to follow term {} while in term {}", s.groupId, term, s.currentTerm);
            return;
        }
        boolean wasLeader = s.isLeader();
        boolean changed = false;
        if (term > s.currentTerm) {
            s.currentTerm = term;
            s.votedFor = 0;
            changed = true;
        }
        if (s.role != RaftRole.FOLLOWER || s.leaderId != leaderId) {
            changed = true;
        }
        if (!changed) {
            return;
        }
        s.role = RaftRole.FOLLOWER;
        s.leaderId = leaderId;
        s.roleEpoch++;
        if (wasLeader) {
            log.info("group {}: node {} is no longer the leader (term {})", s.groupId, s.selfId, s.currentTerm);
            g.onLeadershipLost();
        } else if (leaderId != 0) {
            log.info("group {}: node {} follows leader {} in term {}", s.groupId, s.selfId, leaderId, s.currentTerm);
        }
        g.publish();
        g.transfer.onProgress();   // a leader that handed over waits to learn who leads
        tellStateMachine();
    }

    /** Stands for election: the next term, a vote for itself. */
    void becomeCandidate() {
        RaftState s = g.state;
        boolean wasLeader = s.isLeader();
        s.currentTerm++;
        s.votedFor = s.selfId;
        s.role = RaftRole.CANDIDATE;
        s.leaderId = 0;
        s.roleEpoch++;
        if (wasLeader) {
            g.onLeadershipLost();
        }
        g.publish();
        tellStateMachine();
    }

    /** Won the election of the current term. */
    void becomeLeader() {
        RaftState s = g.state;
        s.role = RaftRole.LEADER;
        s.leaderId = s.selfId;
        s.roleEpoch++;
        long now = g.nowNanos();
        s.leaderSinceNanos = now;
        s.leaderSinceWallMillis = g.dispatcher.timestamp().wallClockMillis();
        g.applyManager.onBecomeLeader();
        tellStateMachine();   // before the no-op and anything of this term is applied
        g.commitManager.resetForLeader(now);
        g.leaseReads.resetForLeader();
        g.reads.onBecomeLeader();
        log.info("group {}: node {} is the leader of term {} (log ends at {}, commit {})", s.groupId, s.selfId,
                s.currentTerm, g.store.lastIndex(), s.commitIndex);
        g.startReplicators();
        g.leaderWriter.requestNoop(s.currentTerm);
        g.publish();
        g.membership.onProgress();
    }

    /**
     * The group is stopping on this node (the node stops, or the group is restarted or removed on a
     * running node): whatever role it had ends here, and the state machine is told so, last, with
     * {@link RaftRole#NONE}. A leader's state machine would otherwise never learn that its
     * leader-only work (timers, clients it serves as the leader) has to end: a stop changes no
     * role, it only ends the fibers.
     */
    void onStop() {
        RaftState s = g.state;
        tellStateMachine(RaftRole.NONE, s.currentTerm, 0);
    }

    private void tellStateMachine() {
        RaftState s = g.state;
        tellStateMachine(s.role, s.currentTerm, s.leaderId);
    }

    private void tellStateMachine(RaftRole role, int term, int leaderId) {
        try {
            g.sm.onRoleChange(role, term, leaderId);
        } catch (Throwable e) {
            log.warn("group {}: the state machine's onRoleChange failed", g.state.groupId, e);
        }
    }
}
