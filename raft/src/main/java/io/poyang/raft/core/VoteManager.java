package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.store.LogStore;

import java.util.ArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Elections of one group, as one fiber: the election timer, pre-votes and votes this node asks
 * for, and the answers to other nodes' requests.
 *
 * <ul>
 * <li>A follower that has not heard from a leader for its election timeout (random, between one and
 * two {@code electionTimeoutMillis}, drawn again each round) first asks for a <b>pre-vote</b>: would
 * the others vote for it in the next term? Only with a majority of yeses does it increase its term
 * and ask for real votes, so a node cut off from the rest does not inflate its term and disturb
 * the group when it comes back.</li>
 * <li>A node that heard from a live leader within the election timeout refuses pre-votes and votes
 * (without even taking the candidate's newer term), and so does a leader that a majority follows.</li>
 * <li>The term and the vote are made durable ({@link StatusSaver}) before a vote request leaves and
 * before a vote is granted.</li>
 * <li>A leader that has not heard from a majority for an election timeout steps down.</li>
 * </ul>
 */
final class VoteManager extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(VoteManager.class);

    private final RaftGroup g;
    private final FiberChannel<Object> inbox;
    private final ArrayList<Object> batch = new ArrayList<>();
    private int cursor;
    private final long electionTimeoutNanos;
    private final long heartbeatNanos;
    private final FrameCall<Void> afterTake = this::afterTake;

    /** Start of the current wait for a leader (or of the last round). */
    private long electionStartNanos;
    /** The random timeout of the current wait. */
    private long electionTimeoutThisRound;
    private long round;
    private boolean roundIsPreVote;
    /** The current round was started by the leader's TimeoutNow (a leader transfer). */
    private boolean roundIsTransfer;
    private int roundTerm;
    private long[] granted = new long[0];
    private long[] scratch = new long[0];
    private Members roundMembers;
    /** Until then this node grants no vote: it may have acknowledged a leader whose lease is still running just before it restarted. */
    private long quietUntilNanos;

    /** The vote request being answered across a status save. */
    private VoteRequest answering;
    private boolean answeringGrant;

    VoteManager(RaftGroup g, FiberChannel<Object> inbox) {
        this.g = g;
        this.inbox = inbox;
        this.electionTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(g.config.electionTimeoutMillis());
        this.heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(g.config.heartbeatIntervalMillis());
    }

    @Override
    public FrameCallResult execute(Object input) {
        restartElectionTimer(g.nowNanos());
        quietUntilNanos = g.nowNanos() + electionTimeoutNanos;
        return next(null);
    }

    private void restartElectionTimer(long now) {
        electionStartNanos = now;
        electionTimeoutThisRound = electionTimeoutNanos + ThreadLocalRandom.current().nextLong(electionTimeoutNanos);
    }

    private FrameCallResult afterTake(Void v) {
        cursor = 0;
        return next(null);
    }

    private FrameCallResult next(Void v) {
        RaftState s = g.state;
        if (s.stopping || getGroup().isShouldStop()) {
            return Fiber.frameReturn();
        }
        while (cursor < batch.size()) {
            Object o = batch.get(cursor);
            batch.set(cursor++, null);
            FrameCallResult r = null;
            if (o instanceof VoteRequest) {
                r = onRequest((VoteRequest) o);
            } else if (o instanceof LeaderTransfer.TimeoutNow) {
                r = onTimeoutNow((LeaderTransfer.TimeoutNow) o);
            } else if (o instanceof VoteReply) {
                r = onReply((VoteReply) o);
            }
            if (r != null) {
                return r;
            }
        }
        batch.clear();
        return checkTimers();
    }

    private FrameCallResult checkTimers() {
        RaftState s = g.state;
        long now = g.nowNanos();
        long waitNanos;
        if (s.role == RaftRole.LEADER) {
            if (!g.commitManager.hasQuorumContact(now, electionTimeoutNanos)) {
                log.warn("group {}: leader {} of term {} has not heard from a majority for {} ms; stepping down",
                        s.groupId, s.selfId, s.currentTerm, g.config.electionTimeoutMillis());
                g.roleManager.becomeFollower(s.currentTerm, 0);
                restartElectionTimer(now);
            }
            waitNanos = heartbeatNanos;
        } else {
            long since = Math.max(electionStartNanos, s.lastLeaderContactNanos);
            long due = since + electionTimeoutThisRound;
            if (now - due >= 0 && canStand(s)) {
                FrameCallResult r = startPreVote(now);
                if (r != null) {
                    return r;
                }
                due = electionStartNanos + electionTimeoutThisRound;
            } else if (now - due >= 0 && s.leaderId != 0) {
                // An observer (or a failed or busy node) stands for nothing, but must not go on naming
                // a leader it has not heard from in an election timeout: clients, follower reads and
                // /health take that name as a live leader.
                s.leaderId = 0;
                g.publish();
            }
            waitNanos = Math.min(heartbeatNanos, Math.max(0, due - now));
        }
        return inbox.takeAll(batch, Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos) + 1), afterTake);
    }

    private boolean canStand(RaftState s) {
        return s.members.isVoter(s.selfId) && !s.logBusy && s.failure == null;
    }

    // ---------------------------------------------------------------- standing for election

    private FrameCallResult startPreVote(long now) {
        RaftState s = g.state;
        restartElectionTimer(now);
        g.countElectionRound();
        if (s.leaderId != 0 && s.role != RaftRole.LEADER) {
            // the leader went silent: stop naming it to clients
            s.leaderId = 0;
            g.publish();
        }
        if (s.members.soleVoter() == s.selfId) {
            return startVote(false);
        }
        LogStore store = g.store;
        newRound(true, s.currentTerm + 1);
        log.info("group {}: node {} heard from no leader for {} ms; asking for pre-votes for term {}", s.groupId,
                s.selfId, TimeUnit.NANOSECONDS.toMillis(electionTimeoutThisRound), roundTerm);
        sendRequests(new VoteRequest(s.groupId, roundTerm, s.selfId, store.lastIndex(), store.lastTerm(), true));
        return null;
    }

    private void newRound(boolean preVote, int term) {
        RaftState s = g.state;
        round++;
        roundIsPreVote = preVote;
        roundIsTransfer = false;
        roundTerm = term;
        roundMembers = s.members;
        granted = new long[roundMembers.slotCount()];
        scratch = new long[roundMembers.slotCount()];
        granted[roundMembers.slotOf(s.selfId)] = 1;
    }

    /** A majority of every voting set granted (during a joint change, of the old and of the new voters). */
    private boolean hasQuorum() {
        return roundMembers.quorumValue(granted, scratch) > 0;
    }

    private void sendRequests(VoteRequest req) {
        Members m = roundMembers;
        for (int i = 0; i < m.slotCount(); i++) {
            int id = m.nodeAt(i);
            if (id != g.state.selfId && m.isVoterSlot(i)) {
                g.transport.send(id, RaftCommands.VOTE, req, VoteResponse.DECODER, g.config.electionTimeoutMillis(),
                        new VoteReply(inbox, round, i, id));
            }
        }
    }

    /**
     * A majority would vote for this node (or its leader handed over, {@code transfer}): become
     * candidate of the next term, durable before asking.
     */
    private FrameCallResult startVote(boolean transfer) {
        RaftState s = g.state;
        g.roleManager.becomeCandidate();
        newRound(false, s.currentTerm);
        roundIsTransfer = transfer;
        restartElectionTimer(g.nowNanos());
        log.info("group {}: node {} stands for election in term {}", s.groupId, s.selfId, s.currentTerm);
        return Fiber.call(g.statusSaver.persist(), this::afterCandidateSaved);
    }

    private FrameCallResult afterCandidateSaved(Void v) {
        RaftState s = g.state;
        if (s.role == RaftRole.CANDIDATE && s.currentTerm == roundTerm && !roundIsPreVote) {
            if (hasQuorum()) {
                g.roleManager.becomeLeader();
            } else {
                LogStore store = g.store;
                sendRequests(new VoteRequest(s.groupId, roundTerm, s.selfId, store.lastIndex(), store.lastTerm(), false,
                        roundIsTransfer));
            }
        }
        return next(null);
    }

    private FrameCallResult onReply(VoteReply r) {
        RaftState s = g.state;
        if (r.round != round || r.error != null) {
            return null;
        }
        VoteResponse resp = r.response;
        if (!resp.granted) {
            if (resp.term > s.currentTerm && s.role == RaftRole.FOLLOWER && s.leaderId != 0
                    && g.nowNanos() - s.lastLeaderContactNanos < electionTimeoutNanos) {
                // This node heard from a live leader since it asked (its lease may count on this node):
                // like a vote request, a reply does not make it drop that leader for a newer term
                return null;
            }
            if (resp.term > s.currentTerm) {
                // Someone is ahead: follow that term (without a leader yet); durable before any answer.
                g.roleManager.becomeFollower(resp.term, 0);
                round++;
                return Fiber.call(g.statusSaver.persist(), this::afterSaved);
            }
            return null;
        }
        if (granted[r.voterSlot] != 0) {
            return null;
        }
        granted[r.voterSlot] = 1;
        if (!hasQuorum()) {
            return null;
        }
        if (roundIsPreVote) {
            if (s.role == RaftRole.LEADER || s.currentTerm + 1 != roundTerm) {
                return null;   // the world moved on while the pre-votes came in
            }
            if (s.leaderId != 0 && g.nowNanos() - s.lastLeaderContactNanos < electionTimeoutNanos) {
                // A live leader reached this node while the pre-votes came in, and its lease may
                // count on this node's acknowledgement: this node refuses others' votes now, and
                // must not take its own either (a late grant would otherwise make it a candidate)
                round++;
                return null;
            }
            if (!canStand(s)) {
                round++;   // demoted to observer, installing a snapshot, or failed meanwhile
                return null;
            }
            return startVote(false);
        }
        if (s.role == RaftRole.CANDIDATE && s.currentTerm == roundTerm) {
            round++;
            g.roleManager.becomeLeader();
        }
        return null;
    }

    private FrameCallResult afterSaved(Void v) {
        return next(null);
    }

    /**
     * The leader hands over (leader transfer): if this node still follows that leader in that term
     * and may stand, it stands at once — no pre-vote, and its vote requests say so, so voters that
     * hear from the leader grant them anyway.
     */
    private FrameCallResult onTimeoutNow(LeaderTransfer.TimeoutNow t) {
        RaftState s = g.state;
        boolean ok = s.role == RaftRole.FOLLOWER && t.term == s.currentTerm && t.leaderId == s.leaderId && canStand(s);
        t.answer(s.currentTerm, ok);
        if (!ok) {
            log.info("group {}: node {} does not take over from node {} (term {}, its term {}, role {})", s.groupId,
                    s.selfId, t.leaderId, t.term, s.currentTerm, s.role);
            return null;
        }
        log.info("group {}: node {} takes over from leader {} (leader transfer)", s.groupId, s.selfId, t.leaderId);
        g.countElectionRound();
        return startVote(true);
    }

    // ---------------------------------------------------------------- answering

    private FrameCallResult onRequest(VoteRequest req) {
        RaftState s = g.state;
        long now = g.nowNanos();
        if (s.failure != null || !s.members.isVoter(req.candidateId)) {
            answer(req, false);
            return null;
        }
        boolean leaderAlive;
        if (s.role == RaftRole.LEADER) {
            leaderAlive = g.commitManager.hasQuorumContact(now, electionTimeoutNanos);
        } else {
            leaderAlive = s.leaderId != 0 && now - s.lastLeaderContactNanos < electionTimeoutNanos;
        }
        // Just started: this node may have acknowledged a leader within its lease before it went down.
        leaderAlive |= now - quietUntilNanos < 0;
        if (leaderAlive && isHandOver(req)) {
            leaderAlive = false;
        }
        boolean logOk = isUpToDate(req);
        if (req.preVote) {
            answer(req, req.term > s.currentTerm && !leaderAlive && logOk);
            return null;
        }
        if (req.term < s.currentTerm || leaderAlive) {
            // A live leader's followers ignore the newer term: a node coming back from a partition
            // cannot depose a healthy leader.
            answer(req, false);
            return null;
        }
        if (req.term > s.currentTerm) {
            g.roleManager.becomeFollower(req.term, 0);
        }
        boolean grant = false;
        if ((s.votedFor == 0 || s.votedFor == req.candidateId) && logOk) {
            s.votedFor = req.candidateId;
            grant = true;
            restartElectionTimer(now);
        }
        if (!g.statusSaver.isSaved()) {
            answering = req;
            answeringGrant = grant;
            return Fiber.call(g.statusSaver.persist(), this::afterAnswerSaved);
        }
        answer(req, grant);
        return null;
    }

    private FrameCallResult afterAnswerSaved(Void v) {
        VoteRequest req = answering;
        RaftState s = g.state;
        answering = null;
        answer(req, answeringGrant && s.currentTerm == req.term && s.votedFor == req.candidateId);
        return next(null);
    }

    /**
     * A vote request the leader itself asked for (leader transfer): granted although this node hears
     * from a live leader, because that leader gave up its lease before it sent TIMEOUT_NOW (and
     * takes no lease again in its term, see {@link LeaderTransfer}). Only for the term right after
     * this node's own — a candidate of that term was this term's follower — and, on the leader, only
     * for the node it is handing over to, so a stray or late request does not depose it.
     */
    private boolean isHandOver(VoteRequest req) {
        RaftState s = g.state;
        if (!req.leaderTransfer || req.preVote || req.term != s.currentTerm + 1) {
            return false;
        }
        return s.role != RaftRole.LEADER || g.transfer.isHandingOverTo(req.candidateId);
    }

    private boolean isUpToDate(VoteRequest req) {
        LogStore store = g.store;
        int lastTerm = store.lastTerm();
        return req.lastLogTerm > lastTerm || (req.lastLogTerm == lastTerm && req.lastLogIndex >= store.lastIndex());
    }

    private void answer(VoteRequest req, boolean grant) {
        if (grant || log.isDebugEnabled()) {
            log.info("group {}: node {} {} {}", g.state.groupId, g.state.selfId, grant ? "grants" : "refuses", req);
        }
        req.context.respond(WritePacket.response(new VoteResponse(g.state.currentTerm, grant)));
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        log.error("group {} on node {}: the election fiber failed", g.state.groupId, g.state.selfId, ex);
        g.fail(ex);
        return Fiber.frameReturn();
    }

    @Override
    public String toString() {
        return "VoteManager[group " + g.state.groupId + "]";
    }

    /** The outcome of one vote request this node sent; handed to the election fiber. */
    static final class VoteReply implements RpcCallback<VoteResponse> {
        private final FiberChannel<Object> inbox;
        final long round;
        final int voterSlot;
        final int voterId;
        VoteResponse response;
        Throwable error;

        VoteReply(FiberChannel<Object> inbox, long round, int voterSlot, int voterId) {
            this.inbox = inbox;
            this.round = round;
            this.voterSlot = voterSlot;
            this.voterId = voterId;
        }

        @Override
        public void onSuccess(VoteResponse body) {
            response = body;
            inbox.fireOffer(this);
        }

        @Override
        public void onFailure(Throwable e) {
            error = e;
            inbox.fireOffer(this);
        }
    }
}
