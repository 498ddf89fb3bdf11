package io.poyang.raft.core;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftCommands;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;

/**
 * Linearizable reads of one group, as one fiber (DESIGN §6): lease reads, ReadIndex and follower
 * reads. Reads arrive from any thread through a channel; the fiber takes everything queued at once
 * and treats it as one batch, so all the reads of a dispatcher round share one lease check, one
 * heartbeat round or one request to the leader (nothing waits for a batch to fill).
 *
 * <ul>
 * <li><b>Leader.</b> Until its no-op entry of the term has committed the leader does not know the
 * full commit index, so reads wait for it. Then, with a valid lease ({@link LeaseReadTracker}) the
 * read index is the commit index at once. Otherwise (or for {@link ReadKind#READ_INDEX}) the batch
 * records the commit index and a new <em>round number</em>; the replicators stamp every request
 * with the current round number and send a heartbeat at once when one is wanted, and the batch is
 * confirmed when a majority of every voting set acknowledged a request of its round or later
 * (nothing is timed: a later request counts too). A confirmed read runs once applied ≥ its index.</li>
 * <li><b>Follower or observer</b> ({@link ReadKind#FOLLOWER_READ}): one READ_INDEX request to the
 * leader per batch; the leader confirms its commit index as above (its lease or a heartbeat
 * round) and answers it; the batch runs once this node applied that far.</li>
 * </ul>
 *
 * <p>Reads waiting for confirmation fail with NOT_LEADER when the leadership ends; confirmed reads
 * stay valid and run when their index is applied, whatever the role. Reads past their deadline fail
 * with a timeout (checked whenever the fiber runs, and every {@link #SWEEP_MILLIS} while reads
 * wait). Dispatcher thread.
 */
