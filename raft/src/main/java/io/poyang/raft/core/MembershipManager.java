package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.sm.SnapshotMeta;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * Membership changes by joint consensus (DESIGN §6), and the configuration in force.
 *
 * <p><b>Entries.</b> A configuration travels as a log entry of type config change whose body is
 * a MembersConfig message. It takes effect on a node as soon as the entry is in its log —
 * appended, not committed — as raft requires (a node decides with the newest configuration it
 * has); when a follower's tail is truncated the configuration goes back with it
 * ({@link ConfigHistory}). Snapshots record the configuration as of their index, and a restarting
 * node takes the snapshot's configuration, then the config entries of its log after the snapshot.
 *
 * <p><b>A change</b> is three operations, each idempotent and safe to retry:
 * <ol>
 * <li><b>prepare</b>(voters, observers): nodes that are to vote and do not yet replicate are first
 * added as observers (a change that moves no vote needs no joint phase) and caught up, so the
 * joint phase does not wait on them; then the joint configuration (old voters → new voters) is
 * appended. It returns once that entry committed — decisions now need a majority of the old and
 * of the new voters — and every new voter has it.</li>
 * <li><b>commit</b>: appends the new configuration alone; done once it committed. A leader that
 * is no longer a voter steps down then.</li>
 * <li><b>abort</b>: appends the configuration from before the prepare; done once it committed.</li>
 * </ol>
 * A retried prepare of the same target, a retried commit, an abort with nothing prepared all
 * succeed without a new entry, once the configuration in force has committed (a retry may find
 * its entry in the log but not yet committed); a retried prepare still catches up every node that
 * is to vote and does not yet, whether a first attempt staged it or it was an observer already. A
 * prepare while another change is prepared, or a commit of a target other than the prepared one,
 * are refused with the configuration in the message. A
 * leader that crashes mid-change leaves either the old configuration or the joint one in the new
 * leader's log; the operator commits or aborts from there.
 *
 * <p>Servers refuse votes from nodes that are not voters of their configuration. Appends are judged
 * by term alone (a request of the current term comes from the one leader of that term, listed in
 * this node's configuration or not). Observers get the log like
 * followers but never stand for election and never count toward a majority; promoting one is a
 * change whose target lists it among the voters.
 *
 * <p>Dispatcher thread, except the operations' entry points.
 */
final class MembershipManager {

    private static final PoyangLog log = PoyangLogs.get(MembershipManager.class);
    /** An observer is caught up when it is within this many entries of the leader's last index. */
    private static final long CATCH_UP_MARGIN = 1000;

    private final RaftGroup g;
    final ConfigHistory history = new ConfigHistory();
    /** Signalled when a follower's match index, the commit index or the role moves: operations wait on it. */
    private final FiberCondition progress;

    MembershipManager(RaftGroup g) {
        this.g = g;
        this.progress = g.fiberGroup.newCondition("membership-" + g.state.groupId);
    }

    // ---------------------------------------------------------------- the configuration in force

    /** At start: the configuration of the snapshot (or the initial one) in force at {@code index}. */
    void reset(long index, Members base) {
        history.reset(index, base);
        apply(base);
    }

    /** A config-change entry is now in this node's log at {@code index}. */
    void onConfigAppended(long index, Members m) {
        history.add(index, m);
        if (!m.equals(g.state.members)) {
            log.info("group {} on node {}: configuration {} (entry {})", g.state.groupId, g.state.selfId, m, index);
        }
        apply(m);
    }

    /** The log lost {@code index} and everything after it. */
    void onTruncated(long index) {
        Members m = history.truncateFrom(index);
        if (!m.equals(g.state.members)) {
            log.info("group {} on node {}: configuration back to {} (the log was cut at {})", g.state.groupId,
                    g.state.selfId, m, index);
            apply(m);
        }
    }

    /** A snapshot from the leader replaced the log. */
    void onSnapshotReset(SnapshotMeta meta) {
        reset(meta.lastIndex(), membersOf(meta));
    }

    /** This node wrote a snapshot at {@code index}: the configurations before the one in force there are not needed. */
    void onSnapshotWritten(long index) {
        history.compactTo(index);
    }

    /** The configuration in force at {@code index} (for a snapshot taken there). */
    Members configAt(long index) {
        return history.at(index);
    }

    private void apply(Members m) {
        RaftState s = g.state;
        s.members = m;
        if (s.isLeader()) {
            long now = g.nowNanos();
            g.commitManager.onMembersChanged(m, now);
            g.leaseReads.onMembersChanged(m);
            g.reads.onMembersChanged(m);
            g.syncReplicators(g.store.lastIndex() + 1);
        }
        g.publish();
        progress.signalAll();
    }

    /** Leader: the commit index moved. A leader that the committed configuration leaves out steps down. */
    void onLeaderCommit(long commit) {
        RaftState s = g.state;
        Members m = s.members;
        if (!m.isJoint() && history.latestIndex() <= commit && !m.isVoter(s.selfId) && s.isLeader()) {
            log.info("group {}: node {} is not a voter of the committed configuration {}; it steps down", s.groupId,
                    s.selfId, m);
            g.roleManager.becomeFollower(s.currentTerm, 0);
        }
        progress.signalAll();
    }

    /**
     * Whether the configuration is moving: an operation (prepare, commit, abort) runs, the
     * configuration is joint, or its newest entry has not committed yet.
     */
    boolean changeInFlight() {
        RaftState s = g.state;
        return running != null || s.members.isJoint() || history.latestIndex() > s.commitIndex;
    }

    /** A follower persisted more, or the role changed: wake waiting operations. */
    void onProgress() {
        progress.signalAll();
    }

    static Members membersOf(SnapshotMeta meta) {
        return new Members(meta.members(), meta.newVoters(), meta.observers(), meta.oldObservers());
    }

    static SnapshotMeta meta(long index, int term, Members m, int format) {
        return new SnapshotMeta(index, term, m.voters(), m.newVoters(), m.observers(), m.oldObservers(), format);
    }

    // ---------------------------------------------------------------- operations (any thread)

    /** Prepares a change to {@code voters} and {@code observers}; completes with the joint configuration. */
    CompletableFuture<Members> prepare(int[] voters, int[] observers, long timeoutMillis) {
        return start("prepare", timeoutMillis, new Op() {
            Members target;
            Members joint;
            int phase;
            /** The nodes this prepare added as observers (null: none). */
            int[] stagedNewcomers;

            @Override
            FrameCallResult step(OpFrame f) {
                Members cur = g.state.members;
                if (target == null) {
                    target = new Members(voters, observers);
                }
                switch (phase) {
                    case 0:
                        if (cur.isJoint()) {
                            if (!cur.committed().equals(target)) {
                                throw new IllegalStateException("raft group " + g.state.groupId + " already has a"
                                        + " prepared membership change (" + cur + "); commit or abort it first");
                            }
                            joint = cur;
                            phase = 3;
                            return f.waitJoint();
                        }
                        if (cur.equals(target)) {
                            return f.doneOnceCommitted(cur);   // a retry after its entry went in
                        }
                        // Every node that is to vote and does not yet must be caught up before the
                        // joint entry goes in, or a new majority that needs it could commit nothing,
                        // not even an abort. That covers observers being promoted, and the nodes a
                        // first attempt of this prepare staged as observers before it timed out.
                        int[] toCatchUp = those(target.voters(), id -> !cur.isVoter(id));
                        if (toCatchUp.length > 0) {
                            f.startCatchUp(toCatchUp);
                        }
                        int[] newcomers = those(target.voters(), id -> !cur.contains(id));
                        phase = 1;
                        if (newcomers.length > 0) {
                            // replicate to them first, as observers: the joint phase must not wait on them
                            Members staged = new Members(cur.voters(), union(cur.observers(), newcomers));
                            stagedNewcomers = newcomers;
                            return f.append(staged);
                        }
                        return step(f);
                    case 1:
                        if (f.catchUp != null && !f.caughtUp()) {
                            return f.waitProgress();
                        }
                        phase = 2;
                        Members now = g.state.members;
                        // The configuration before this prepare is what an abort returns to. (Nodes that
                        // an earlier, timed-out attempt staged are observers of it by now, and stay.)
                        int[] before = stagedNewcomers == null ? now.observers() : minus(now.observers(), stagedNewcomers);
                        joint = new Members(now.voters(), target.voters(), target.observers(), before);
                        return f.append(joint);
                    case 2:
                        phase = 3;
                        return f.waitJoint();
                    default:
                        return f.done(joint);
                }
            }

            @Override
            Members jointTarget() {
                return joint;
            }
        });
    }

    /** Commits the prepared change to {@code voters} and {@code observers}; completes with the new configuration. */
    CompletableFuture<Members> commit(int[] voters, int[] observers, long timeoutMillis) {
        return start("commit", timeoutMillis, new Op() {
            boolean appended;

            @Override
            FrameCallResult step(OpFrame f) {
                Members target = new Members(voters, observers);
                Members cur = g.state.members;
                if (appended) {
                    return f.done(cur);
                }
                if (!cur.isJoint()) {
                    if (cur.equals(target)) {
                        return f.doneOnceCommitted(cur);   // a retry: its entry is in the log, maybe not committed
                    }
                    throw new IllegalStateException("raft group " + g.state.groupId + " has no prepared membership"
                            + " change to commit (configuration " + cur + ")");
                }
                if (!cur.committed().equals(target)) {
                    throw new IllegalStateException("the prepared membership change of raft group " + g.state.groupId
                            + " leads to " + cur.committed() + ", not " + target);
                }
                appended = true;
                return f.append(cur.committed());
            }
        });
    }

    /** Aborts the prepared change; completes with the configuration from before it. */
    CompletableFuture<Members> abort(long timeoutMillis) {
        return start("abort", timeoutMillis, new Op() {
            boolean appended;

            @Override
            FrameCallResult step(OpFrame f) {
                Members cur = g.state.members;
                if (appended) {
                    return f.done(cur);
                }
                if (!cur.isJoint()) {
                    return f.doneOnceCommitted(cur);   // a retry, or nothing prepared
                }
                appended = true;
                return f.append(cur.aborted());
            }
        });
    }

    /** The ids of {@code ids} that {@code keep} accepts, in order. */
    private static int[] those(int[] ids, IntPredicate keep) {
        int[] r = new int[ids.length];
        int n = 0;
        for (int id : ids) {
            if (keep.test(id)) {
                r[n++] = id;
            }
        }
        return Arrays.copyOf(r, n);
    }

    private static int[] union(int[] a, int[] b) {
        int[] r = Arrays.copyOf(a, a.length + b.length);
        int n = a.length;
        for (int x : b) {
            boolean has = false;
            for (int y : a) {
                has |= x == y;
            }
            if (!has) {
                r[n++] = x;
            }
        }
        return Arrays.copyOf(r, n);
    }

    private static int[] minus(int[] a, int[] b) {
        int[] r = new int[a.length];
        int n = 0;
        for (int x : a) {
            boolean drop = false;
            for (int y : b) {
                drop |= x == y;
            }
            if (!drop) {
                r[n++] = x;
            }
        }
        return Arrays.copyOf(r, n);
    }

    /** One operation's logic: {@link #step} is called again after each append or wait. */
    private abstract static class Op {
        abstract FrameCallResult step(OpFrame f);

        /** The joint configuration a prepare waits on. */
        Members jointTarget() {
            return null;
        }
    }

    private CompletableFuture<Members> start(String name, long timeoutMillis, Op op) {
        CompletableFuture<Members> result = new CompletableFuture<>();
        OpFrame frame = new OpFrame(name, op, result, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        if (!g.fiberGroup.fireFiber("membership-" + name + "-" + g.state.groupId, frame)) {
            result.completeExceptionally(new StoppedException("raft group " + g.state.groupId + " is stopping"));
        }
        return result;
    }

    /** The membership operation in progress on this node, if any (dispatcher thread). */
    private OpFrame running;

    /** Runs an operation on the group's dispatcher: appends entries through the leader writer and waits for them. */
    private final class OpFrame extends FiberFrame<Void> {
        private final String name;
        private final Op op;
        private final CompletableFuture<Members> result;
        private final long deadlineNanos;
        private long epoch;
        int[] catchUp;
        private long catchUpTo;
        /** The configuration entry {@link #append} waits to append. */
        private Members waitingToAppend;

        OpFrame(String name, Op op, CompletableFuture<Members> result, long deadlineNanos) {
            this.name = name;
            this.op = op;
            this.result = result;
            this.deadlineNanos = deadlineNanos;
        }

        @Override
        public FrameCallResult execute(Object input) {
            RaftState s = g.state;
            if (!s.isLeader() || s.stopping) {
                throw new NotLeaderException(s.groupId, s.leaderId, "node " + s.selfId + " is not the leader of raft group "
                        + s.groupId + (s.leaderId != 0 ? "; the leader is node " + s.leaderId : ""));
            }
            epoch = s.roleEpoch;
            return takeTurn(null);
        }

        /**
         * One operation at a time: each decides its entry from the configuration in force, and a
         * second one deciding before the first's entry is in the log would append a conflicting
         * entry (a commit and an abort of the same prepared change both appended). A later one
         * waits, then decides from what the first left.
         */
        private FrameCallResult takeTurn(Boolean signalled) {
            if (running != null) {
                if (signalled != null) {
                    checkStillLeader();
                }
                return progress.await(50, this::takeTurn);
            }
            checkStillLeader();
            running = this;
            return op.step(this);
        }

        @Override
        protected FrameCallResult doFinally() {
            if (running == this) {
                running = null;
                progress.signalAll();
            }
            return Fiber.frameReturn();
        }

        private void checkStillLeader() {
            RaftState s = g.state;
            if (s.roleEpoch != epoch || !s.isLeader()) {
                throw new NotLeaderException(s.groupId, s.leaderId, "node " + s.selfId + " lost the leadership of raft"
                        + " group " + s.groupId + " during the membership " + name + "; retry it on the new leader"
                        + (s.leaderId != 0 ? " (node " + s.leaderId + ")" : ""));
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new PoyangTimeoutException("the membership " + name + " of raft group " + s.groupId + " did not"
                        + " finish in time (configuration now " + s.members + "); it is safe to retry");
            }
        }

        /**
         * Appends a configuration entry and resumes once it is applied (committed). Joint consensus
         * allows one only after the configuration in force has committed, and only once this leader
         * has committed an entry of its own term: a leader elected under a configuration entry that
         * never committed (a crash right after it was appended) would otherwise replace it while
         * nodes that never saw it elect a leader of their own under the configuration before it.
         */
        FrameCallResult append(Members m) {
            RaftState s = g.state;
            if (s.commitIndex < history.latestIndex() || g.store.termOf(s.commitIndex) != s.currentTerm) {
                waitingToAppend = m;
                return progress.await(50, this::appendWhenCommitted);
            }
            CompletableFuture<Encodable> applied = new CompletableFuture<>();
            g.offerInternalWrite(WriteTask.config(m, deadlineNanos, applied));
            FiberFuture<Object> ff = g.fiberGroup.newFuture("membership-entry");
            applied.whenComplete((v, e) -> {
                if (e != null) {
                    ff.fireCompleteExceptionally(e);
                } else {
                    ff.fireComplete(null);
                }
            });
            if (catchUp != null) {
                catchUpTo = g.store.lastIndex() + 1;
            }
            return ff.await(this::afterAppend);
        }

        private FrameCallResult appendWhenCommitted(Boolean signalled) {
            checkStillLeader();
            return append(waitingToAppend);
        }

        private FrameCallResult afterAppend(Object v) {
            // the entry committed: its effect stands even if this node stepped down because of it
            return op.step(this);
        }

        /**
         * The nodes of {@code ids} must hold at least this leader's log as it is now (and a staged
         * entry appended next) and be within the margin of its end, before the joint entry goes in.
         */
        void startCatchUp(int[] ids) {
            catchUp = ids;
            catchUpTo = g.store.lastIndex();
        }

        /** True when every node being caught up has what it must hold and is within the margin of the leader's log. */
        boolean caughtUp() {
            long last = g.store.lastIndex();
            for (int id : catchUp) {
                long m = g.commitManager.matchIndexOf(id);
                if (m < catchUpTo || m + CATCH_UP_MARGIN < last) {
                    return false;
                }
            }
            return true;
        }

        FrameCallResult waitProgress() {
            return progress.await(50, this::afterWait);
        }

        private FrameCallResult afterWait(Boolean signalled) {
            checkStillLeader();
            return op.step(this);
        }

        /** Waits until the joint entry committed and every new voter has it. */
        FrameCallResult waitJoint() {
            Members joint = op.jointTarget();
            long idx = g.membership.history.latestIndex();
            if (g.state.commitIndex >= idx) {
                boolean all = true;
                for (int id : joint.newVoters()) {
                    if (id != g.state.selfId && g.commitManager.matchIndexOf(id) < idx) {
                        all = false;
                    }
                }
                if (all) {
                    return op.step(this);
                }
            }
            return progress.await(50, this::afterJointWait);
        }

        private FrameCallResult afterJointWait(Boolean signalled) {
            checkStillLeader();
            if (!g.state.members.equals(op.jointTarget())) {
                throw new IllegalStateException("the configuration of raft group " + g.state.groupId + " changed to "
                        + g.state.members + " while the prepare waited");
            }
            return waitJoint();
        }

        FrameCallResult done(Members m) {
            result.complete(m);
            return Fiber.frameReturn();
        }

        /**
         * Completes with {@code m}, the configuration in force, once it is committed: an operation
         * retried after its entry went into the log (a timeout, or a new leader that has the entry)
         * must not answer before that entry commits. An operator who took the answer as done could
         * delete a removed node's data, which the configuration before it would still need if a crash
         * brought it back.
         */
        FrameCallResult doneOnceCommitted(Members m) {
            RaftState s = g.state;
            if (s.commitIndex >= history.latestIndex() && g.store.termOf(s.commitIndex) == s.currentTerm) {
                return done(m);
            }
            return progress.await(50, signalled -> {
                checkStillLeader();
                if (!g.state.members.equals(m)) {
                    throw new IllegalStateException("the configuration of raft group " + g.state.groupId + " changed to "
                            + g.state.members + " while the membership " + name + " waited for " + m + " to commit");
                }
                return doneOnceCommitted(m);
            });
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            result.completeExceptionally(ex);
            return Fiber.frameReturn();
        }

        @Override
        public String toString() {
            return "MembershipOp[" + name + ", group " + g.state.groupId + "]";
        }
    }
}
