package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ResponseCode;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.store.LogItem;
import io.poyang.raft.store.LogStore;

import java.util.ArrayList;

/**
 * The one fiber that turns client writes into log entries. It takes every write queued in the
 * group's channel at once (opportunistic batching: no timer, no waiting for a batch to fill),
 * fails the expired ones with TIMEOUT before they get an index, gives the others consecutive
 * indexes in the current term, hands them to {@link LogStore#append} (which issues the write at
 * once), keeps them in the {@link TailCache} and wakes the replicators, which send
 * them to the followers while the local write and fsync are still running. On a node that is not
 * the leader it answers NOT_LEADER with the leader it knows.
 */
final class LeaderWriter extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(LeaderWriter.class);
    /** Room left for an entry's own header (term, index, timestamp, session) when checking its body against a segment. */
    private static final int ITEM_HEADER_ROOM = 256;

    /** Queued to wake the writer when a new leader needs its no-op entry. */
    static final WriteTask NOOP_MARKER = new WriteTask(0, null, 0, Long.MAX_VALUE, null, null);

    private final RaftGroup g;
    private final FiberChannel<WriteTask> channel;
    private final ArrayList<WriteTask> batch = new ArrayList<>();
    private final ArrayList<LogItem> items = new ArrayList<>();
    private final FrameCall<Void> onBatch = this::onBatch;
    /** The term whose no-op entry is still to be appended (0: none). */
    private int noopTerm;

    LeaderWriter(RaftGroup g, FiberChannel<WriteTask> channel) {
        this.g = g;
        this.channel = channel;
    }

    /** The group just became leader of {@code term}: append the no-op entry first. Dispatcher thread. */
    void requestNoop(int term) {
        noopTerm = term;
        channel.offer(NOOP_MARKER);
    }

    @Override
    public FrameCallResult execute(Object input) {
        return channel.takeAll(batch, onBatch);
    }

    /** Writes that arrived during a leader transfer: written if it fails, refused (NOT_LEADER) if it succeeds. */
    private final ArrayList<WriteTask> held = new ArrayList<>();

    /** How often held writes are checked for their deadline. */
    private static final long HELD_SWEEP_MILLIS = 50;

    /** Held writes whose deadline passed fail with TIMEOUT (never proposed: certainly not applied). */
    private void failExpiredHeld(RaftState s) {
        if (held.isEmpty()) {
            return;
        }
        long now = g.nowNanos();
        int kept = 0;
        for (int i = 0, n = held.size(); i < n; i++) {
            WriteTask t = held.get(i);
            if (t.isExpired(now)) {
                g.responder.fail(t, ResponseCode.TIMEOUT, 0, "the write's deadline passed while a leader transfer of"
                        + " raft group " + s.groupId + " held it; it was not applied");
            } else {
                held.set(kept++, t);
            }
        }
        if (kept < held.size()) {
            held.subList(kept, held.size()).clear();
            g.responder.flush();
        }
    }

    /** The leader transfer ended: the held writes go on (into the log, or refused if this node no longer leads). */
    void releaseHeld() {
        if (!held.isEmpty()) {
            channel.offer(NOOP_MARKER);
        }
    }

    private FrameCallResult onBatch(Void v) {
        RaftState s = g.state;
        if (s.isLeader() && s.failure == null && !s.stopping && g.transfer.isActive()) {
            for (int i = 0, n = batch.size(); i < n; i++) {
                if (batch.get(i) != NOOP_MARKER) {
                    held.add(batch.get(i));
                }
            }
            batch.clear();
            if (noopTerm == s.currentTerm) {
                writeBatch(s);   // only the new leader's no-op
                items.clear();
            }
            failExpiredHeld(s);
            // woken now and then while writes are held, so none outlives its deadline
            return held.isEmpty() ? channel.takeAll(batch, onBatch) : channel.takeAll(batch, HELD_SWEEP_MILLIS, onBatch);
        }
        if (!held.isEmpty()) {
            batch.addAll(0, held);
            held.clear();
        }
        if (s.stopping || getGroup().isShouldStop()) {
            failAll(ResponseCode.STOPPING, 0, "raft group " + s.groupId + " on node " + s.selfId + " is stopping");
            return Fiber.frameReturn();
        }
        if (s.failure != null) {
            failAll(ResponseCode.NOT_LEADER, 0, "raft group " + s.groupId + " on node " + s.selfId
                    + " has failed and needs a restart: " + s.failure);
        } else if (!s.isLeader()) {
            failAll(ResponseCode.NOT_LEADER, s.leaderId, "node " + s.selfId + " is not the leader of raft group "
                    + s.groupId + (s.leaderId != 0 ? "; the leader is node " + s.leaderId : "; no leader is known yet"));
        } else {
            writeBatch(s);
        }
        g.responder.flush();
        batch.clear();
        items.clear();
        return channel.takeAll(batch, onBatch);
    }

    private void writeBatch(RaftState s) {
        LogStore store = g.store;
        int term = s.currentTerm;
        long index = store.lastIndex();
        int prevTerm = store.lastTerm();
        long nowNanos = g.nowNanos();
        long nowMillis = g.leaderClockMillis();   // not the wall clock: it may step during the term
        if (noopTerm == term) {
            noopTerm = 0;
            LogItem noop = new LogItem(LogItem.TYPE_NOOP, 0, term, prevTerm, ++index, nowMillis, null, null);
            items.add(noop);
            prevTerm = term;
        }
        ApplyManager apply = g.applyManager;
        TailCache cache = g.tailCache;
        for (int i = 0, n = batch.size(); i < n; i++) {
            WriteTask t = batch.get(i);
            if (t == NOOP_MARKER) {
                continue;
            }
            if (t.isExpired(nowNanos)) {
                // Never proposed: a writer that gave up leaves no ghost entry behind.
                g.responder.fail(t, ResponseCode.TIMEOUT, 0, "the write's deadline passed before raft group "
                        + s.groupId + " could take it; it was not applied");
                continue;
            }
            if (t.flowBytes > RaftCommands.MAX_WRITE_BODY_BYTES) {
                // one entry must fit one AppendEntries frame: in the log it would be resent to the
                // followers forever, and nothing after it would commit
                g.responder.fail(t, ResponseCode.FLOW_CONTROL, 0, "the write takes " + t.flowBytes + " bytes, more"
                        + " than one raft entry may carry (" + RaftCommands.MAX_WRITE_BODY_BYTES + " bytes: an entry"
                        + " must fit one 8 MiB frame between the nodes); it was not applied. Write smaller entries");
                continue;
            }
            if (t.flowBytes > store.maxItemBytes() - ITEM_HEADER_ROOM) {
                // one entry must fit one log segment: refuse it here, where only this write fails
                g.responder.fail(t, ResponseCode.FLOW_CONTROL, 0, "the write takes " + t.flowBytes + " bytes, more"
                        + " than a log segment of raft group " + s.groupId + " holds (" + store.maxItemBytes()
                        + " bytes); it was not applied. Raise segmentBytes, or write smaller entries");
                continue;
            }
            t.index = ++index;
            t.term = term;
            t.takenNanos = nowNanos;
            items.add(new LogItem(t.entryType, t.bizType, term, prevTerm, index, nowMillis, g.sessions.header(t), t.body));
            prevTerm = term;
            apply.addPending(t);
        }
        if (items.isEmpty()) {
            return;
        }
        g.writerBatches++;
        try {
            store.append(items);
        } catch (RuntimeException e) {
            // The store refused (it failed, or it is closing): nothing of this batch was written, or,
            // when encoding an entry failed, nothing after its lastIndex(). The writes before that
            // were issued (their outcome is unknown: g.fail answers them).
            log.error("group {}: the log refused an append at index {}", s.groupId, items.get(0).getIndex(), e);
            apply.failPendingFrom(Math.max(items.get(0).getIndex(), store.lastIndex() + 1), ResponseCode.NOT_LEADER,
                    "the log of node " + s.selfId + " refused the write: " + e.getMessage());
            g.fail(e);
            return;
        }
        for (int i = 0, n = items.size(); i < n; i++) {
            LogItem it = items.get(i);
            cache.add(it);
            if (it.getType() == LogItem.TYPE_CONFIG_CHANGE) {
                // a configuration takes effect once in the log (raft's rule), before anything after it is sent
                g.membership.onConfigAppended(it.getIndex(), MembersCodec.fromBody(it.getBody()));
            }
        }
        g.wakeReplicators();
    }

    private void failAll(int code, int detail, String message) {
        for (int i = 0, n = batch.size(); i < n; i++) {
            WriteTask t = batch.get(i);
            // A write with an index is in the log: the apply manager answers it.
            if (t != NOOP_MARKER && t.index == 0) {
                g.responder.fail(t, code, detail, message);
            }
        }
        g.responder.flush();
        batch.clear();
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        g.fail(ex);
        failAll(ResponseCode.SYS_ERROR, 0, "raft group " + g.state.groupId + " failed: " + ex);
        return Fiber.frameReturn();
    }

    @Override
    public String toString() {
        return "LeaderWriter[group " + g.state.groupId + "]";
    }
}