final class ReadIndexManager extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(ReadIndexManager.class);
    private static final long SWEEP_MILLIS = 50;

    /** READ_INDEX request (replication port): field 1 group_id, 2 node_id (the asking follower). */
    static final FieldMessage.Schema REQUEST = new FieldMessage.Schema("ReadIndexRequest", new int[0], new int[0]);
    /** READ_INDEX answer: field 1 term, 2 read_index. */
    static final FieldMessage.Schema RESPONSE = new FieldMessage.Schema("ReadIndexResponse", new int[0], new int[0]);

    private final RaftGroup g;
    private final FiberChannel<Object> channel;
    private final ArrayList<Object> taken = new ArrayList<>();
    private final FrameCall<Void> onTaken = this::onTaken;

    // ---- leader
    /** The current round number; requests sent from now on carry it. */
    private long round;
    /** Per slot: the highest round number the node acknowledged in this leadership. */
    private long[] ackedRound = new long[0];
    private long[] work = new long[0];
    private long[] scratch = new long[0];
    private Members members;
    private int selfSlot = -1;
    /** The no-op entry of this leadership committed: the commit index is complete. */
    private boolean termCommitted;
    private final ArrayList<PendingRead> waitingTermCommit = new ArrayList<>();
    /** Batches waiting for a majority to acknowledge their round, oldest first. */
    private final ArrayDeque<ReadBatch> confirming = new ArrayDeque<>();

    // ---- every role
    /** Confirmed batches waiting for their index to be applied. */
    private final ArrayList<ReadBatch> waitingApply = new ArrayList<>();
    /** Batches of follower reads waiting for the leader's answer. */
    private final ArrayList<ReadBatch> fetching = new ArrayList<>();

    private int waitingCount;

    // counters (plain fields written by the dispatcher, read racily: metrics and tests)
    long leaseReadCount;
    long confirmedReadCount;
    long confirmRounds;
    long followerReadCount;
    long indexFetches;
    long indexRequestsServed;

    ReadIndexManager(RaftGroup g, FiberChannel<Object> channel) {
        this.g = g;
        this.channel = channel;
    }

    /** A batch of reads sharing one read index. */
    static final class ReadBatch {
        final ArrayList<PendingRead> reads = new ArrayList<>();
        long readIndex;
        long round;
        int leaderId;
    }

    /** The leader's answer to one READ_INDEX request of this follower; handed to the fiber. */
    static final class FetchReply implements RpcCallback<FieldMessage> {
        final ReadBatch batch;
        private final FiberChannel<Object> channel;
        FieldMessage response;
        Throwable error;

        FetchReply(ReadBatch batch, FiberChannel<Object> channel) {
            this.batch = batch;
            this.channel = channel;
        }

        @Override
        public void onSuccess(FieldMessage body) {
            response = body;
            channel.fireOffer(this);
        }

        @Override
        public void onFailure(Throwable e) {
            error = e;
            channel.fireOffer(this);
        }
    }

    // ---------------------------------------------------------------- hooks (dispatcher thread)

    /** The round number a request sent now carries. */
    long currentRound() {
        return round;
    }

    /** The node became leader: nothing is confirmed in this term yet. */
    void onBecomeLeader() {
        Members m = g.state.members;
        members = m;
        ackedRound = new long[m.slotCount()];
        work = new long[m.slotCount()];
        scratch = new long[m.slotCount()];
        selfSlot = m.slotOf(g.state.selfId);
        termCommitted = false;
    }

    /** The configuration changed while leading. */
    void onMembersChanged(Members m) {
        if (members == null || !g.state.isLeader()) {
            return;
        }
        long[] acked = new long[m.slotCount()];
        for (int i = 0; i < acked.length; i++) {
            int was = members.slotOf(m.nodeAt(i));
            acked[i] = was < 0 ? 0 : ackedRound[was];
        }
        members = m;
        ackedRound = acked;
        work = new long[acked.length];
        scratch = new long[acked.length];
        selfSlot = m.slotOf(g.state.selfId);
        confirmRounds();
    }

    /** The leader's commit index moved (only entries of its own term commit directly). */
    void onLeaderCommit(long commit) {
        if (!termCommitted) {
            termCommitted = true;
            if (!waitingTermCommit.isEmpty()) {
                channel.offer(Replicator.WAKE);
            }
        }
    }

    /** Node {@code nodeId} acknowledged, in this leader's term, a request of round {@code r}. */
    void onAck(int nodeId, long r) {
        int slot = members == null ? -1 : members.slotOf(nodeId);
        if (slot >= 0 && r > ackedRound[slot]) {
            ackedRound[slot] = r;
            if (!confirming.isEmpty()) {
                confirmRounds();
            }
        }
    }

    /** The leadership ended: reads not yet confirmed cannot be. */
    void onLeadershipLost() {
        int leader = g.state.leaderId;
        String msg = "node " + g.state.selfId + " lost the leadership of raft group " + g.state.groupId
                + " before the read was confirmed";
        for (PendingRead r : waitingTermCommit) {
            failRead(r, notLeader(leader, msg));
        }
        waitingCount -= waitingTermCommit.size();
        waitingTermCommit.clear();
        for (ReadBatch b : confirming) {
            waitingCount -= b.reads.size();
            failAll(b, notLeader(leader, msg));
        }
        confirming.clear();
        members = null;
    }

    /**
     * The group failed: nothing will be applied any more, so reads waiting for their index to be
     * applied (or confirmed, or fetched) would wait until their deadline, forever for a read without
     * one. They fail now; later reads are refused when taken.
     */
    void onGroupFailed(String message) {
        StoppedException e = new StoppedException(message);
        for (PendingRead r : waitingTermCommit) {
            failRead(r, e);
        }
        waitingTermCommit.clear();
        for (java.util.Collection<ReadBatch> list : java.util.Arrays.<java.util.Collection<ReadBatch>>asList(
                confirming, waitingApply, fetching)) {
            for (ReadBatch b : list) {
                failAll(b, e);
            }
            list.clear();
        }
        waitingCount = 0;
    }

    /** The state machine applied up to {@code applied}: runs the batches that waited for it. */
    void onApplied(long applied) {
        if (waitingApply.isEmpty()) {
            return;
        }
        for (int i = 0; i < waitingApply.size(); ) {
            ReadBatch b = waitingApply.get(i);
            if (b.readIndex <= applied) {
                waitingApply.set(i, waitingApply.get(waitingApply.size() - 1));
                waitingApply.remove(waitingApply.size() - 1);
                runAll(b);
            } else {
                i++;
            }
        }
    }

    // ---------------------------------------------------------------- the fiber

    @Override
    public FrameCallResult execute(Object input) {
        return channel.takeAll(taken, onTaken);
    }

    private FrameCallResult onTaken(Void v) {
        RaftState s = g.state;
        if (s.stopping || getGroup().isShouldStop()) {
            failEverything(new StoppedException("raft group " + s.groupId + " on node " + s.selfId + " is stopping"));
            return Fiber.frameReturn();
        }
        if (termCommitted && s.isLeader() && !waitingTermCommit.isEmpty()) {
            // The leader's first entry committed: the reads that waited for it go first, in this
            // same pass as what was just taken (reads taken with the wake-up must not be left out).
            taken.addAll(0, waitingTermCommit);
            waitingCount -= waitingTermCommit.size();
            waitingTermCommit.clear();
        }
        long now = g.nowNanos();
        ReadBatch leaseBatch = null;
        ReadBatch confirmBatch = null;
        ReadBatch fetchBatch = null;
        boolean leaseChecked = false;
        boolean leaseValid = false;
        for (int i = 0, n = taken.size(); i < n; i++) {
            Object o = taken.get(i);
            if (o instanceof FetchReply) {
                onFetchReply((FetchReply) o);
                continue;
            }
            if (!(o instanceof PendingRead)) {
                continue;   // a wake-up
            }
            PendingRead r = (PendingRead) o;
            if (r.isExpired(now)) {
                failRead(r, timeout(r));
                continue;
            }
            if (s.failure != null) {
                failRead(r, new StoppedException("raft group " + s.groupId + " on node " + s.selfId
                        + " has failed and needs a restart: " + s.failure));
                continue;
            }
            if (s.isLeader()) {
                if (!termCommitted) {
                    waitingTermCommit.add(r);
                    waitingCount++;
                    continue;
                }
                boolean wantsLease = r.kind != ReadKind.READ_INDEX;
                if (wantsLease && !leaseChecked) {
                    leaseChecked = true;
                    LeaseReadTracker lease = g.leaseReads;
                    leaseValid = lease.isValid(lease.now());
                }
                if (wantsLease && leaseValid) {
                    if (leaseBatch == null) {
                        leaseBatch = new ReadBatch();
                        leaseBatch.readIndex = s.commitIndex;
                    }
                    leaseBatch.reads.add(r);
                } else {
                    if (confirmBatch == null) {
                        confirmBatch = new ReadBatch();
                        confirmBatch.readIndex = s.commitIndex;
                    }
                    confirmBatch.reads.add(r);
                }
            } else if (r.kind == ReadKind.FOLLOWER_READ && r.remote == null) {
                if (s.leaderId == 0) {
                    failRead(r, notLeader(0, "raft group " + s.groupId + " has no known leader on node " + s.selfId
                            + " to confirm a follower read; retry later"));
                    continue;
                }
                if (fetchBatch == null) {
                    fetchBatch = new ReadBatch();
                    fetchBatch.leaderId = s.leaderId;
                }
                fetchBatch.reads.add(r);
            } else {
                failRead(r, notLeader(s.leaderId, "node " + s.selfId + " is not the leader of raft group " + s.groupId
                        + (s.leaderId != 0 ? "; the leader is node " + s.leaderId : "; no leader is known yet")));
            }
        }
        taken.clear();
        if (leaseBatch != null) {
            leaseReadCount += leaseBatch.reads.size();
            complete(leaseBatch);
        }
        if (confirmBatch != null) {
            confirmedReadCount += confirmBatch.reads.size();
            confirmRounds++;
            startRound(confirmBatch);
        }
        if (fetchBatch != null) {
            followerReadCount += fetchBatch.reads.size();
            indexFetches++;
            fetch(fetchBatch);
        }
        if (waitingCount > 0) {
            sweep(now);
        }
        return waitingCount > 0 ? channel.takeAll(taken, SWEEP_MILLIS, onTaken) : channel.takeAll(taken, onTaken);
    }

    /** A batch whose read index is confirmed: answers remote requests, runs or parks the local reads. */
    private void complete(ReadBatch b) {
        long applied = g.state.lastApplied;
        boolean parked = false;
        for (int i = 0, n = b.reads.size(); i < n; i++) {
            PendingRead r = b.reads.get(i);
            if (r.remote != null) {
                indexRequestsServed++;
                r.remote.respond(WritePacket.response(RESPONSE.builder().set(1, g.state.currentTerm)
                        .set(2, b.readIndex).build()));
                b.reads.set(i, null);
            } else if (b.readIndex <= applied) {
                run(r);
                b.reads.set(i, null);
            } else {
                parked = true;
            }
        }
        if (parked) {
            compact(b);
            waitingApply.add(b);
            waitingCount += b.reads.size();
        }
    }

    private void startRound(ReadBatch b) {
        b.round = ++round;
        if (members.soleVoter() == g.state.selfId) {
            complete(b);
            return;
        }
        confirming.add(b);
        waitingCount += b.reads.size();
        if (members.isJoint()) {
            // a joint change where this node is a majority of both voting sets (one voter, kept)
            // confirms at once; no follower's answer would come to do it if the observers are down
            confirmRounds();
        }
        // every replicator sends a request of the new round now, unless it sends entries anyway
        g.wakeReplicators();
    }

    /** Confirms the batches whose round a majority of every voting set acknowledged. */
    private void confirmRounds() {
        long[] w = work;
        System.arraycopy(ackedRound, 0, w, 0, w.length);
        if (selfSlot >= 0) {
            w[selfSlot] = Long.MAX_VALUE;
        }
        long confirmed = members.quorumValue(w, scratch);
        ReadBatch b;
        while ((b = confirming.peekFirst()) != null && b.round <= confirmed) {
            confirming.pollFirst();
            waitingCount -= b.reads.size();
            complete(b);
        }
    }

    private void fetch(ReadBatch b) {
        RaftState s = g.state;
        fetching.add(b);
        waitingCount += b.reads.size();
        long deadline = Long.MIN_VALUE;
        for (PendingRead r : b.reads) {
            deadline = Math.max(deadline, r.deadlineNanos);
        }
        long timeoutMillis = deadline == Long.MAX_VALUE ? g.config.electionTimeoutMillis()
                : Math.max(1, (deadline - g.nowNanos()) / 1_000_000);
        g.transport.send(b.leaderId, RaftCommands.READ_INDEX, REQUEST.builder().set(1, s.groupId).set(2, s.selfId).build(),
                RESPONSE, timeoutMillis, new FetchReply(b, channel));
    }

    private void onFetchReply(FetchReply reply) {
        ReadBatch b = reply.batch;
        if (!fetching.remove(b)) {
            return;   // failed meanwhile (timeout or stop)
        }
        waitingCount -= b.reads.size();
        if (reply.error != null) {
            Throwable e = reply.error;
            if (e instanceof RemoteException && ((RemoteException) e).responseCode() == ResponseCode.NOT_LEADER) {
                int leader = ((RemoteException) e).bizCode();
                e = notLeader(leader, "node " + b.leaderId + " is no longer the leader of raft group " + g.state.groupId
                        + " and could not confirm the follower read" + (leader != 0 ? "; the leader is node " + leader : ""));
            } else if (!(e instanceof PoyangTimeoutException)) {
                e = notLeader(0, "the leader (node " + b.leaderId + ") of raft group " + g.state.groupId
                        + " could not confirm the follower read: " + e);
            }
            failAll(b, e);
            return;
        }
        b.readIndex = reply.response.getLong(2);
        complete(b);
    }

    // ---------------------------------------------------------------- ends of reads

    private void run(PendingRead r) {
        try {
            r.task.run();
        } catch (Throwable e) {
            log.warn("group {}: a read task failed", g.state.groupId, e);
        }
    }

    private void runAll(ReadBatch b) {
        waitingCount -= b.reads.size();
        for (PendingRead r : b.reads) {
            run(r);
        }
    }

    /** A read that reached the group after its read fiber ended. */
    void failStopped(PendingRead r, String message) {
        failRead(r, new StoppedException(message));
    }

    private void failRead(PendingRead r, Throwable e) {
        if (r.remote != null) {
            if (e instanceof NotLeaderException) {
                r.remote.respond(WritePacket.error(ResponseCode.NOT_LEADER, ((NotLeaderException) e).leaderId(),
                        e.getMessage()));
            } else if (e instanceof StoppedException) {
                r.remote.respondError(ResponseCode.STOPPING, e.getMessage());
            } else {
                r.remote.respondError(ResponseCode.TIMEOUT, e.getMessage());
            }
            return;
        }
        try {
            r.task.fail(e);
        } catch (Throwable t) {
            log.warn("group {}: a read task's fail() threw", g.state.groupId, t);
        }
    }

    private void failAll(ReadBatch b, Throwable e) {
        for (PendingRead r : b.reads) {
            failRead(r, e);
        }
    }

    private NotLeaderException notLeader(int leaderId, String msg) {
        return new NotLeaderException(g.state.groupId, leaderId, msg);
    }

    private PoyangTimeoutException timeout(PendingRead r) {
        return new PoyangTimeoutException("the read's deadline passed before raft group " + g.state.groupId
                + " on node " + g.state.selfId + " could confirm and serve it");
    }

    /** Fails the reads whose deadline passed, wherever they wait. */
    private void sweep(long now) {
        sweepList(waitingTermCommit, now);
        for (ReadBatch b : confirming) {
            sweepBatch(b, now);
        }
        for (ReadBatch b : waitingApply) {
            sweepBatch(b, now);
        }
        for (ReadBatch b : fetching) {
            sweepBatch(b, now);
        }
        waitingApply.removeIf(b -> b.reads.isEmpty());
        fetching.removeIf(b -> b.reads.isEmpty());
    }

    private void sweepList(ArrayList<PendingRead> list, long now) {
        Iterator<PendingRead> it = list.iterator();
        while (it.hasNext()) {
            PendingRead r = it.next();
            if (r.isExpired(now)) {
                it.remove();
                waitingCount--;
                failRead(r, timeout(r));
            }
        }
    }

    private void sweepBatch(ReadBatch b, long now) {
        sweepList(b.reads, now);
    }

    private static void compact(ReadBatch b) {
        b.reads.removeIf(r -> r == null);
    }

    private void failEverything(Throwable e) {
        for (Object o : taken) {
            if (o instanceof PendingRead) {
                failRead((PendingRead) o, e);
            }
        }
        taken.clear();
        for (PendingRead r : waitingTermCommit) {
            failRead(r, e);
        }
        waitingTermCommit.clear();
        for (ReadBatch b : confirming) {
            failAll(b, e);
        }
        confirming.clear();
        for (ReadBatch b : waitingApply) {
            failAll(b, e);
        }
        waitingApply.clear();
        for (ReadBatch b : fetching) {
            failAll(b, e);
        }
        fetching.clear();
        waitingCount = 0;
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        log.error("group {} on node {}: the read fiber failed", g.state.groupId, g.state.selfId, ex);
        failEverything(new StoppedException("raft group " + g.state.groupId + " failed: " + ex));
        g.fail(ex);
        return Fiber.frameReturn();
    }

    @Override
    public String toString() {
        return "ReadIndexManager[group " + g.state.groupId + ", round " + round + ", waiting " + waitingCount + "]";
    }
}
