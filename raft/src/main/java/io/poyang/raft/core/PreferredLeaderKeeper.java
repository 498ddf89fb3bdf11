package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a group's leadership on the node an operator prefers, so a placement of leaders (several
 * groups on one set of nodes, each led where it serves best) survives failovers: a one-shot
 * {@link LeaderTransfer} is undone by the next election, this is not.
 *
 * <p>About once per election timeout the leader checks, and hands the leadership over with the
 * existing {@link LeaderTransfer} when all of these hold:
 * <ul>
 * <li>a preferred leader is set (0: none) and it is not this node;</li>
 * <li>it is a voter of the configuration in force, which is not joint, and no membership change
 * is in flight (one at a time: a hand-over in the middle of a change would only make it retry);</li>
 * <li>no transfer is under way (an operator's, or this keeper's own);</li>
 * <li>this node has led for at least one election timeout (a fresh leader first settles: its
 * no-op commits and its followers are probed);</li>
 * <li>the preferred node is caught up — its persisted index within one AppendEntries request
 * ({@link RaftConfig#maxAppendItems()}) of the leader's last index; the transfer itself then waits
 * for the rest, holding new writes for that short while — and answered within the last election
 * timeout.</li>
 * </ul>
 * A transfer that fails backs off, doubling from one election timeout to {@value #MAX_BACKOFF_MILLIS}
 * ms, so a preferred node that is sick (it declines, or cannot win) is not asked again and again,
 * each attempt holding the group's writes; the first failure of a run is logged, the next ones
 * only once the run ends. A preferred node that is not a voter is no error (the membership may be
 * about to change): the keeper does nothing and says so once.
 *
 * <p>The check runs on its own daemon fiber, never on the write path. The preferred id is set from
 * any thread ({@link #prefer}); everything else is the dispatcher thread's.
 */
final class PreferredLeaderKeeper {

    private static final PoyangLog log = PoyangLogs.get(PreferredLeaderKeeper.class);
    /** The longest pause between two hand-overs that failed. */
    static final long MAX_BACKOFF_MILLIS = 60_000;

    private final RaftGroup g;
    /** Wakes the check early when the preferred leader changes. */
    private final FiberCondition changed;
    /** The preferred leader's node id; 0: none. Written by any thread. */
    private volatile int preferredId;

    // dispatcher thread
    /** The preference the last check acted on: a new one starts with no backoff and no idle notice. */
    private int seenPreferredId;
    /** The hand-over this keeper started and has not yet seen end, or null. */
    private CompletableFuture<Void> inFlight;
    /** The pauses after failed hand-overs to {@link #seenPreferredId}. */
    private final DoublingBackoff backoff;
    /** Why the keeper idles, as last logged (logged again only when it changes); null when it acts. */
    private String idleReasonLogged;
    /** Hand-overs this keeper started (a metric). */
    private volatile long transfersStarted;

    PreferredLeaderKeeper(RaftGroup g) {
        this.g = g;
        this.changed = g.fiberGroup.newCondition("preferred-leader-" + g.state.groupId);
        this.backoff = new DoublingBackoff(g.config.electionTimeoutMillis(),
                Math.max(MAX_BACKOFF_MILLIS, g.config.electionTimeoutMillis()));
    }

    int preferredId() {
        return preferredId;
    }

    long transfersStarted() {
        return transfersStarted;
    }

    /** Sets the preferred leader (0: none). Any thread; {@code wake}: the group runs, check soon. */
    void prefer(int nodeId, boolean wake) {
        preferredId = nodeId;
        if (wake) {
            changed.fireSignal();
        }
    }

    /** The fiber that checks once per election timeout, until the group stops. */
    FiberFrame<Void> newTicker() {
        return new Ticker();
    }

    private final class Ticker extends FiberFrame<Void> {
        @Override
        public FrameCallResult execute(Object input) {
            return changed.await(g.config.electionTimeoutMillis(), this::tick);
        }

        private FrameCallResult tick(Boolean signalled) {
            if (g.state.stopping) {
                return Fiber.frameReturn();
            }
            check();
            return execute(null);
        }
    }

    /** One check: learn how the last hand-over ended, then start one if the rule says so. */
    void check() {
        long now = g.nowNanos();
        noteOutcome(now);
        int target = preferredId;
        if (target != seenPreferredId) {
            seenPreferredId = target;
            backoff.reset();
            idleReasonLogged = null;
        }
        RaftState s = g.state;
        if (target == 0 || target == s.selfId || !s.isLeader() || s.failure != null || inFlight != null) {
            return;
        }
        Members m = s.members;
        if (m.isJoint() || g.membership.changeInFlight()) {
            return;
        }
        if (!m.isVoter(target)) {
            idle("node " + target + " is not a voter of the configuration " + m + "; node " + s.selfId
                    + " goes on leading until it is one, or another preferred leader is set");
            return;
        }
        idleReasonLogged = null;
        long electionTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(g.config.electionTimeoutMillis());
        if (g.transfer.isActive() || now - s.leaderSinceNanos < electionTimeoutNanos || !backoff.mayTry(now)) {
            return;
        }
        long match = g.commitManager.matchIndexOf(target);
        boolean caughtUp = match > 0 && g.store.lastIndex() - match <= g.config.maxAppendItems();
        boolean answered = g.commitManager.answeredWithin(target, now, electionTimeoutNanos);
        if (!caughtUp || !answered) {
            return;
        }
        log.info("group {}: leader {} hands the leadership to its preferred leader, node {} (term {})", s.groupId,
                s.selfId, target, s.currentTerm);
        transfersStarted++;
        inFlight = g.transfer.transfer(target, g.config.electionTimeoutMillis());
    }

    private void idle(String reason) {
        if (!reason.equals(idleReasonLogged)) {
            idleReasonLogged = reason;
            log.info("group {}: preferred leader not applied: {}", g.state.groupId, reason);
        }
    }

    /** Books the end of the keeper's hand-over, if it ended: a failure backs off, a success resets. */
    private void noteOutcome(long now) {
        CompletableFuture<Void> f = inFlight;
        if (f == null || !f.isDone()) {
            return;
        }
        inFlight = null;
        Throwable error = errorOf(f);
        int target = seenPreferredId;
        if (error == null) {
            int failed = backoff.onSuccess();
            if (failed > 0) {
                log.info("group {}: the leadership went to preferred node {} after {} failed attempts",
                        g.state.groupId, target, failed);
            }
            return;
        }
        int failuresInRow = backoff.onFailure(now);
        if (failuresInRow == 1) {
            log.warn("group {}: handing the leadership to preferred node {} failed ({}); trying again after pauses"
                    + " doubling from {} ms up to {} ms, and logging again once it succeeds", g.state.groupId, target,
                    error.getMessage(), backoff.pauseMillis(), MAX_BACKOFF_MILLIS);
        } else {
            log.debug("group {}: hand-over to preferred node {} failed again ({} in a row; next try in {} ms): {}",
                    g.state.groupId, target, failuresInRow, backoff.pauseMillis(), error.getMessage());
        }
    }

    private static Throwable errorOf(CompletableFuture<Void> f) {
        try {
            f.getNow(null);
            return null;
        } catch (CompletionException e) {
            return e.getCause() != null ? e.getCause() : e;
        } catch (java.util.concurrent.CancellationException e) {
            return e;
        }
    }
}
