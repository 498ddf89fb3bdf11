package io.poyang.raft.core;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.NetNotSentException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.ReqContext;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftCommands;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Hands the leadership of a group to a named voter (DESIGN §6):
 * <ol>
 * <li>the leader stops taking new writes — they wait in the leader writer — and stops serving lease
 * reads (the target will be elected without waiting for the lease to run out);</li>
 * <li>it waits until the target has every entry of its log;</li>
 * <li>it sends TIMEOUT_NOW; the target stands at once, without a pre-vote, and its vote requests
 * carry the transfer mark so voters grant them although they hear from a live leader;</li>
 * <li>when the target wins, the old leader sees its term and steps down: the writes held back fail
 * with NOT_LEADER naming the new leader (not applied), and the writes already in the log are
 * answered as their entries are applied (the target has them all). If the target has not won
 * within an election timeout, the old leader resumes: held writes go into the log and the transfer
 * fails with a timeout.</li>
 * </ol>
 * <b>The lease after a failed hand-over.</b> Voters grant the target's vote request although they
 * hear from a live leader; that request may still be on its way (or be retried by the network)
 * after the old leader gave up waiting, so a lease the old leader computed from its followers'
 * acknowledgements would no longer prove that no other leader exists. A leader that sent
 * TIMEOUT_NOW therefore takes no lease again in its term: its lease reads fall back to ReadIndex
 * (a heartbeat round) until a new term. A transfer that failed before TIMEOUT_NOW left (the target
 * did not catch up in time) gives the lease back.
 * <p>
 * So every write in flight during a transfer either completes or fails with NOT_LEADER; none is
 * lost or applied twice. One transfer at a time: a request for the target of the transfer under way
 * waits for that transfer's outcome (an operator's request meeting the {@link PreferredLeaderKeeper}'s,
 * a stopping node's meeting either), one for another target is refused. Dispatcher thread except
 * {@link #transfer} and {@link #transferToSuccessor}.
 */
final class LeaderTransfer {

    private static final PoyangLog log = PoyangLogs.get(LeaderTransfer.class);

    /** TIMEOUT_NOW (replication port): 1 group_id, 2 term, 3 leader_id. */
    static final FieldMessage.Schema REQUEST = new FieldMessage.Schema("TimeoutNowRequest", new int[0], new int[0]);
    /** TIMEOUT_NOW answer: 1 term, 2 accepted. */
    static final FieldMessage.Schema RESPONSE = new FieldMessage.Schema("TimeoutNowResponse", new int[0], new int[0]);

    private final RaftGroup g;
    private final FiberCondition progress;
    /** A transfer is under way: the leader writer holds new writes. */
    private boolean active;
    private int target;
    /** The outcome of the transfer under way (null when none), which a request for its target shares. */
    private CompletableFuture<Void> current;
    /** TIMEOUT_NOW has left for {@link #target} in the current transfer. */
    private boolean timeoutNowSent;
    /**
     * The term in which a TIMEOUT_NOW left that its target did not decline (-1: none): that target
     * may still stand, its vote request arriving late, so the lease stays suspended for the rest of
     * that term, whatever later transfers do.
     */
    private int timeoutNowTerm = -1;

    LeaderTransfer(RaftGroup g) {
        this.g = g;
        this.progress = g.fiberGroup.newCondition("transfer-" + g.state.groupId);
    }

    boolean isActive() {
        return active;
    }

    /** The node a transfer under way hands over to; 0 when none. */
    int target() {
        return active ? target : 0;
    }

    /** This leader told {@code nodeId} to stand and waits for it to win (its vote request is expected). */
    boolean isHandingOverTo(int nodeId) {
        return active && timeoutNowSent && target == nodeId;
    }

    /** A follower persisted more, or the role changed. */
    void onProgress() {
        if (active) {
            progress.signalAll();
        }
    }

    /** A TIMEOUT_NOW that arrived for this node (a follower), handed to the election fiber. */
    static final class TimeoutNow {
        final int term;
        final int leaderId;
        private final ReqContext context;

        TimeoutNow(FieldMessage m, ReqContext context) {
            this.term = m.getInt(2);
            this.leaderId = m.getInt(3);
            this.context = context;
        }

        void answer(int currentTerm, boolean accepted) {
            context.respond(WritePacket.response(RESPONSE.builder().set(1, currentTerm).set(2, accepted).build()));
        }
    }

    /** Transfers the leadership to {@code targetId}; completes when it leads. Any thread. */
    CompletableFuture<Void> transfer(int targetId, long timeoutMillis) {
        TransferFrame frame = new TransferFrame(targetId, timeoutMillis);
        fire(frame);
        return frame.result;
    }

    /**
     * Transfers the leadership to the node {@link SuccessorChoice} names, chosen on the dispatcher
     * when the transfer starts (so no transfer can begin between the choice and this one); completes
     * with that node's id once it leads, or with 0 when this node does not lead or no other voter
     * exists (nothing to hand over). Any thread.
     */
    CompletableFuture<Integer> transferToSuccessor(long timeoutMillis) {
        TransferFrame frame = new TransferFrame(0, timeoutMillis);
        fire(frame);
        return frame.result.thenApply(ignored -> frame.targetId);
    }

    private void fire(TransferFrame frame) {
        if (!g.fiberGroup.fireFiber("transfer-" + g.state.groupId, frame)) {
            frame.result.completeExceptionally(new StoppedException("raft group " + g.state.groupId + " is stopping"));
        }
    }

    private final class TransferFrame extends FiberFrame<Void> {
        /** The node handed to; 0 until the frame starts when the successor is to be chosen. */
        private volatile int targetId;
        private final boolean toSuccessor;
        private final long deadlineNanos;
        private final CompletableFuture<Void> result;
        private long epoch;
        private boolean mine;
        private long sentAtNanos;
        /** {@link #timeoutNowTerm} before this transfer sent its TIMEOUT_NOW (restored if the target declines). */
        private int timeoutNowTermBefore = -1;
        private int term;
        /** The target answered that it will not stand (set on the network thread; the frame polls it). */
        private volatile boolean declined;
        /** Sending TIMEOUT_NOW failed (network thread). */
        private volatile String sendError;
        /** TIMEOUT_NOW never left this node (no connection, or it closed with the request queued). */
        private volatile boolean notSent;
        /** The thread in the send call while it runs: a failure it reports itself means "not sent". */
        private Thread sendCaller;

        /** {@code targetId} 0: the successor, chosen when the frame starts. */
        TransferFrame(int targetId, long timeoutMillis) {
            this.targetId = targetId;
            this.toSuccessor = targetId == 0;
            this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            this.result = new CompletableFuture<>();
        }

        @Override
        public FrameCallResult execute(Object input) {
            RaftState s = g.state;
            if (toSuccessor) {
                targetId = s.isLeader() ? SuccessorChoice.of(g) : 0;
                if (targetId == 0) {
                    result.complete(null);   // nothing to hand over
                    return Fiber.frameReturn();
                }
            }
            if (!s.isLeader() && s.leaderId == targetId && targetId != 0) {
                result.complete(null);   // the target leads already (a retry of a transfer that succeeded)
                return Fiber.frameReturn();
            }
            if (!s.isLeader()) {
                throw new NotLeaderException(s.groupId, s.leaderId, "node " + s.selfId + " is not the leader of raft group "
                        + s.groupId + (s.leaderId != 0 ? "; the leader is node " + s.leaderId : ""));
            }
            if (targetId == s.selfId) {
                result.complete(null);
                return Fiber.frameReturn();
            }
            if (!s.members.isVoter(targetId)) {
                throw new IllegalArgumentException("node " + targetId + " is not a voter of raft group " + s.groupId
                        + " (" + s.members + "); only a voter can lead");
            }
            if (active && target == targetId) {
                // the same hand-over twice (an operator's retry, or a stop meeting the keeper's): one outcome
                current.whenComplete((v, error) -> {
                    if (error == null) {
                        result.complete(null);
                    } else {
                        result.completeExceptionally(error);
                    }
                });
                return Fiber.frameReturn();
            }
            if (active) {
                throw new IllegalStateException("a leader transfer of raft group " + s.groupId + " to node " + target
                        + " is under way; ask again once it has ended");
            }
            active = true;
            mine = true;
            target = targetId;
            current = result;
            timeoutNowSent = false;
            epoch = s.roleEpoch;
            term = s.currentTerm;
            g.leaseReads.suspend();
            log.info("group {}: leader {} hands over to node {}", s.groupId, s.selfId, targetId);
            return waitCaughtUp(null);
        }

        private FrameCallResult waitCaughtUp(Boolean signalled) {
            RaftState s = g.state;
            if (s.roleEpoch != epoch) {
                if (s.leaderId == targetId) {
                    result.complete(null);   // it won by itself meanwhile
                    return Fiber.frameReturn();
                }
                throw new NotLeaderException(s.groupId, s.leaderId, "node " + s.selfId + " lost the leadership of raft"
                        + " group " + s.groupId + " before the hand-over to node " + targetId);
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new PoyangTimeoutException("node " + targetId + " did not catch up with leader " + s.selfId
                        + " of raft group " + s.groupId + " in time; the leader goes on leading");
            }
            if (g.commitManager.matchIndexOf(targetId) < g.store.lastIndex()) {
                Replicator r = g.replicatorOf(targetId);
                if (r != null) {
                    r.wake();
                }
                return progress.await(50, this::waitCaughtUp);
            }
            sentAtNanos = System.nanoTime();
            timeoutNowSent = true;
            timeoutNowTermBefore = timeoutNowTerm;
            timeoutNowTerm = s.currentTerm;
            FieldMessage req = REQUEST.builder().set(1, s.groupId).set(2, s.currentTerm).set(3, s.selfId).build();
            sendCaller = Thread.currentThread();
            g.transport.send(targetId, RaftCommands.TIMEOUT_NOW, req, RESPONSE, g.config.electionTimeoutMillis(),
                    new RpcCallback<FieldMessage>() {
                        @Override
                        public void onSuccess(FieldMessage body) {
                            if (!body.getBool(2)) {
                                declined = true;
                            }
                        }

                        @Override
                        public void onFailure(Throwable error) {
                            sendError = error.toString();
                            // A failure during the send call itself (no address, not connected, stopped), a
                            // request still queued when its connection closed, or one whose deadline passed
                            // before it was sent never reached the target. Any other (a timeout, a connection
                            // lost after the write) may have arrived and started an election: wait the full time.
                            if (sendCaller == Thread.currentThread() || error instanceof NetNotSentException
                                    || error instanceof NetTimeoutException && ((NetTimeoutException) error).neverSent()) {
                                notSent = true;
                            }
                        }
                    });
            sendCaller = null;
            return waitStepDown(null);
        }

        /** Waits until this node has stepped down, or the target refused, or an election timeout passed. */
        private FrameCallResult waitStepDown(Boolean signalled) {
            RaftState s = g.state;
            if (s.roleEpoch != epoch) {
                return waitNewLeader(null);
            }
            if (declined || notSent) {
                // the target started nothing: no vote request of it is on its way, the lease may come back
                // (unless an earlier transfer of this term told another node to stand)
                timeoutNowSent = false;
                timeoutNowTerm = timeoutNowTermBefore;
                if (notSent) {
                    throw new PoyangTimeoutException("TIMEOUT_NOW could not be sent to node " + targetId + " ("
                            + sendError + "); leader " + s.selfId + " of raft group " + s.groupId + " goes on leading");
                }
                throw new PoyangTimeoutException("node " + targetId + " declined to take over raft group " + s.groupId
                        + " (it no longer follows leader " + s.selfId + " in term " + term + ", or it cannot stand);"
                        + " leader " + s.selfId + " goes on leading");
            }
            if (System.nanoTime() - sentAtNanos > electionTimeoutNanos()) {
                String err = sendError;
                throw new PoyangTimeoutException("node " + targetId + " did not win an election within "
                        + g.config.electionTimeoutMillis() + " ms of the hand-over" + (err != null
                        ? " (sending it TIMEOUT_NOW failed: " + err + ")" : "") + "; leader " + s.selfId
                        + " of raft group " + s.groupId + " goes on leading");
            }
            return progress.await(50, this::waitStepDown);
        }

        /** Stepped down (the target's vote request came, or its term): done once this node learns who leads. */
        private FrameCallResult waitNewLeader(Boolean signalled) {
            RaftState s = g.state;
            if (s.leaderId == targetId) {
                log.info("group {}: leadership handed from node {} to node {} (term {})", s.groupId, s.selfId,
                        targetId, s.currentTerm);
                result.complete(null);
                return Fiber.frameReturn();
            }
            if (s.leaderId != 0) {
                throw new NotLeaderException(s.groupId, s.leaderId, "node " + s.leaderId + ", not node " + targetId
                        + ", won the election that followed the hand-over of raft group " + s.groupId);
            }
            if (System.nanoTime() - sentAtNanos > 2 * electionTimeoutNanos()) {
                throw new PoyangTimeoutException("leader " + s.selfId + " of raft group " + s.groupId + " stepped down"
                        + " for node " + targetId + ", but no leader is known " + 2 * g.config.electionTimeoutMillis()
                        + " ms after the hand-over; an election is under way, ask again who leads");
            }
            return progress.await(50, this::waitNewLeader);
        }

        private long electionTimeoutNanos() {
            return TimeUnit.MILLISECONDS.toNanos(g.config.electionTimeoutMillis());
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            result.completeExceptionally(ex);
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult doFinally() {
            if (mine) {
                active = false;
                current = null;
                if (!timeoutNowSent && timeoutNowTerm != g.state.currentTerm) {
                    // no node was told to stand in this term: no vote request for it can be granted
                    g.leaseReads.resume();
                }
                // held writes go into the log if this node still leads, else they fail NOT_LEADER
                g.leaderWriter.releaseHeld();
            }
            return Fiber.frameReturn();
        }

        @Override
        public String toString() {
            return "LeaderTransfer[group " + g.state.groupId + " -> " + targetId + "]";
        }
    }
}
