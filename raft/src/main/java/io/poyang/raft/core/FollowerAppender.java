package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.store.IndexTerm;
import io.poyang.raft.store.LogItem;
import io.poyang.raft.store.LogStore;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a follower takes in its leader's log: the one fiber that handles AppendEntries and
 * InstallSnapshot requests of its group, in the order they arrived. For an append it checks the
 * term (a newer one makes this node a follower of the sender, made durable before any answer),
 * checks that the entry before the new ones matches (if not, it answers with a hint that lets the
 * leader find the match in one or two more round trips), truncates a conflicting tail
 * ({@link LogStore#truncateTail}), appends what is new (the write is issued at once) and moves the
 * commit index up to what the leader committed and this log is known to share.
 *
 * <p>Each request is answered once the entries it carries are persisted: the answers wait in
 * order and {@link #onPersisted} sends those the store's persisted index covers, so the leader
 * counts only persisted copies toward a majority while the follower keeps taking in the next
 * requests of the pipeline.
 */
final class FollowerAppender extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(FollowerAppender.class);

    private final RaftGroup g;
    private final FiberChannel<Object> channel;
    private final ArrayList<Object> batch = new ArrayList<>();
    private int cursor;
    /** Appends whose answer waits for their entries to be persisted, in order. */
    private final ArrayDeque<AppendEntriesRequest> acks = new ArrayDeque<>();
    /** The highest index known to match the log of the leader of {@link #matchedTerm}. */
    private long leaderMatched;
    private int matchedTerm;
    private Object current;
    private int skip;
    private long conflictIndex;
    private final FrameCall<Void> onBatch = this::onBatch;

    FollowerAppender(RaftGroup g, FiberChannel<Object> channel) {
        this.g = g;
        this.channel = channel;
    }

    @Override
    public FrameCallResult execute(Object input) {
        return channel.takeAll(batch, onBatch);
    }

    private FrameCallResult onBatch(Void v) {
        cursor = 0;
        return next(null);
    }

    private FrameCallResult next(Void v) {
        RaftState s = g.state;
        if (s.stopping || getGroup().isShouldStop()) {
            for (int i = cursor; i < batch.size(); i++) {
                refuseStopping(batch.get(i));
            }
            batch.clear();
            return Fiber.frameReturn();
        }
        while (cursor < batch.size()) {
            Object o = batch.get(cursor);
            batch.set(cursor++, null);
            FrameCallResult r = process(o);
            if (r != null) {
                return r;
            }
        }
        batch.clear();
        return channel.takeAll(batch, onBatch);
    }

    /** Handles one request; returns the token of a suspending call, or null when done with it. */
    private FrameCallResult process(Object o) {
        RaftState s = g.state;
        int term;
        int leaderId;
        if (o instanceof AppendEntriesRequest) {
            term = ((AppendEntriesRequest) o).term;
            leaderId = ((AppendEntriesRequest) o).leaderId;
        } else if (o instanceof InstallSnapshotRequest) {
            term = ((InstallSnapshotRequest) o).term;
            leaderId = ((InstallSnapshotRequest) o).leaderId;
        } else {
            return null;   // a wake-up sentinel
        }
        if (term < s.currentTerm) {
            refuseStale(o);
            return null;
        }
        if (s.failure != null) {
            refuse(o);
            return null;
        }
        // No check of the sender against this node's configuration: a request of this term comes from
        // the one leader of the term (older terms are refused above, newer ones are taken), whether or
        // not this node's configuration lists it. It may lag behind the entry that added the leader,
        // or the leader may be leaving (it leads until the configuration without it commits); a
        // refusal would only keep this node from following, or cost the group an election.
        if (term == s.currentTerm && s.role == RaftRole.LEADER) {
            ImpossibleStates.report("group {}: node {} leads term {} but node {} sent it entries of the same term",
                    s.groupId, s.selfId, term, leaderId);
            refuseStale(o);
            return null;
        }
        if (term > s.currentTerm || s.role != RaftRole.FOLLOWER || s.leaderId != leaderId) {
            g.roleManager.becomeFollower(term, leaderId);
        }
        s.lastLeaderContactNanos = g.nowNanos();
        if (!g.statusSaver.isSaved()) {
            // A new term must be durable before this node answers in it.
            current = o;
            return Fiber.call(g.statusSaver.persist(), this::afterSaved);
        }
        return dispatch(o);
    }

    private FrameCallResult afterSaved(Void v) {
        Object o = current;
        current = null;
        int term = o instanceof AppendEntriesRequest ? ((AppendEntriesRequest) o).term
                : ((InstallSnapshotRequest) o).term;
        if (g.state.currentTerm != term) {
            refuseStale(o);
            return next(null);
        }
        FrameCallResult r = dispatch(o);
        return r != null ? r : next(null);
    }

    private FrameCallResult dispatch(Object o) {
        if (o instanceof AppendEntriesRequest) {
            AppendEntriesRequest append = (AppendEntriesRequest) o;
            if (g.snapshotManager.hasTransferOlderThan(append.term)) {
                current = append;
                return Fiber.call(g.snapshotManager.abandonTransfer(append.term), this::afterTransferAbandoned);
            }
            return onAppend(append);
        }
        InstallSnapshotRequest req = (InstallSnapshotRequest) o;
        current = req;
        return Fiber.call(g.snapshotManager.receive(req), this::afterSnapshotChunk);
    }

    private FrameCallResult afterTransferAbandoned(Attempt<Object> a) {
        AppendEntriesRequest req = (AppendEntriesRequest) current;
        current = null;
        FrameCallResult r = onAppend(req);
        return r != null ? r : next(null);
    }

    private FrameCallResult afterSnapshotChunk(InstallSnapshotResponse resp) {
        InstallSnapshotRequest req = (InstallSnapshotRequest) current;
        current = null;
        req.context.respond(WritePacket.response(resp));
        if (resp.success && req.done) {
            // the log now starts after the snapshot: what matches this leader is the snapshot, no
            // more (a match proven to an earlier term's leader says nothing about this one's log)
            matchedTerm = req.term;
            leaderMatched = req.lastIndex;
        }
        return next(null);
    }

    // ---------------------------------------------------------------- append

    private FrameCallResult onAppend(AppendEntriesRequest req) {
        RaftState s = g.state;
        g.appendsReceived++;
        LogStore store = g.store;
        if (matchedTerm != req.term) {
            matchedTerm = req.term;
            leaderMatched = 0;
        }
        long prev = req.prevLogIndex;
        if (prev > store.lastIndex()) {
            refuseMismatch(req, req.prevLogTerm, store.lastIndex());
            return null;
        }
        if (prev < store.firstIndex() - 1) {
            // The entry lies in this node's snapshot, so it is committed and matches; point the
            // leader at the start of the log.
            long f = store.firstIndex() - 1;
            respond(req, AppendEntriesResponse.mismatch(s.currentTerm, f, store.termOf(f)));
            return null;
        }
        if (store.termOf(prev) != req.prevLogTerm) {
            refuseMismatch(req, req.prevLogTerm, prev);
            return null;
        }
        List<LogItem> items = req.items;
        int n = items.size();
        int i = 0;
        while (i < n) {
            long idx = prev + 1 + i;
            if (idx > store.lastIndex()) {
                break;
            }
            if (store.termOf(idx) != items.get(i).getTerm()) {
                if (idx <= s.commitIndex) {
                    ImpossibleStates.report("group {} on node {}: leader {} sent index {} of term {} but the committed"
                            + " entry there has term {}", s.groupId, s.selfId, req.leaderId, idx,
                            items.get(i).getTerm(), store.termOf(idx));
                    refuseStale(req);
                    return null;
                }
                current = req;
                skip = i;
                conflictIndex = idx;
                s.logBusy = true;
                return Fiber.call(Attempt.of(store.truncateTail(idx)), this::afterTruncate);
            }
            i++;
        }
        appendFrom(req, i);
        return null;
    }

    private FrameCallResult afterTruncate(Attempt<Void> a) {
        RaftState s = g.state;
        s.logBusy = false;
        AppendEntriesRequest req = (AppendEntriesRequest) current;
        current = null;
        if (!a.ok()) {
            log.error("group {} on node {}: truncating the log from index {} failed", s.groupId, s.selfId,
                    conflictIndex, a.error);
            g.fail(a.error);
            refuseStale(req);
            return next(null);
        }
        log.info("group {} on node {}: dropped the log tail from index {} (it conflicted with leader {})", s.groupId,
                s.selfId, conflictIndex, req.leaderId);
        g.tailCache.truncateFrom(conflictIndex);
        g.membership.onTruncated(conflictIndex);
        refuseAcksFrom(conflictIndex);
        if (s.currentTerm != req.term) {
            refuseStale(req);
        } else {
            appendFrom(req, skip);
        }
        return next(null);
    }

    private void appendFrom(AppendEntriesRequest req, int from) {
        RaftState s = g.state;
        List<LogItem> items = req.items;
        int n = items.size();
        if (from < n) {
            List<LogItem> fresh = from == 0 ? items : items.subList(from, n);
            try {
                g.store.append(fresh);
            } catch (RuntimeException e) {
                log.error("group {} on node {}: the log refused entries from leader {}", s.groupId, s.selfId,
                        req.leaderId, e);
                g.fail(e);
                refuseStale(req);
                return;
            }
            TailCache cache = g.tailCache;
            for (int i = 0, m = fresh.size(); i < m; i++) {
                LogItem it = fresh.get(i);
                cache.add(it);
                if (it.getType() == LogItem.TYPE_CONFIG_CHANGE) {
                    g.membership.onConfigAppended(it.getIndex(), MembersCodec.fromBody(it.getBody()));
                }
            }
        }
        long matched = req.prevLogIndex + n;
        if (matched > leaderMatched) {
            leaderMatched = matched;
        }
        long commit = Math.min(req.leaderCommit, leaderMatched);
        if (commit > s.commitIndex) {
            g.commitManager.advanceTo(commit);
        }
        if (acks.isEmpty() && g.store.persistedIndex() >= matched) {
            respond(req, AppendEntriesResponse.success(s.currentTerm, matched));
        } else {
            acks.add(req);
        }
    }

    /** The store persisted up to {@code persisted}: answers the appends it covers. Dispatcher thread. */
    void onPersisted(long persisted) {
        AppendEntriesRequest r;
        while ((r = acks.peekFirst()) != null && r.lastIndex() <= persisted) {
            acks.pollFirst();
            int term = g.state.currentTerm;
            respond(r, term == r.term ? AppendEntriesResponse.success(term, r.lastIndex())
                    : AppendEntriesResponse.staleTerm(term));
        }
    }

    /** The log was reset to start after a snapshot ending at {@code index}. */
    void onLogReset(long index) {
        refuseAcksFrom(0);
        // nothing after the snapshot is left to match
        leaderMatched = index;
    }

    private void refuseAcksFrom(long index) {
        while (!acks.isEmpty() && acks.peekLast().lastIndex() >= index) {
            AppendEntriesRequest r = acks.pollLast();
            respond(r, AppendEntriesResponse.staleTerm(g.state.currentTerm));
        }
    }

    /** The group stops: the appends waiting for their fsync are not answered as persisted. */
    void closeAcks() {
        while (!acks.isEmpty()) {
            AppendEntriesRequest r = acks.pollFirst();
            r.context.respondError(ResponseCode.STOPPING, "raft group " + g.state.groupId + " is stopping");
        }
    }

    // ---------------------------------------------------------------- answers

    private void refuseMismatch(AppendEntriesRequest req, int prevLogTerm, long maxIndex) {
        LogStore store = g.store;
        IndexTerm m = store.findLastMatch(prevLogTerm, maxIndex);
        long hi;
        int ht;
        if (m == null) {
            hi = store.firstIndex() - 1;
            ht = store.termOf(hi);
        } else {
            hi = m.getIndex();
            ht = m.getTerm();
        }
        respond(req, AppendEntriesResponse.mismatch(g.state.currentTerm, hi, ht));
    }

    private void refuseStale(Object o) {
        int term = g.state.currentTerm;
        if (o instanceof AppendEntriesRequest) {
            respond((AppendEntriesRequest) o, AppendEntriesResponse.staleTerm(term));
        } else {
            ((InstallSnapshotRequest) o).context.respond(WritePacket.response(new InstallSnapshotResponse(term, false, 0)));
        }
    }

    /** Refuses the sender outright (see {@link AppendEntriesResponse#refused}); a snapshot chunk as stale. */
    private void refuse(Object o) {
        if (o instanceof AppendEntriesRequest) {
            respond((AppendEntriesRequest) o, AppendEntriesResponse.refused(g.state.currentTerm));
        } else {
            refuseStale(o);
        }
    }

    private void refuseStopping(Object o) {
        String msg = "raft group " + g.state.groupId + " is stopping";
        if (o instanceof AppendEntriesRequest) {
            ((AppendEntriesRequest) o).context.respondError(ResponseCode.STOPPING, msg);
        } else if (o instanceof InstallSnapshotRequest) {
            ((InstallSnapshotRequest) o).context.respondError(ResponseCode.STOPPING, msg);
        }
    }

    private static void respond(AppendEntriesRequest req, AppendEntriesResponse resp) {
        req.context.respond(WritePacket.response(resp));
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        log.error("group {} on node {}: the follower fiber failed", g.state.groupId, g.state.selfId, ex);
        g.fail(ex);
        return Fiber.frameReturn();
    }

    @Override
    public String toString() {
        return "FollowerAppender[group " + g.state.groupId + "]";
    }
}
