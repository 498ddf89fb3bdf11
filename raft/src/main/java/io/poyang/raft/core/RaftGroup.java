package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.common.FlowControlException;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ReqContext;
import io.poyang.net.ResponseCode;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.client.RaftStatusResponse;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.FsyncGate;
import io.poyang.raft.store.LogJournal;
import io.poyang.raft.store.LogStore;
import io.poyang.raft.store.LogStoreConfig;
import io.poyang.raft.store.RecoveredState;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One raft group on this node: its log, its state machine, and the fibers that run it, all in one
 * {@link FiberGroup} on one dispatcher thread (so its state needs no locks). This is the embedding
 * facade: {@link #submit} a write, read {@link #status()}, {@link #takeSnapshot()}; a
 * {@link io.poyang.raft.server.RaftServer} creates, starts and stops groups and routes the network
 * messages to them ({@code accept*}).
 *
 * <p>Parts (one concern each): {@link VoteManager} (elections), {@link LeaderWriter} (client writes
 * become log entries), {@link Replicator} (one per follower), {@link CommitManager},
 * {@link ApplyManager} (the state machine), {@link FollowerAppender} (a follower's log),
 * {@link SnapshotManager}, {@link RoleManager}, {@link StatusSaver}, {@link TailCache},
 * {@link LeaderTransfer}, {@link PreferredLeaderKeeper}, {@link SuccessorChoice}.
 */
public final class RaftGroup {

    private static final PoyangLog log = PoyangLogs.get(RaftGroup.class);
    /** Sentinel that wakes a fiber waiting on a channel (the group stops). */
    private static final Object STOP = new Object();
    /** The READ_INDEX request's schema (raft.proto ReadIndexRequest), for the replication port's processor. */
    public static final io.poyang.raft.client.FieldMessage.Schema READ_INDEX_REQUEST = ReadIndexManager.REQUEST;

    final RaftState state;
    final RaftConfig config;
    final StateMachine sm;
    final RaftTransport transport;
    final Dispatcher dispatcher;
    final FiberGroup fiberGroup;
    /** The server's log I/O pool, counting this group's tasks (see {@link #whenFilesReleased()}). */
    final GroupIoExecutor ioExecutor;
    final Path dir;
    final LogStore store;
    final TailCache tailCache = new TailCache();
    final WriteFlowControl flowControl;
    final WriteResponder responder;
    final StatusSaver statusSaver;
    final RoleManager roleManager;
    final CommitManager commitManager;
    final ApplyManager applyManager;
    final LeaderWriter leaderWriter;
    final FollowerAppender followerAppender;
    final VoteManager voteManager;
    final SnapshotManager snapshotManager;
    final LeaseReadTracker leaseReads;
    final ReadIndexManager reads;
    final MembershipManager membership;
    final SessionTable sessions;
    final LeaderTransfer transfer;
    final PreferredLeaderKeeper preferredLeader;
    private final FiberChannel<WriteTask> writeChannel;
    private final FiberChannel<Object> readChannel;
    private final FiberChannel<Object> followerChannel;
    private final FiberChannel<Object> voteChannel;
    private Replicator[] replicators = new Replicator[0];
    private Fiber[] mainFibers = new Fiber[0];

    // published for other threads
    private volatile RaftRole pubRole = RaftRole.NONE;
    private volatile int pubTerm;
    private volatile int pubLeaderId;
    private volatile long pubCommit;
    private volatile long pubApplied;
    private volatile long pubLastLog;
    private volatile long pubFirstLog;
    private volatile long pubElectionRounds;
    private volatile boolean stopRequested;
    /**
     * Orders {@link #start()} against {@link #stop()}: a stop that comes before any start has no
     * fibers to end and no files to close, so it completes at once and the start is refused; one
     * that comes after waits for the start to end (see {@link #stop()}).
     */
    private final Object startStopLock = new Object();
    /** Set by the first {@link #start()} (under {@link #startStopLock}). */
    private boolean startCalled;
    /** Set by {@link #refuseNewWrites()}: a node on its way down answers new writes STOPPING. */
    private volatile boolean refusingWrites;
    private volatile Throwable pubFailure;
    private volatile Members pubMembers;
    private volatile Members pubCommittedMembers;
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    /**
     * @param dir              the group's directory (log, index, status and snapshot files)
     * @param ioExecutor       blocking file I/O (shared by the groups of a server; at least two threads)
     * @param callbackExecutor where futures returned by {@link #submit} complete
     * @param fsyncGate        the bound on fsyncs shared by the groups on the same disk, or null
     * @param journal          the node's log journal the group's log writes through, or null
     */
    public RaftGroup(int groupId, int selfId, Members members, StateMachine sm, RaftConfig config, Path dir,
                     Dispatcher dispatcher, ExecutorService ioExecutor, Executor callbackExecutor,
                     RaftTransport transport, FsyncGate fsyncGate, LogJournal journal) {
        config.validate();
        this.state = new RaftState(groupId, selfId, members);
        this.pubMembers = members;
        this.pubCommittedMembers = members;
        this.config = config;
        this.sm = sm;
        this.transport = transport;
        this.dispatcher = dispatcher;
        this.fiberGroup = new FiberGroup("raft-group-" + groupId, dispatcher);
        this.ioExecutor = new GroupIoExecutor(ioExecutor);
        this.dir = dir;
        this.store = new LogStore("group-" + groupId, fiberGroup, new LogStoreConfig(dir, this.ioExecutor)
                .segmentBytes(config.segmentBytes()).recycledSegments(config.recycledSegments()).syncForce(config.syncForce()).fsyncGate(fsyncGate).journal(journal)
                .fileIo(config.logFileIo()));
        this.flowControl = new WriteFlowControl(config.maxPendingWrites(), config.maxPendingWriteBytes());
        this.responder = new WriteResponder(groupId, selfId, flowControl, callbackExecutor, this::nowNanos);
        this.statusSaver = new StatusSaver(state, store, fiberGroup);
        this.roleManager = new RoleManager(this);
        this.commitManager = new CommitManager(this);
        FiberCondition applyWake = fiberGroup.newCondition("apply-" + groupId);
        this.applyManager = new ApplyManager(this, sm, applyWake);
        this.writeChannel = fiberGroup.newChannel("writes-" + groupId);
        this.followerChannel = fiberGroup.newChannel("appends-" + groupId);
        this.voteChannel = fiberGroup.newChannel("votes-" + groupId);
        this.leaderWriter = new LeaderWriter(this, writeChannel);
        this.followerAppender = new FollowerAppender(this, followerChannel);
        this.voteManager = new VoteManager(this, voteChannel);
        this.snapshotManager = new SnapshotManager(this, sm, dir.resolve("snapshot"));
        this.leaseReads = new LeaseReadTracker(this, config.leaseClock());
        this.readChannel = fiberGroup.newChannel("reads-" + groupId);
        this.reads = new ReadIndexManager(this, readChannel);
        this.membership = new MembershipManager(this);
        this.sessions = new SessionTable(this);
        this.transfer = new LeaderTransfer(this);
        this.preferredLeader = new PreferredLeaderKeeper(this);
    }

    public int groupId() {
        return state.groupId;
    }

    public int nodeId() {
        return state.selfId;
    }

    // ---------------------------------------------------------------- life

    /**
     * Starts the group: recovers the log, loads the latest snapshot, replays the committed log on
     * top, then takes part in elections. Any thread; the future completes when the group runs. A
     * second call returns the same future. A group that was stopped ({@link #stop()}) before it was
     * started is not started: the future fails with a {@link StoppedException} (a group starts at
     * most once; make a new {@code RaftGroup} on the directory instead).
     */
    public CompletableFuture<Void> start() {
        synchronized (startStopLock) {
            if (startCalled || stopRequested) {
                // stopped first: stop() failed the future already with the reason
                return started;
            }
            startCalled = true;
        }
        dispatcher.startGroup(fiberGroup).whenComplete((v, e) -> {
            if (e != null) {
                started.completeExceptionally(e);
            } else if (!fiberGroup.fireFiber("raft-init-" + state.groupId, new InitFrame())) {
                started.completeExceptionally(new StoppedException("raft group " + state.groupId + " was stopped"));
            }
        });
        return started;
    }

    private final class InitFrame extends FiberFrame<Void> {
        private SnapshotMeta snapshot;

        @Override
        public FrameCallResult execute(Object input) {
            sm.onStart(RaftGroup.this);
            return Fiber.call(store.init(), this::afterStore);
        }

        private FrameCallResult afterStore(RecoveredState r) {
            checkNotStopped();
            state.currentTerm = r.getCurrentTerm();
            state.votedFor = r.getVotedFor();
            state.commitIndex = r.getCommitIndex();
            statusSaver.markSaved(r.getCurrentTerm(), r.getVotedFor());
            store.setPersistedListener(RaftGroup.this::onPersisted);
            // a store that fails (disk full, I/O error) fails the group now: a quiet leader would
            // otherwise keep leading, its pending writes waiting for their deadlines
            store.setFailureListener(RaftGroup.this::fail);
            return Fiber.call(snapshotManager.init(), this::afterSnapshot);
        }

        private FrameCallResult afterSnapshot(SnapshotMeta meta) {
            checkNotStopped();
            snapshot = meta;
            if (meta == null) {
                membership.reset(0, state.members);
                return afterLog(null);
            }
            membership.reset(meta.lastIndex(), MembershipManager.membersOf(meta));
            long idx = meta.lastIndex();
            state.lastApplied = idx;
            state.lastAppliedTerm = meta.lastTerm();
            state.commitIndex = Math.max(state.commitIndex, idx);
            if (store.firstIndex() > idx + 1) {
                throw new IllegalStateException("group " + state.groupId + ": the log starts at index "
                        + store.firstIndex() + " but the latest snapshot ends at " + idx
                        + "; entries in between are missing. Restore the snapshot files or the log segments of "
                        + dir);
            }
            boolean logHasIt = store.lastIndex() >= idx && store.termOf(idx) == meta.lastTerm();
            if (logHasIt) {
                return afterLog(null);
            }
            // The node crashed after installing a snapshot from the leader and before dropping its old log.
            return Fiber.call(store.resetAfterSnapshot(idx, meta.lastTerm()), this::afterLog);
        }

        /** Where the scan for configuration entries goes on. */
        private long scanFrom;

        private FrameCallResult afterLog(Void v) {
            scanFrom = Math.max(store.firstIndex(), snapshot == null ? 1 : snapshot.lastIndex() + 1);
            return scanConfigs();
        }

        /** Reads the log after the snapshot for configuration entries: the newest one is in force. */
        private FrameCallResult scanConfigs() {
            checkNotStopped();   // a safe point between chunks of a long log
            if (scanFrom > store.lastIndex()) {
                return afterScan();
            }
            return Fiber.call(store.load(scanFrom, 4096, 8 << 20), this::afterScanChunk);
        }

        private FrameCallResult afterScanChunk(java.util.List<io.poyang.raft.store.LogItem> items) {
            if (items.isEmpty()) {
                return afterScan();
            }
            for (io.poyang.raft.store.LogItem it : items) {
                if (it.getType() == io.poyang.raft.store.LogItem.TYPE_CONFIG_CHANGE) {
                    membership.onConfigAppended(it.getIndex(), MembersCodec.fromBody(it.getBody()));
                }
            }
            scanFrom = items.get(items.size() - 1).getIndex() + 1;
            return scanConfigs();
        }

        private FrameCallResult afterScan() {
            if (state.commitIndex > store.lastIndex()) {
                state.commitIndex = store.lastIndex();
            }
            store.setCommitIndex(Math.min(state.commitIndex, store.persistedIndex()));
            state.lastLeaderContactNanos = nowNanos() - TimeUnit.DAYS.toNanos(1);
            startFibers();
            publish();
            publishProgress();
            log.info("group {} on node {}: started in term {} (log {}..{}, commit {}, snapshot {}), members {}",
                    state.groupId, state.selfId, state.currentTerm, store.firstIndex(), store.lastIndex(),
                    state.commitIndex, snapshot == null ? "none" : snapshot.lastIndex(), state.members);
            started.complete(null);
            return Fiber.frameReturn();
        }

        /** A stop asked while the group starts ends the start at the next step (see {@link #stop()}). */
        private void checkNotStopped() {
            if (stopRequested) {
                throw stoppedWhileStarting(null);
            }
        }

        /** {@code cause}: what the start failed with on its own meanwhile, or null. */
        private StoppedException stoppedWhileStarting(Throwable cause) {
            return new StoppedException("raft group " + state.groupId + " on node " + state.selfId
                    + " was stopped while starting; it did not start", cause);
        }

        /**
         * The start failed, or was stopped: the log store's files it opened are closed before the
         * start's future fails (left to the garbage collector, they kept the directory's files open,
         * and locked on some systems, so it could not be removed nor the start retried cleanly).
         */
        @Override
        protected FrameCallResult handle(Throwable ex) {
            Throwable error = ex;
            if (stopRequested) {
                // the cause is given when the exception is made: a PoyangException's cause is set
                // (to null) by its constructor, so initCause throws, and this handler with it; the
                // start's future then never completed, nor the group's stop, and the files stayed open
                boolean ownFailure = !(ex instanceof StoppedException);
                error = stoppedWhileStarting(ownFailure ? ex : null);
                log.info("group {} on node {}: stopped while starting{}", state.groupId, state.selfId,
                        ownFailure ? " (the start had failed meanwhile: " + ex + ")" : "");
            } else {
                log.error("group {} on node {} failed to start", state.groupId, state.selfId, ex);
                state.failure = ex;
                pubFailure = ex;
            }
            Throwable outcome = error;
            if (!store.isOpen()) {
                return failStart(outcome);
            }
            return Fiber.call(Attempt.of(store.close()), a -> {
                if (!a.ok()) {
                    log.warn("group {}: closing the log after a failed start failed", state.groupId, a.error);
                }
                return failStart(outcome);
            });
        }

        private FrameCallResult failStart(Throwable error) {
            started.completeExceptionally(error);
            fiberGroup.requestShutdown();
            return Fiber.frameReturn();
        }
    }

    private void startFibers() {
        String id = "-" + state.groupId;
        Fiber writer = new Fiber("leader-writer" + id, fiberGroup, leaderWriter);
        Fiber follower = new Fiber("follower-appender" + id, fiberGroup, followerAppender);
        Fiber apply = new Fiber("apply" + id, fiberGroup, applyManager);
        Fiber vote = new Fiber("vote" + id, fiberGroup, voteManager);
        Fiber read = new Fiber("reads" + id, fiberGroup, reads);
        mainFibers = new Fiber[]{writer, follower, apply, vote, read};
        for (Fiber f : mainFibers) {
            f.start();
        }
        if (config.snapshotIntervalMillis() > 0) {
            new Fiber("snapshot-timer" + id, fiberGroup, new SnapshotTimer(), true).start();
        }
        new Fiber("preferred-leader" + id, fiberGroup, preferredLeader.newTicker(), true).start();
    }

    /** Takes a snapshot every snapshotIntervalMillis when anything was applied since the last. */
    private final class SnapshotTimer extends FiberFrame<Void> {
        @Override
        public FrameCallResult execute(Object input) {
            return Fiber.sleep(config.snapshotIntervalMillis(), this::tick);
        }

        private FrameCallResult tick(Void v) {
            if (state.stopping) {
                return Fiber.frameReturn();
            }
            if (applyManager.appliedSinceSnapshot() > 0) {
                snapshotManager.requestSnapshot();
            }
            return execute(null);
        }
    }

    /**
     * Completes once the group has stopped ({@link #stop()}) and the last of its file operations on
     * the shared I/O pool has ended: only then may its directory be deleted, or another group be
     * started on it. A stopped group usually has none left; a failed one may still be finishing a
     * write or a segment's preallocation. Any thread.
     */
    public CompletableFuture<Void> whenFilesReleased() {
        return stopped.thenCompose(v -> ioExecutor.whenIdle());
    }

    /**
     * Stops the group: no more writes are taken, writes in the log but not applied fail with an
     * outcome-unknown error, the log is closed (after its last fsync) and the fibers end. A group
     * still starting ends its start at the next safe point instead (its log's recovery, or the
     * load of its latest snapshot, is abandoned; {@link #start()}'s future fails with a
     * {@link StoppedException}, "stopped while starting"), and its stop completes without waiting
     * for a recovery or snapshot-read task still reading: {@link #whenFilesReleased()} tells when
     * that task closed its files. A group never started has nothing to end: its stop completes at
     * once, {@link #startedFuture()} fails with a {@link StoppedException} and a later
     * {@link #start()} is refused with it. Any thread; idempotent.
     */
    public CompletableFuture<Void> stop() {
        boolean neverStarted;
        synchronized (startStopLock) {
            if (stopRequested) {
                return stopped;
            }
            stopRequested = true;
            neverStarted = !startCalled;
        }
        pubRole = RaftRole.NONE;
        if (neverStarted) {
            // No fiber ran and no file was opened (the log store opens its files in start's
            // recovery). Before, this stop waited for a start that never came: its future never
            // completed, and a node's stop or a group's removal waited on it until its timeout.
            started.completeExceptionally(new StoppedException("raft group " + state.groupId + " on node "
                    + state.selfId + " was stopped before it was started; a stopped group does not start again:"
                    + " make a new RaftGroup on its directory"));
            // calls that would run a fiber in it (callInGroup, takeSnapshot) are refused from now on
            fiberGroup.requestShutdown();
            stopped.complete(null);
            return stopped;
        }
        if (!started.isDone()) {
            // Still starting: the start ends at its next step instead of running to its end (the
            // log's recovery and replay take minutes on a large log, and a node's stop would wait
            // for them). The recovery stops at its next safe point and closes its files; the start
            // fails with a StoppedException after closing what it opened.
            store.abandonRecovery();
            // Likewise the load of the latest snapshot into the state machine: its stream reads
            // no more, and the state read is dropped (the start fails: the machine is never used).
            snapshotManager.abandonLoad();
        }
        started.whenComplete((v, e) -> {
            if (e != null || !fiberGroup.fireFiber("raft-stop-" + state.groupId, new StopFrame())) {
                fiberGroup.requestShutdown();
                fiberGroup.shutdownFuture().whenComplete((x, y) -> stopped.complete(null));
            }
        });
        return stopped;
    }

    private final class StopFrame extends FiberFrame<Void> {
        private int joined;

        @Override
        public FrameCallResult execute(Object input) {
            RaftState s = state;
            s.stopping = true;
            s.roleEpoch++;
            roleManager.onStop();
            String why = "raft group " + s.groupId + " on node " + s.selfId + " stopped";
            applyManager.failAllPending(why + " with the write in its log; its outcome is unknown");
            followerAppender.closeAcks();
            wakeReplicators();
            replicators = new Replicator[0];
            applyManager.wake();
            writeChannel.offer(LeaderWriter.NOOP_MARKER);
            followerChannel.offer(STOP);
            voteChannel.offer(STOP);
            readChannel.offer(STOP);
            return joinNext(null);
        }

        private FrameCallResult joinNext(Boolean ended) {
            if (joined < mainFibers.length) {
                return mainFibers[joined++].join(5_000, this::joinNext);
            }
            snapshotManager.close();
            // The leader writer and the read fiber have ended: writes and reads that were offered
            // after they took their last items (a caller that passed the stopping check just before
            // the stop) fail now, and so will any that land later.
            String stopping = "raft group " + state.groupId + " on node " + state.selfId + " is stopping";
            writeChannel.close(o -> {
                if (o instanceof WriteTask) {
                    responder.fail((WriteTask) o, ResponseCode.STOPPING, 0, stopping);
                }
            });
            readChannel.close(o -> {
                if (o instanceof PendingRead) {
                    reads.failStopped((PendingRead) o, stopping);
                }
            });
            return followerChannel.takeAll(leftovers, 0, this::answerLeftovers);
        }

        private final java.util.ArrayList<Object> leftovers = new java.util.ArrayList<>();

        /** Requests that came in after their fibers ended: answered, so the network layer is not left waiting. */
        private FrameCallResult answerLeftovers(Void v) {
            String msg = "raft group " + state.groupId + " on node " + state.selfId + " is stopping";
            for (Object o : leftovers) {
                if (o instanceof AppendEntriesRequest) {
                    ((AppendEntriesRequest) o).context.respondError(ResponseCode.STOPPING, msg);
                } else if (o instanceof InstallSnapshotRequest) {
                    ((InstallSnapshotRequest) o).context.respondError(ResponseCode.STOPPING, msg);
                }
            }
            leftovers.clear();
            return voteChannel.takeAll(leftovers, 0, this::answerVoteLeftovers);
        }

        private FrameCallResult answerVoteLeftovers(Void v) {
            String msg = "raft group " + state.groupId + " on node " + state.selfId + " is stopping";
            for (Object o : leftovers) {
                if (o instanceof VoteRequest) {
                    ((VoteRequest) o).context.respondError(ResponseCode.STOPPING, msg);
                }
            }
            leftovers.clear();
            return Fiber.call(Attempt.of(store.close()), this::afterClose);
        }

        private FrameCallResult afterClose(Attempt<Void> a) {
            if (!a.ok()) {
                log.warn("group {}: closing the log failed", state.groupId, a.error);
            }
            publish();
            getGroup().requestShutdown();
            getGroup().shutdownFuture().whenComplete((v, e) -> stopped.complete(null));
            return Fiber.frameReturn();
        }
    }

    // ---------------------------------------------------------------- entries from the network (I/O threads)

    /**
     * A client write arrived (network I/O thread): refused at once when this node is not the
     * leader or the group's pending writes are at their bound, else queued for the leader writer.
     */
    public void acceptWrite(ReqContext ctx, int bizType, Encodable body, int bodyBytes) {
        acceptWrite(ctx, bizType, body, bodyBytes, 0, 0);
    }

    /**
     * {@link #acceptWrite(ReqContext, int, Encodable, int)} of an exactly-once write ({@code sessionId} 0: none).
     * Raft's session table applies a (session, seq) at most once, so such a write is answered when this
     * node stops leading with it uncommitted, like {@link #acceptDeduplicatedWrite}'s.
     */
    public void acceptWrite(ReqContext ctx, int bizType, Encodable body, int bodyBytes, long sessionId, long sessionSeq) {
        acceptWrite(ctx, bizType, body, bodyBytes, sessionId, sessionSeq, sessionId != 0);
    }

    private void acceptWrite(ReqContext ctx, int bizType, Encodable body, int bodyBytes, long sessionId, long sessionSeq,
                             boolean answerAtStepDown) {
        RaftRole role = pubRole;
        if (role != RaftRole.LEADER) {
            if (stopRequested) {
                ctx.respondError(ResponseCode.STOPPING, "raft group " + state.groupId + " on node " + state.selfId
                        + " is stopping");
            } else {
                int leader = pubLeaderId;
                ctx.respond(WriteTask.errorPacket(ResponseCode.NOT_LEADER, leader, notLeaderMessage(leader)));
            }
            return;
        }
        if (refusingWrites) {
            ctx.respondError(ResponseCode.STOPPING, "raft group " + state.groupId + " on node " + state.selfId
                    + " is stopping and takes no new writes");
            return;
        }
        if (!flowControl.tryAcquire(bodyBytes)) {
            ctx.respondError(ResponseCode.FLOW_CONTROL, "raft group " + state.groupId + " has too many pending writes"
                    + " (limit " + flowControl.describeLimits() + "); retry later or slow down");
            return;
        }
        WriteTask t = new WriteTask(bizType, body, bodyBytes, ctx.deadlineNanos(), ctx, null);
        t.sessionId = sessionId;
        t.sessionSeq = sessionSeq;
        t.answerAtStepDown = answerAtStepDown;
        writeChannel.fireOffer(t);
    }

    /**
     * {@link #acceptWrite(ReqContext, int, Encodable, int)} of a write the state machine applies at
     * most once however many copies reach the log — it carries the state machine's own session, as a
     * DtKV write with a seq does. If this node stops leading with the write above the commit index it
     * knows, it answers at once SYS_ERROR with detail {@code RaftCommands.SYS_ERROR_STEPPED_DOWN}
     * (outcome unknown), so the client sends it again to the new leader instead of waiting for an
     * answer that a leader cut off from its peers cannot give before the deadline. Never use it for a
     * write that a second copy would apply twice.
     */
    public void acceptDeduplicatedWrite(ReqContext ctx, int bizType, Encodable body, int bodyBytes) {
        acceptWrite(ctx, bizType, body, bodyBytes, 0, 0, true);
    }

    /** An AppendEntries request from the leader (I/O thread). */
    public void acceptAppend(ReqContext ctx, AppendEntriesRequest req) {
        if (refuseStopping(ctx)) {
            return;
        }
        req.context = ctx;
        followerChannel.fireOffer(req);
    }

    /** An InstallSnapshot chunk from the leader (I/O thread). */
    public void acceptInstallSnapshot(ReqContext ctx, InstallSnapshotRequest req) {
        if (refuseStopping(ctx)) {
            return;
        }
        req.context = ctx;
        followerChannel.fireOffer(req);
    }

    /** A pre-vote or vote request (I/O thread). */
    public void acceptVote(ReqContext ctx, VoteRequest req) {
        if (refuseStopping(ctx)) {
            return;
        }
        req.context = ctx;
        voteChannel.fireOffer(req);
    }

    private boolean refuseStopping(ReqContext ctx) {
        if (!stopRequested) {
            return false;
        }
        ctx.respondError(ResponseCode.STOPPING, "raft group " + state.groupId + " on node " + state.selfId
                + " is stopping");
        return true;
    }

    /** A decoder for client bodies of {@code bizType} (see {@link StateMachine#newBodyDecoder}); null: raw bytes. */
    public PbCallback<? extends Encodable> newBodyDecoder(int bizType) {
        return sm.newBodyDecoder(bizType);
    }

    // ---------------------------------------------------------------- embedding

    /**
     * Proposes a write to the group. Completes with the state machine's result once the entry is
     * applied, or fails with {@link NotLeaderException} (not applied; this node is not the leader),
     * {@link FlowControlException} (not taken), {@link io.poyang.common.PoyangTimeoutException}
     * (the deadline passed before it got an index; not applied), {@link StoppedException},
     * {@link io.poyang.net.RemoteException} with BIZ_ERROR (the state machine refused it), or
     * {@link io.poyang.raft.client.RaftOutcomeUnknownException}. Any thread; the future completes
     * on the group's callback executor.
     */
    public CompletableFuture<Encodable> submit(int bizType, Encodable body, long timeoutMillis) {
        return submit(bizType, body, timeoutMillis, 0, 0);
    }

    /**
     * {@link #submit(int, Encodable, long)} exactly once: a write carrying the same
     * ({@code sessionId}, {@code seq}) as one already applied is not applied again, and completes
     * with the first application's result (see {@link SessionTable}). {@code sessionId} 0: no session.
     *
     * <p>With a session, a write still in this node's log above the commit index it knows when the
     * node stops leading (it lost its majority, saw a higher term, handed over) fails at once with a
     * {@link io.poyang.raft.client.LeaderSteppedDownException} (a
     * {@link io.poyang.raft.client.RaftOutcomeUnknownException}): its outcome is unknown, and the
     * embedder sends it again, same {@code sessionId} and {@code seq}, to the new leader, which
     * applies it once or answers with the first copy's result. Without a session it keeps waiting
     * (a copy could be applied twice): for its index to be applied on this node, or for its deadline
     * (outcome unknown), which on a leader cut off from its peers comes first.
     */
    public CompletableFuture<Encodable> submit(int bizType, Encodable body, long timeoutMillis, long sessionId, long seq) {
        CompletableFuture<Encodable> f = new CompletableFuture<>();
        if (stopRequested) {
            f.completeExceptionally(new StoppedException("raft group " + state.groupId + " is stopping"));
            return f;
        }
        if (pubRole != RaftRole.LEADER) {
            int leader = pubLeaderId;
            f.completeExceptionally(new NotLeaderException(state.groupId, leader, "node " + state.selfId
                    + " is not the leader of raft group " + state.groupId + (leader != 0 ? "; the leader is node "
                    + leader : "")));
            return f;
        }
        if (refusingWrites) {
            f.completeExceptionally(new StoppedException("raft group " + state.groupId + " is stopping and takes no"
                    + " new writes"));
            return f;
        }
        int bytes = body == null ? 0 : body.encodedSize();
        if (!flowControl.tryAcquire(bytes)) {
            f.completeExceptionally(new FlowControlException("raft group " + state.groupId
                    + " has too many pending writes (limit " + flowControl.describeLimits() + ")"));
            return f;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        WriteTask t = new WriteTask(bizType, body, bytes, deadline, null, f);
        t.sessionId = sessionId;
        t.sessionSeq = seq;
        // the session table applies a (session, seq) once, so a copy sent to the new leader is safe:
        // answered at a step-down like acceptWrite's session writes, not left to its deadline
        t.answerAtStepDown = sessionId != 0;
        writeChannel.fireOffer(t);
        return f;
    }

    /**
     * A linearizable read of the state machine (DESIGN §6). {@code task.run()} is called on the
     * group's dispatcher thread once the read is safe — this node has applied at least the read
     * index confirmed for it — so the state machine can be read there without locks; or
     * {@code task.fail(e)} with a {@link NotLeaderException} (LEASE_READ and READ_INDEX on a node
     * that does not lead; FOLLOWER_READ with no leader known), a
     * {@link io.poyang.common.PoyangTimeoutException} (the deadline passed first) or a
     * {@link StoppedException}. Reads queued together share one lease check, one heartbeat round
     * or one request to the leader. Any thread; allocates one small object per read.
     *
     * @param kind          {@link ReadKind#LEASE_READ} (the default, falling back to READ_INDEX
     *                      while the lease is not valid), {@link ReadKind#READ_INDEX} or
     *                      {@link ReadKind#FOLLOWER_READ}
     * @param deadlineNanos on {@link System#nanoTime()}'s scale; Long.MAX_VALUE for none
     */
    public void read(ReadKind kind, long deadlineNanos, ReadTask task) {
        if (stopRequested) {
            task.fail(new StoppedException("raft group " + state.groupId + " on node " + state.selfId + " is stopping"));
            return;
        }
        if (kind != ReadKind.FOLLOWER_READ && pubRole != RaftRole.LEADER) {
            int leader = pubLeaderId;
            task.fail(new NotLeaderException(state.groupId, leader, notLeaderMessage(leader)));
            return;
        }
        readChannel.fireOffer(new PendingRead(task, kind == null ? ReadKind.LEASE_READ : kind, deadlineNanos, null));
    }

    /**
     * {@link #read(ReadKind, long, ReadTask)} for embedders: {@code reader} runs on the dispatcher
     * thread once the read is safe and the future completes with its result (or its exception) on
     * the group's callback executor.
     */
    public <T> CompletableFuture<T> read(ReadKind kind, long timeoutMillis, java.util.function.Supplier<T> reader) {
        CompletableFuture<T> f = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        read(kind, deadline, new ReadTask() {
            @Override
            public void run() {
                T value;
                try {
                    value = reader.get();
                } catch (Throwable e) {
                    responder.completeLater(f, null, e);
                    return;
                }
                responder.completeLater(f, value, null);
            }

            @Override
            public void fail(Throwable error) {
                responder.completeLater(f, null, error);
            }
        });
        return f;
    }

    /**
     * A follower asks this node for a read index (READ_INDEX on the replication port; network I/O
     * thread): answered with the commit index once it is confirmed (lease or heartbeat round), or
     * NOT_LEADER.
     */
    public void acceptReadIndex(ReqContext ctx, int fromNodeId) {
        if (refuseStopping(ctx)) {
            return;
        }
        if (pubRole != RaftRole.LEADER) {
            int leader = pubLeaderId;
            ctx.respond(WriteTask.errorPacket(ResponseCode.NOT_LEADER, leader, "node " + state.selfId
                    + " is not the leader of raft group " + state.groupId));
            return;
        }
        Members m = pubMembers;
        if (!m.contains(fromNodeId)) {
            ctx.respondError(ResponseCode.BAD_REQUEST, "node " + fromNodeId + " is not in the configuration of raft group "
                    + state.groupId + " (" + m + ")");
            return;
        }
        readChannel.fireOffer(new PendingRead(null, ReadKind.LEASE_READ, ctx.deadlineNanos(), ctx));
    }

    /**
     * Prepares a membership change to {@code voters} and {@code observers} (joint consensus; see
     * {@link MembershipManager}): new voters are caught up as observers first, then the joint
     * configuration is appended; completes with it once committed. Idempotent. Leader only
     * ({@link NotLeaderException} otherwise). Any thread.
     */
    public CompletableFuture<Members> prepareMembers(int[] voters, int[] observers, long timeoutMillis) {
        return membership.prepare(voters, observers, timeoutMillis);
    }

    /** Commits the prepared change to {@code voters} and {@code observers}; completes with the new configuration. Idempotent. */
    public CompletableFuture<Members> commitMembers(int[] voters, int[] observers, long timeoutMillis) {
        return membership.commit(voters, observers, timeoutMillis);
    }

    /** Aborts the prepared change (back to the configuration before it); idempotent. */
    public CompletableFuture<Members> abortMembers(long timeoutMillis) {
        return membership.abort(timeoutMillis);
    }

    /**
     * The first step of a graceful stop: from now on new writes are refused (STOPPING, which clients
     * retry on another node) while the writes already taken go on to their answers; watch
     * {@link #pendingWrites()} fall to 0, then {@link #stop()}. Reads are still served. Any thread.
     */
    public void refuseNewWrites() {
        refusingWrites = true;
    }

    /** Writes taken and not yet answered (admission to answer; a racy read for metrics and draining). */
    public int pendingWrites() {
        return flowControl.pendingCount();
    }

    /** Bytes of the bodies of {@link #pendingWrites()}. */
    public long pendingWriteBytes() {
        return flowControl.pendingBytes();
    }

    /**
     * Hands the leadership to voter {@code targetId} (see {@link LeaderTransfer}): new writes wait,
     * the target is caught up and told to stand; completes once it leads. Fails with a timeout (and
     * this node goes on leading) when the target has not won within an election timeout of the
     * hand-over, {@link NotLeaderException} on a node that does not lead. Any thread.
     */
    public CompletableFuture<Void> transferLeadership(int targetId, long timeoutMillis) {
        return transfer.transfer(targetId, timeoutMillis);
    }

    /**
     * Hands the leadership to the node that should lead next, for a leader about to stop: the target
     * of a transfer already under way (this one then waits for its outcome), else the
     * {@link #setPreferredLeader preferred leader} when it is a voter that answers and is caught up
     * (within {@code maxAppendItems} entries, or as far as any other voter), else the voter whose log
     * is furthest along (the rule: {@link SuccessorChoice}). Completes with that node's id once it
     * leads, or with 0 when this node does not lead or has no other voter; fails as
     * {@link #transferLeadership} does. Any thread.
     */
    public CompletableFuture<Integer> transferLeadershipToSuccessor(long timeoutMillis) {
        return transfer.transferToSuccessor(timeoutMillis);
    }

    /**
     * Names the node this group's leadership belongs on (0, the default: none). Whichever node leads
     * hands the leadership to it, once it is a caught-up voter that answers, and again after every
     * failover — a placement that lasts, where {@link #transferLeadership} is undone by the next
     * election (the rule: {@link PreferredLeaderKeeper}). A node that is not a voter is no error: the
     * leader stays where it is until it becomes one. Each node of the group keeps its own setting
     * (whichever leads acts on its own): set it on every node. Any thread, before or after
     * {@link #start()}; a running group checks it within an election timeout. Not persisted: give
     * it again after a restart (a {@link io.poyang.raft.server.RaftServer} keeps it across
     * {@code restartGroup}, and takes it at start from its builder's {@code preferredLeader}).
     *
     * @throws IllegalArgumentException for a negative id
     */
    public void setPreferredLeader(int nodeId) {
        if (nodeId < 0) {
            throw new IllegalArgumentException("a preferred leader is a node id, or 0 for none: " + nodeId);
        }
        // the hop to the dispatcher wakes the keeper; before the start its first check reads the id
        preferredLeader.prefer(nodeId, started.isDone() && !stopRequested);
    }

    /** The preferred leader's node id ({@link #setPreferredLeader}); 0: none. Any thread. */
    public int preferredLeader() {
        return preferredLeader.preferredId();
    }

    /** Hand-overs to the preferred leader this node started as leader so far (a metric; racy read). */
    public long preferredLeaderTransfers() {
        return preferredLeader.transfersStarted();
    }

    /** TIMEOUT_NOW from this group's leader (replication port; network I/O thread). */
    public void acceptTimeoutNow(ReqContext ctx, io.poyang.raft.client.FieldMessage req) {
        if (refuseStopping(ctx)) {
            return;
        }
        voteChannel.fireOffer(new LeaderTransfer.TimeoutNow(req, ctx));
    }

    /** The TIMEOUT_NOW request's schema, for the replication port's processor. */
    public static final io.poyang.raft.client.FieldMessage.Schema TIMEOUT_NOW_REQUEST = LeaderTransfer.REQUEST;

    /** Takes a snapshot now; completes with what it covers (null when nothing was applied yet). Any thread. */
    public CompletableFuture<SnapshotMeta> takeSnapshot() {
        return snapshotManager.takeSnapshot();
    }

    /**
     * Runs {@code task} on the group's dispatcher thread, between the group's steps (so it sees the
     * state machine between two applies), and completes with its result. For tests and tools. Any
     * thread.
     */
    public <T> CompletableFuture<T> callInGroup(Callable<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        boolean fired = fiberGroup.fireFiber("call-" + state.groupId, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                try {
                    result.complete(task.call());
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
                return Fiber.frameReturn();
            }
        });
        if (!fired) {
            result.completeExceptionally(new StoppedException("raft group " + state.groupId + " is stopped"));
        }
        return result;
    }

    /** The state machine of this group on this node. */
    public StateMachine stateMachine() {
        return sm;
    }

    /**
     * The fiber group the raft group runs in: a state machine may start fibers of its own here
     * (they run on the group's dispatcher thread, between applies). Stopping the raft group stops
     * them: they should end when {@link FiberGroup#isShouldStop()} is true.
     */
    public FiberGroup fiberGroup() {
        return fiberGroup;
    }

    /** The wall clock of the group's dispatcher (ms since the epoch, cached once per dispatcher round). */
    public long wallClockMillis() {
        return dispatcher.timestamp().wallClockMillis();
    }

    /**
     * The time (ms since the epoch) this node stamps on the entries it writes now as leader: the wall
     * clock when it became leader plus the monotonic time since. A step of the wall clock during the
     * term (NTP, an operator, a VM resumed) moves no timestamp, so a state machine that counts
     * leases and TTLs by entry timestamps (DtKV) neither ends them early nor freezes them; the
     * replicas see the same times whatever their own clocks do. Off the leader: the wall clock.
     * Call it on the group's dispatcher (apply, a fiber of {@link #fiberGroup}, onRoleChange).
     */
    public long leaderClockMillis() {
        RaftState s = state;
        if (s.role != RaftRole.LEADER) {
            return wallClockMillis();
        }
        return s.leaderSinceWallMillis + TimeUnit.NANOSECONDS.toMillis(nowNanos() - s.leaderSinceNanos);
    }

    public boolean isLeader() {
        return pubRole == RaftRole.LEADER;
    }

    /** The leader this node knows of, or 0. */
    public int leaderId() {
        return pubLeaderId;
    }

    public RaftRole role() {
        return pubRole;
    }

    public int term() {
        return pubTerm;
    }

    public long commitIndex() {
        return pubCommit;
    }

    public long lastApplied() {
        return pubApplied;
    }

    /** fsyncs of this group's log so far (a plain read of a counter the dispatcher keeps: for metrics). */
    public long logFsyncCount() {
        return store.fsyncCount();
    }

    /** How long this group's log fsyncs took (racy reads; metrics). */
    public io.poyang.common.DurationHistogram logFsyncLatency() {
        return store.fsyncLatency();
    }

    /**
     * Latency of the client writes this node led: from the leader writer taking a write (and giving it
     * an index) to its answer — log append, replication, commit and apply (racy reads; metrics).
     */
    public io.poyang.common.DurationHistogram writeLatency() {
        return responder.latency;
    }

    /** Client writes this node answered as leader: {applied, refused by the state machine, failed} (racy reads). */
    public long[] writeOutcomes() {
        WriteResponder r = responder;
        return new long[]{r.succeeded, r.rejected, r.failed};
    }

    /**
     * The lengths of the group's queues, read on its dispatcher: {writes waiting for the leader
     * writer, reads waiting, AppendEntries/snapshot chunks waiting for the follower appender, votes
     * waiting}. Any thread; for metrics.
     */
    public CompletableFuture<int[]> queueLengths() {
        return callInGroup(() -> new int[]{writeChannel.size(), readChannel.size(), followerChannel.size(),
                voteChannel.size()});
    }

    /** Positional writes to this group's log so far (for metrics). */
    public long logWriteCount() {
        return store.writeCount();
    }

    /** Bytes written to this group's log so far, items and segment markers (for metrics; read racily). */
    public long logWrittenBytes() {
        return store.writtenBytes();
    }

    /** Counters of the group's pipeline, for metrics: batches taken by the leader writer, AppendEntries
     * sent and received, apply calls. Plain fields written by the dispatcher; read racily. */
    long writerBatches;
    long appendsSent;
    long appendsReceived;
    long applyBatches;
    long diskReadsForFollowers;
    long appendsFailed;
    long snapshotTransfers;

    /**
     * {writer batches, appends sent, appends received, apply batches, log reads for lagging
     * followers, appends that failed (timeouts, unreachable followers), snapshot transfers started}
     * so far (racy reads; metrics).
     */
    public long[] pipelineCounters() {
        return new long[]{writerBatches, appendsSent, appendsReceived, applyBatches, diskReadsForFollowers,
                appendsFailed, snapshotTransfers};
    }

    /**
     * Read figures so far: {reads served under the lease, reads confirmed by a heartbeat round,
     * heartbeat rounds, follower reads, read-index requests this follower sent, read-index requests
     * this leader answered} (racy reads; metrics and tests).
     */
    public long[] readCounters() {
        ReadIndexManager r = reads;
        return new long[]{r.leaseReadCount, r.confirmedReadCount, r.confirmRounds, r.followerReadCount, r.indexFetches,
                r.indexRequestsServed};
    }

    /** Elections this node started (pre-vote rounds), since it started: a metric, and what tests wait on. */
    public long electionRounds() {
        return pubElectionRounds;
    }

    void countElectionRound() {
        pubElectionRounds++;
    }

    /** The first index still in this node's log (entries below it are in a snapshot). */
    public long firstLogIndex() {
        return pubFirstLog;
    }

    /** The last index in this node's log. */
    public long lastLogIndex() {
        return pubLastLog;
    }

    /**
     * Why this node takes no write or leader read, for a NOT_LEADER answer: a failed group says so
     * (the client's deadline error then tells the operator what to do), else the leader it knows.
     * Any thread.
     */
    private String notLeaderMessage(int leader) {
        Throwable f = pubFailure;
        if (f != null) {
            return "raft group " + state.groupId + " on node " + state.selfId + " has failed and needs a restart: "
                    + f.getMessage();
        }
        return "node " + state.selfId + " is not the leader of raft group " + state.groupId
                + (leader != 0 ? "; the leader is node " + leader : "; no leader is known yet");
    }

    /** The error that made the group stop taking part (it needs a restart), or null. */
    public Throwable failure() {
        return pubFailure;
    }

    /** Where the group stands on this node, as RAFT_STATUS reports it. Any thread. */
    public RaftStatusResponse status() {
        Throwable f = pubFailure;
        return new RaftStatusResponse(state.groupId, state.selfId, pubTerm, pubLeaderId, pubRole, pubCommit, pubApplied,
                pubLastLog, state.members.voters(), f == null ? "" : f.toString());
    }

    /**
     * Where the group stands on this node in detail (what ADMIN_GROUP_STATUS answers): taken on the
     * dispatcher thread between two steps, so the figures belong to one moment. On the leader it
     * includes every other member's match index and lag. Any thread.
     */
    public CompletableFuture<io.poyang.raft.client.GroupStatus> detailedStatus() {
        return callInGroup(this::statusNow);
    }

    private io.poyang.raft.client.GroupStatus statusNow() {
        RaftState s = state;
        Members m = s.members;
        java.util.List<io.poyang.raft.client.GroupStatus.Follower> followers = new java.util.ArrayList<>();
        long last = store.lastIndex();
        if (s.isLeader()) {
            for (int i = 0; i < m.slotCount(); i++) {
                int id = m.nodeAt(i);
                if (id != s.selfId) {
                    long match = commitManager.matchIndexOf(id);
                    followers.add(new io.poyang.raft.client.GroupStatus.Follower(id, match, Math.max(0, last - match),
                            !m.isVoter(id)));
                }
            }
        }
        Throwable f = s.failure;
        RaftRole role = s.stopping || stopRequested ? RaftRole.NONE : s.role;
        return new io.poyang.raft.client.GroupStatus(s.groupId, s.selfId, role, s.currentTerm, s.leaderId,
                store.firstIndex(), last, store.persistedIndex(), s.commitIndex, s.lastApplied, m.voters(), m.isJoint(),
                m.newVoters(), m.observers(), followers, transfer.target(), f == null ? "" : f.toString(),
                preferredLeader.preferredId());
    }

    /**
     * The group's configuration as this node last saw it (voters, a prepared change, observers), in
     * force from when its entry was appended (raft decides with it) even if that entry is later cut.
     * Any thread.
     */
    public Members members() {
        return pubMembers;
    }

    /**
     * The configuration in force at this node's commit index: one that stays (what a node records as
     * the group's layout). It lags {@link #members} while a change's entry is not committed yet. Any thread.
     */
    public Members committedMembers() {
        return pubCommittedMembers;
    }

    public CompletableFuture<Void> startedFuture() {
        return started;
    }

    // ---------------------------------------------------------------- for the parts (dispatcher thread)

    long nowNanos() {
        return dispatcher.timestamp().nanoTime();
    }

    /** Whether {@link #stop()} was asked (a start then ends at its next step). */
    boolean stopRequested() {
        return stopRequested;
    }

    <T> FiberFuture<T> blocking(String name, Callable<T> task) {
        return fiberGroup.executeBlocking(name, ioExecutor, task);
    }

    void publish() {
        RaftState s = state;
        pubTerm = s.currentTerm;
        pubLeaderId = s.leaderId;
        pubRole = s.stopping || stopRequested ? RaftRole.NONE : s.role;
        pubMembers = s.members;
        publishProgress();
    }

    void publishProgress() {
        pubCommit = state.commitIndex;
        MembershipManager mm = membership;
        if (mm != null) {
            pubCommittedMembers = mm.configAt(state.commitIndex);   // a list of one or two, usually
        }
        pubApplied = state.lastApplied;
        pubLastLog = store.lastIndex();
        pubFirstLog = store.firstIndex();
    }

    private void onPersisted(long persisted) {
        commitManager.onSelfPersisted(persisted);
        followerAppender.onPersisted(persisted);
        store.setCommitIndex(Math.min(state.commitIndex, persisted));
    }

    /** The new leader starts one replicator per other node of the configuration (voters and observers). */
    void startReplicators() {
        replicators = new Replicator[0];
        syncReplicators(store.lastIndex() + 1);
    }

    /**
     * Makes the replicators match the configuration: one per other node, started for nodes that
     * joined, ended for nodes that left. Leader, dispatcher thread.
     */
    void syncReplicators(long firstNextIndex) {
        RaftState s = state;
        Members m = s.members;
        java.util.ArrayList<Replicator> keep = new java.util.ArrayList<>();
        for (Replicator r : replicators) {
            if (m.contains(r.peerId)) {
                keep.add(r);
            } else {
                r.remove();
            }
        }
        for (int i = 0; i < m.slotCount(); i++) {
            int id = m.nodeAt(i);
            if (id == s.selfId || replicator(id, keep) != null) {
                continue;
            }
            FiberChannel<Object> inbox = fiberGroup.newChannel("replicate-" + s.groupId + "-" + id);
            Replicator r = new Replicator(this, id, s.roleEpoch, s.currentTerm, inbox, firstNextIndex);
            keep.add(r);
            new Fiber("replicator-" + s.groupId + "-" + id, fiberGroup, new Replicator.Runner(r)).start();
        }
        replicators = keep.toArray(new Replicator[0]);
    }

    private static Replicator replicator(int peerId, java.util.List<Replicator> list) {
        for (Replicator r : list) {
            if (r.peerId == peerId) {
                return r;
            }
        }
        return null;
    }

    /** The replicator of {@code peerId} while this node leads, or null. */
    Replicator replicatorOf(int peerId) {
        for (Replicator r : replicators) {
            if (r.peerId == peerId) {
                return r;
            }
        }
        return null;
    }

    Replicator[] replicators() {
        return replicators;
    }

    /** A follower's persisted index moved up (leader): membership catch-up and leader transfer watch this. */
    void onFollowerProgress(int peerId, long matchIndex) {
        membership.onProgress();
        transfer.onProgress();
    }

    /** Queues one of raft's own entries (a configuration) for the leader writer. Dispatcher thread. */
    void offerInternalWrite(WriteTask t) {
        writeChannel.offer(t);
    }

    void wakeReplicators() {
        for (Replicator r : replicators) {
            r.wake();
        }
    }

    void onLeadershipLost() {
        reads.onLeadershipLost();
        if (state.failure == null) {
            // (a group that failed answers every waiting write with its failure instead, at once and
            // for good: failAllPending)
            applyManager.answerUncommittedAtStepDown(state.commitIndex);
        }
        transfer.onProgress();
        membership.onProgress();
        Replicator[] rs = replicators;
        replicators = new Replicator[0];
        for (Replicator r : rs) {
            r.wake();   // it sees the new epoch and ends
        }
    }

    /** A fatal error: the group stops taking part (no votes, no leadership) until it is restarted. */
    void fail(Throwable e) {
        RaftState s = state;
        if (s.failure != null) {
            return;
        }
        s.failure = e;
        pubFailure = e;
        log.error("group {} on node {} FAILED and takes no further part until restarted: {}", s.groupId, s.selfId,
                e.toString(), e);
        if (s.isLeader()) {
            roleManager.becomeFollower(s.currentTerm, 0);
        }
        String failed = "raft group " + s.groupId + " on node " + s.selfId + " failed: " + e;
        applyManager.failAllPending(failed);
        reads.onGroupFailed(failed + "; restart it");
        publish();
    }

    @Override
    public String toString() {
        return "RaftGroup(" + state.groupId + " on node " + state.selfId + ")";
    }
}
