package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.common.IntObjMap;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;
import io.poyang.net.ResponseCode;
import io.poyang.raft.sm.ApplyBatch;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.LogItem;
import io.poyang.raft.store.LogStoreFailedException;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The one fiber that applies committed entries to the state machine, in index order, in batches
 * (everything committed since the last round, up to {@code maxApplyBatch}): entries come from the
 * {@link TailCache}, or from disk after a restart. After each batch it answers the writes waiting
 * for those indexes (their responses queue up per connection and leave together), gives their
 * flow-control room back in one step, and trims the tail cache. All state-machine calls happen
 * here — apply, snapshot capture and snapshot install — so they never overlap. Dispatcher thread.
 *
 * <p>A write is answered by the entry at its index: success when that entry is the write's own
 * (same term), NOT_LEADER ("not applied") when another leader's entry took the index. A write in
 * the log of a leader that stepped down is therefore answered correctly once the new leader's
 * entry for that index is applied here.
 */
final class ApplyManager extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(ApplyManager.class);
    private static final int MAX_LOAD_BYTES = 8 << 20;
    /** answer(): the entry is raft's own (a configuration), answered with success and no result. */
    private static final int OWN_ENTRY_NO_RESULT = -2;
    /** The entry repeats a (session, seq) already applied: answered with the first result. */
    private static final int DUPLICATE = -3;
    /** The entry's seq is below its session's window: outcome unknown. */
    private static final int SESSION_TOO_OLD = -4;
    // per item of the batch being applied: its slot in the ApplyBatch (>= 0) or one of the kinds above
    private int[] itemKind = new int[0];
    private long[] sessionOf = new long[0];
    private long[] seqOf = new long[0];
    private Object[] dupResult = new Object[0];
    private int[] dupCode = new int[0];
    private String[] dupMessage = new String[0];
    private int[] dupPendingSlot = new int[0];

    private final RaftGroup g;
    private final StateMachine sm;
    /** {@link StateMachine#appliesRaftEntries()}, asked once. */
    private final boolean appliesRaftEntries;
    private final FiberCondition wakeCondition;
    /** Writes of the current leadership, by index. */
    private final ArrayDeque<WriteTask> pending = new ArrayDeque<>();
    /** Writes of an earlier leadership of this node, by index, answered when their index is applied. */
    private ArrayDeque<WriteTask> stale = new ArrayDeque<>();
    private final ApplyBatch batch = new ApplyBatch();
    private final ArrayList<LogItem> items = new ArrayList<>();
    private final PbParser parser = new PbParser(Integer.MAX_VALUE);
    private final IntObjMap<Object> decoders = new IntObjMap<>();
    private static final Object NO_DECODER = new Object();
    private final FrameCall<Void> loopCall = this::loop;
    private final FrameCall<Boolean> afterIdleWait = this::afterIdleWait;
    /** How often writes stuck past their deadline are looked for. */
    private static final long SWEEP_NANOS = 100_000_000L;
    /** Failed reads of entries to apply (retried every 50 ms): logged once per interval, not at each. */
    private final WarningThrottle loadFailures = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));
    private long nextSweepNanos;
    private long appliedSinceSnapshot;
    private FiberFuture<SnapshotCapture> captureRequest;
    private SnapshotFiles.Snapshot installSnapshot;
    private FiberFuture<Boolean> installResult;
    /** The apply fiber has ended (the group stops, or the fiber failed): snapshot requests are refused at once. */
    private boolean ended;
    /** Why it ended: what a refused snapshot request fails with. */
    private Throwable endedBecause;

    ApplyManager(RaftGroup g, StateMachine sm, FiberCondition wakeCondition) {
        this.g = g;
        this.sm = sm;
        this.appliesRaftEntries = sm.appliesRaftEntries();
        this.wakeCondition = wakeCondition;
    }

    // ---------------------------------------------------------------- writes waiting for their index

    /** The leader writer gave {@code t} an index. */
    void addPending(WriteTask t) {
        pending.add(t);
    }

    /**
     * The node became leader again: writes left from an earlier leadership keep waiting for their
     * indexes, but apart, since the new leadership's indexes may overlap theirs.
     */
    void onBecomeLeader() {
        if (pending.isEmpty()) {
            return;
        }
        ArrayDeque<WriteTask> merged = new ArrayDeque<>(stale.size() + pending.size());
        while (!stale.isEmpty() || !pending.isEmpty()) {
            WriteTask a = stale.peekFirst();
            WriteTask b = pending.peekFirst();
            merged.add(b == null || (a != null && a.index <= b.index) ? stale.pollFirst() : pending.pollFirst());
        }
        stale = merged;
    }

    /** The log refused a batch: fails the writes from {@code index} on (they were not written). */
    void failPendingFrom(long index, int code, String message) {
        while (!pending.isEmpty() && pending.peekLast().index >= index) {
            g.responder.fail(pending.pollLast(), code, 0, message);
        }
        g.responder.flush();
    }

    /** Fails every waiting write (the group stops or failed): SYS_ERROR, their outcome is unknown. */
    void failAllPending(String message) {
        for (WriteTask t : pending) {
            g.responder.fail(t, ResponseCode.SYS_ERROR, 0, message);
        }
        for (WriteTask t : stale) {
            g.responder.fail(t, ResponseCode.SYS_ERROR, 0, message);
        }
        pending.clear();
        stale.clear();
        g.responder.flush();
    }

    /**
     * This node stopped leading: the writes that the state machine deduplicates
     * ({@link WriteTask#answerAtStepDown}) and that are above {@code commitIndex} are answered now,
     * outcome unknown ({@link io.poyang.raft.client.RaftCommands#SYS_ERROR_STEPPED_DOWN}; an embedded
     * write's future fails with a {@link io.poyang.raft.client.LeaderSteppedDownException}), so their
     * clients send them again to the new leader instead of waiting here. Kept waiting, a write of a
     * leader cut off from its peers would learn its fate only when the partition heals, mostly after
     * its deadline. Committed ones, and writes that cannot be sent again safely, keep waiting for
     * their index as before.
     */
    void answerUncommittedAtStepDown(long commitIndex) {
        int answered = answerUncommittedAtStepDown(pending, commitIndex) + answerUncommittedAtStepDown(stale, commitIndex);
        if (answered != 0) {
            g.responder.flush();
            log.info("group {}: node {} stepped down with {} deduplicated writes above commit index {}; answered"
                    + " them outcome unknown so their clients send them to the new leader", g.state.groupId,
                    g.state.selfId, answered, commitIndex);
        }
    }

    private int answerUncommittedAtStepDown(ArrayDeque<WriteTask> q, long commitIndex) {
        int answered = 0;
        int n = q.size();
        for (int i = 0; i < n; i++) {
            // one pass in index order, keeping the others in place (the queue stays sorted)
            WriteTask t = q.pollFirst();
            if (t.answerAtStepDown && t.index > commitIndex) {
                g.responder.fail(t, ResponseCode.SYS_ERROR, io.poyang.raft.client.RaftCommands.SYS_ERROR_STEPPED_DOWN,
                        "node " + g.state.selfId + " stopped leading raft group " + g.state.groupId + " with the write"
                                + " (index " + t.index + ") not committed as far as it knows; its outcome is unknown:"
                                + " send it again, same session and seq, to the new leader");
                answered++;
            } else {
                q.addLast(t);
            }
        }
        return answered;
    }

    int pendingCount() {
        return pending.size() + stale.size();
    }

    /** Something to do: commit moved, a snapshot is wanted, the group stops. */
    void wake() {
        wakeCondition.signal();
    }

    // ---------------------------------------------------------------- snapshot requests

    /** Captures the state machine between two batches; completes with null when nothing was applied yet. */
    FiberFuture<SnapshotCapture> requestCapture() {
        if (ended) {
            FiberFuture<SnapshotCapture> f = g.fiberGroup.newFuture("snapshot-capture");
            f.completeExceptionally(endedBecause);
            return f;
        }
        if (captureRequest == null) {
            captureRequest = g.fiberGroup.newFuture("snapshot-capture");
            wake();
        }
        return captureRequest;
    }

    /** Installs a received snapshot between two batches; completes with false when it is not newer than the state. */
    FiberFuture<Boolean> requestInstall(SnapshotFiles.Snapshot snapshot) {
        if (ended) {
            FiberFuture<Boolean> f = g.fiberGroup.newFuture("snapshot-install");
            f.completeExceptionally(endedBecause);
            return f;
        }
        installSnapshot = snapshot;
        installResult = g.fiberGroup.newFuture("snapshot-install");
        wake();
        return installResult;
    }

    long appliedSinceSnapshot() {
        return appliedSinceSnapshot;
    }

    // ---------------------------------------------------------------- the loop

    @Override
    public FrameCallResult execute(Object input) {
        return loop(null);
    }

    private FrameCallResult loop(Void v) {
        RaftState s = g.state;
        if (s.stopping) {
            end(stopped());
            return Fiber.frameReturn();
        }
        long now = g.nowNanos();
        if (now - nextSweepNanos >= 0) {
            nextSweepNanos = now + SWEEP_NANOS;
            sweepExpired(now);
        }
        if (installSnapshot != null) {
            return install();
        }
        if (captureRequest != null) {
            capture();
        }
        if (s.lastApplied < s.commitIndex && s.failure == null) {
            long from = s.lastApplied + 1;
            long to = Math.min(s.commitIndex, s.lastApplied + g.config.maxApplyBatch());
            items.clear();
            TailCache cache = g.tailCache;
            for (long i = from; i <= to; i++) {
                LogItem it = cache.get(i);
                if (it == null) {
                    break;
                }
                items.add(it);
            }
            if (items.isEmpty()) {
                return Fiber.call(Attempt.of(g.store.load(from, (int) (to - from + 1), MAX_LOAD_BYTES)), this::afterLoad);
            }
            applyItems(items);
            items.clear();
            // Let the group's other fibers run between batches.
            return Fiber.yield(loopCall);
        }
        // Idle: wake up now and then to fail writes whose deadline passed while they waited.
        return wakeCondition.await(SWEEP_NANOS / 1_000_000, afterIdleWait);
    }

    private FrameCallResult afterIdleWait(Boolean signalled) {
        return loop(null);
    }

    /**
     * Writes waiting in the log past their deadline (their leader lost its majority and the index
     * is not applied yet) are answered: outcome unknown, since the entry may still commit. The
     * writer has given up anyway; this frees its flow-control room and completes embedded futures.
     */
    private void sweepExpired(long now) {
        boolean any = sweep(pending, now) | sweep(stale, now);
        if (any) {
            g.responder.flush();
        }
    }

    private boolean sweep(ArrayDeque<WriteTask> q, long now) {
        boolean any = false;
        WriteTask t;
        while ((t = q.peekFirst()) != null && t.isExpired(now)) {
            q.pollFirst();
            g.responder.fail(t, ResponseCode.SYS_ERROR, 0, "the write (index " + t.index + ") was not committed before"
                    + " its deadline; its outcome is unknown (it may still be applied)");
            any = true;
        }
        return any;
    }

    private FrameCallResult afterLoad(Attempt<List<LogItem>> a) {
        RaftState s = g.state;
        if (s.stopping) {
            return loop(null);   // which ends the loop, failing the snapshot requests that wait for it
        }
        if (!a.ok()) {
            LogStoreFailedException storeFailure = g.store.failure();
            if (storeFailure != null) {
                // Damaged data (the store fails when a read finds it) or a failed store: retrying would
                // read it again every 50 ms for ever (at start, until the start timed out). The group
                // fails once, with the store's error naming the file and offset.
                g.fail(storeFailure);
                return loop(null);
            }
            // anything else (an I/O error) is retried: warn at once, then once per interval with a count
            if (installSnapshot == null && loadFailures.occurred(System.nanoTime())) {
                if (loadFailures.isFirstOfRun()) {
                    log.warn("group {} on node {}: reading entries from {} to apply failed; retrying every 50 ms",
                            s.groupId, s.selfId, s.lastApplied + 1, a.error);
                } else {
                    log.warn("group {} on node {}: reading entries from {} to apply still fails ({} more failed"
                                    + " attempts in the last {} ms): {}", s.groupId, s.selfId, s.lastApplied + 1,
                            loadFailures.notLoggedBefore() + 1,
                            TimeUnit.NANOSECONDS.toMillis(loadFailures.nanosSinceLastLogged()), a.error.toString());
                }
            }
            return wakeCondition.await(50, this::afterRetryWait);
        }
        if (loadFailures.inRun()) {
            log.info("group {} on node {}: reading entries to apply works again after {} failed attempts", s.groupId,
                    s.selfId, loadFailures.endRun());
        }
        List<LogItem> loaded = a.value;
        items.clear();
        long expect = s.lastApplied + 1;
        for (int i = 0; i < loaded.size(); i++) {
            LogItem it = loaded.get(i);
            if (it.getIndex() != expect || it.getIndex() > s.commitIndex) {
                break;
            }
            items.add(it);
            expect++;
        }
        if (items.isEmpty()) {
            // Not written yet (a new leader's commit may run ahead of its own write): wait a little.
            return wakeCondition.await(5, this::afterRetryWait);
        }
        applyItems(items);
        items.clear();
        return Fiber.yield(loopCall);
    }

    private FrameCallResult afterRetryWait(Boolean signalled) {
        return loop(null);
    }

    private void applyItems(List<LogItem> list) {
        RaftState s = g.state;
        int n = list.size();
        ensureItemArrays(n);
        boolean anySession = false;
        for (int i = 0; i < n; i++) {
            LogItem it = list.get(i);
            long[] sess = it.getType() == LogItem.TYPE_NORMAL ? SessionTable.parseHeader(it.getHeader()) : null;
            sessionOf[i] = sess == null ? 0 : sess[0];
            seqOf[i] = sess == null ? 0 : sess[1];
            anySession |= sess != null;
        }
        // results of session writes are kept on every node (a follower may answer a retry once it leads)
        boolean wantResults = s.isLeader() || !pending.isEmpty() || !stale.isEmpty() || anySession;
        batch.clear(wantResults);
        SessionTable sessions = g.sessions;
        for (int i = 0; i < n; i++) {
            LogItem it = list.get(i);
            int type = it.getType();
            if (type != LogItem.TYPE_NORMAL) {
                itemKind[i] = type == LogItem.TYPE_CONFIG_CHANGE ? OWN_ENTRY_NO_RESULT : -1;
                if (appliesRaftEntries) {
                    batch.add(it.getIndex(), it.getTerm(), it.getBizType(), it.getTimestampMillis(), null);
                }
                continue;
            }
            if (sessionOf[i] != 0) {
                int verdict = sessions.check(sessionOf[i], seqOf[i], it.getTimestampMillis());
                if (verdict == SessionTable.DUPLICATE) {
                    itemKind[i] = DUPLICATE;
                    dupResult[i] = sessions.foundResult;
                    dupCode[i] = sessions.foundErrorCode;
                    dupMessage[i] = sessions.foundErrorMessage;
                    dupPendingSlot[i] = sessions.foundPendingSlot;
                    continue;
                }
                if (verdict == SessionTable.TOO_OLD) {
                    itemKind[i] = SESSION_TOO_OLD;
                    continue;
                }
                sessions.markPending(sessionOf[i], seqOf[i], batch.size());
            }
            itemKind[i] = batch.size();
            batch.add(it.getIndex(), it.getTerm(), it.getBizType(), it.getTimestampMillis(), decode(it));
        }
        g.applyBatches++;
        if (batch.size() > 0) {
            try {
                sm.apply(batch);
            } catch (Throwable e) {
                log.error("group {} on node {}: the state machine failed applying entries {} to {}; the group stops"
                                + " taking part until it is restarted", s.groupId, s.selfId, list.get(0).getIndex(),
                        list.get(n - 1).getIndex(), e);
                g.fail(e);
                return;
            }
        }
        if (anySession) {
            for (int i = 0; i < n; i++) {
                int k = itemKind[i];
                if (sessionOf[i] != 0 && k >= 0) {
                    int code = batch.errorCode(k);
                    sessions.record(sessionOf[i], seqOf[i], code == 0 ? batch.result(k) : null, code,
                            code == 0 ? null : batch.errorMessage(k));
                }
            }
        }
        LogItem last = list.get(n - 1);
        s.lastApplied = last.getIndex();
        s.lastAppliedTerm = last.getTerm();
        appliedSinceSnapshot += n;
        // Published before the answers leave: whoever learns that a write is done and then asks this
        // node how far it applied must not see less than the write's index.
        g.publishProgress();
        for (int i = 0; i < n; i++) {
            LogItem it = list.get(i);
            answer(pending, it.getIndex(), it.getTerm(), i);
            if (!stale.isEmpty()) {
                answer(stale, it.getIndex(), it.getTerm(), i);
            }
        }
        batch.clear(false);
        g.responder.flush();
        RaftConfig c = g.config;
        long neededFrom = s.isLeader() ? g.commitManager.lowestNeeded() : Long.MAX_VALUE;
        g.tailCache.evict(s.lastApplied, neededFrom, c.tailCacheItems(), c.tailCacheBytes());
        g.reads.onApplied(s.lastApplied);
        if (c.snapshotEveryEntries() > 0 && appliedSinceSnapshot >= c.snapshotEveryEntries()) {
            g.snapshotManager.requestSnapshot();
        }
    }

    /** Answers the writes waiting for {@code index} (normally the head of the queue); {@code item}: its place in the batch. */
    private void answer(ArrayDeque<WriteTask> q, long index, int term, int item) {
        WriteTask t;
        while ((t = q.peekFirst()) != null && t.index <= index) {
            q.pollFirst();
            WriteResponder r = g.responder;
            int kind = itemKind[item];
            if (t.index < index) {
                ImpossibleStates.report("group {}: the write at index {} was skipped by the apply manager (now at {})",
                        g.state.groupId, t.index, index);
                r.fail(t, ResponseCode.SYS_ERROR, 0, "internal error: the write's index was skipped");
            } else if (t.term != term || kind == -1) {
                RaftState s = g.state;
                r.fail(t, ResponseCode.NOT_LEADER, s.leaderId, "the write lost its place in the log to another leader's"
                        + " entry (index " + index + ", term " + term + "); it was not applied"
                        + (s.leaderId != 0 ? "; the leader is node " + s.leaderId : ""));
            } else if (kind == OWN_ENTRY_NO_RESULT) {
                r.succeed(t, null);
            } else if (kind == SESSION_TOO_OLD) {
                r.fail(t, ResponseCode.SYS_ERROR, io.poyang.raft.client.RaftCommands.SYS_ERROR_SESSION_WINDOW_PASSED,
                        "session " + sessionOf[item] + " has moved past write " + seqOf[item]
                        + " (it keeps the last " + g.config.sessionWindow() + "); its outcome is unknown");
            } else if (kind == DUPLICATE) {
                int slot = dupPendingSlot[item];
                int code = slot >= 0 ? batch.errorCode(slot) : dupCode[item];
                if (code != 0) {
                    r.bizError(t, code, slot >= 0 ? batch.errorMessage(slot) : dupMessage[item]);
                } else {
                    r.succeed(t, slot >= 0 ? batch.result(slot) : (Encodable) dupResult[item]);
                }
            } else {
                int code = batch.errorCode(kind);
                if (code != 0) {
                    r.bizError(t, code, batch.errorMessage(kind));
                } else {
                    r.succeed(t, batch.result(kind));
                }
            }
        }
    }

    private void ensureItemArrays(int n) {
        if (itemKind.length < n) {
            int c = Math.max(n, itemKind.length * 2);
            itemKind = new int[c];
            sessionOf = new long[c];
            seqOf = new long[c];
            dupResult = new Object[c];
            dupCode = new int[c];
            dupMessage = new String[c];
            dupPendingSlot = new int[c];
        }
    }

    private Encodable decode(LogItem it) {
        Encodable body = it.getBody();
        if (!(body instanceof ByteBody)) {
            return body;
        }
        Object d = decoders.get(it.getBizType());
        if (d == null) {
            d = sm.newBodyDecoder(it.getBizType());
            decoders.put(it.getBizType(), d == null ? NO_DECODER : d);
        }
        if (d == NO_DECODER || d == null) {
            return body;
        }
        @SuppressWarnings("unchecked")
        PbCallback<? extends Encodable> decoder = (PbCallback<? extends Encodable>) d;
        ByteBody raw = (ByteBody) body;
        parser.prepare(decoder, raw.length());
        if (!parser.feed(ByteBuffer.wrap(raw.array(), raw.offset(), raw.length()))) {
            throw new IllegalStateException("the body of " + it + " ended early");
        }
        return parser.result();
    }

    // ---------------------------------------------------------------- snapshots

    private io.poyang.common.StoppedException stopped() {
        return new io.poyang.common.StoppedException("raft group " + g.state.groupId + " on node " + g.state.selfId
                + " is stopping");
    }

    private void capture() {
        FiberFuture<SnapshotCapture> f = captureRequest;
        captureRequest = null;
        RaftState s = g.state;
        if (s.lastApplied == 0 || s.failure != null) {
            f.complete(null);
            return;
        }
        SnapshotMeta meta = MembershipManager.meta(s.lastApplied, s.lastAppliedTerm, g.membership.configAt(s.lastApplied),
                SnapshotMeta.FORMAT_WITH_RAFT_SECTION);
        SnapshotWriter w;
        SnapshotWriter taken = null;
        try {
            SnapshotWriter smWriter = sm.takeSnapshot(meta);
            taken = smWriter;
            byte[] sessionTable = g.sessions.serialize();
            w = new SnapshotWriter() {
                @Override
                public void writeTo(java.io.OutputStream out) throws java.io.IOException {
                    java.io.DataOutputStream d = new java.io.DataOutputStream(out);
                    SessionTable.writeSection(d, sessionTable);
                    d.flush();
                    smWriter.writeTo(out);
                }

                @Override
                public void release() {
                    smWriter.release();
                }
            };
        } catch (Throwable e) {
            if (taken != null) {
                // the state machine's capture is open (a DtKV one keeps old versions while it is): end it
                try {
                    taken.release();
                } catch (Throwable r) {
                    e.addSuppressed(r);
                }
            }
            f.completeExceptionally(e);
            return;
        }
        appliedSinceSnapshot = 0;
        f.complete(new SnapshotCapture(meta, w));
    }

    private FrameCallResult install() {
        SnapshotFiles.Snapshot snap = installSnapshot;
        RaftState s = g.state;
        if (snap.meta.lastIndex() <= s.lastApplied) {
            FiberFuture<Boolean> f = installResult;
            installSnapshot = null;
            installResult = null;
            f.complete(false);
            return loop(null);
        }
        return Fiber.call(Attempt.of(g.snapshotManager.readSnapshot(snap)), this::afterRead);
    }

    private FrameCallResult afterRead(Attempt<Object> a) {
        SnapshotFiles.Snapshot snap = installSnapshot;
        FiberFuture<Boolean> f = installResult;
        installSnapshot = null;
        installResult = null;
        if (!a.ok()) {
            f.completeExceptionally(a.error);
            return loop(null);
        }
        RaftState s = g.state;
        try {
            g.snapshotManager.install(snap.meta, a.value);
        } catch (Throwable e) {
            log.error("group {} on node {}: the state machine failed installing {}", s.groupId, s.selfId, snap.meta, e);
            g.fail(e);
            f.completeExceptionally(e);
            return loop(null);
        }
        long idx = snap.meta.lastIndex();
        s.lastApplied = idx;
        s.lastAppliedTerm = snap.meta.lastTerm();
        appliedSinceSnapshot = 0;
        // Writes waiting for indexes the snapshot covers cannot be told apart any more.
        answerCoveredBySnapshot(pending, idx);
        answerCoveredBySnapshot(stale, idx);
        g.responder.flush();
        g.publishProgress();
        g.reads.onApplied(s.lastApplied);
        log.info("group {} on node {}: installed {}", s.groupId, s.selfId, snap.meta);
        f.complete(true);
        return loop(null);
    }

    private void answerCoveredBySnapshot(ArrayDeque<WriteTask> q, long idx) {
        WriteTask t;
        while ((t = q.peekFirst()) != null && t.index <= idx) {
            q.pollFirst();
            g.responder.fail(t, ResponseCode.SYS_ERROR, 0, "the write's index " + t.index
                    + " was covered by a snapshot from the leader; its outcome is unknown");
        }
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        log.error("group {} on node {}: the apply fiber failed", g.state.groupId, g.state.selfId, ex);
        g.fail(ex);
        end(new IllegalStateException("the apply fiber of raft group " + g.state.groupId + " on node "
                + g.state.selfId + " failed (" + ex + "); restart the group or its node", ex));
        return Fiber.frameReturn();
    }

    /**
     * The loop ends (the group stops, or the loop failed). A snapshot request waiting for it would
     * wait forever, and its fiber (the follower appender receiving a snapshot, a snapshot being
     * taken) with it: the group's shutdown waits for its fibers, so stopping or restarting the group
     * would hang until its timeout. Those requests and any later ones fail with {@code why}.
     */
    private void end(Throwable why) {
        ended = true;
        endedBecause = why;
        if (installResult != null) {
            FiberFuture<Boolean> f = installResult;
            installSnapshot = null;
            installResult = null;
            f.completeExceptionally(why);
        }
        if (captureRequest != null) {
            FiberFuture<SnapshotCapture> f = captureRequest;
            captureRequest = null;
            f.completeExceptionally(why);
        }
    }

    @Override
    public String toString() {
        return "ApplyManager[group " + g.state.groupId + ", applied " + g.state.lastApplied + "]";
    }

    /** A captured state: what it covers and how to write it out. */
    static final class SnapshotCapture {
        final SnapshotMeta meta;
        final SnapshotWriter writer;

        SnapshotCapture(SnapshotMeta meta, SnapshotWriter writer) {
            this.meta = meta;
            this.writer = writer;
        }
    }
}
