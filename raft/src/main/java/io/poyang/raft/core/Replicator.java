package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.store.IndexTerm;
import io.poyang.raft.store.LogItem;
import io.poyang.raft.store.LogStore;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The leader's link to one follower: one fiber per follower for as long as the leadership lasts.
 *
 * <p>It starts by <b>probing</b>: one AppendEntries at a time until the follower's log matches
 * (a mismatch answer carries a hint, so the match is found in one or two more round trips). Then
 * it <b>pipelines</b>: it sends every entry the leader has as soon as the leader writer appends it
 * (woken through its inbox), without waiting for answers, as long as fewer than
 * {@code maxInflightItems} entries and {@code maxInflightBytes} bytes are unanswered; entries come
 * from the {@link TailCache}, or from disk ({@link LogStore#load}) for a follower that fell behind
 * it. A follower behind the leader's first log index gets the latest snapshot ({@link
 * SnapshotSender}) and is probed again after it. When nothing was sent for a heartbeat interval it
 * sends an empty append (also to carry a new commit index to an idle follower). A failed request
 * (timeout, lost connection) drops the pipeline and goes back to probing after a pause.
 */
final class Replicator extends FiberFrame<Void> {

    private static final PoyangLog log = PoyangLogs.get(Replicator.class);
    /** Wakes the fiber to look for new entries or a new commit index. */
    static final Object WAKE = new Object();

    private final RaftGroup g;
    final int peerId;
    private final long leaderEpoch;
    private final int term;
    private final FiberChannel<Object> inbox;
    private final ArrayList<Object> taken = new ArrayList<>();
    private final ArrayDeque<AppendEntriesRequest> inflight = new ArrayDeque<>();
    private final long heartbeatNanos;
    private final long retryPauseNanos;
    private final FrameCall<Void> afterTake = this::afterTake;

    private int inflightItems;
    private long inflightBytes;
    private long nextIndex;
    private long matchIndex;
    /** When {@link #matchIndex} was last raised (the group's clock). */
    private long matchRaisedNanos;
    /** {@link #forgetLostMatch} warned of this follower's lost entries, and it has acknowledged none since. */
    private boolean lostEntriesReported;
    private boolean pipelining;
    private boolean needSnapshot;
    /** Bumped whenever the pipeline is dropped; answers to older requests are ignored. */
    private long generation;
    private long lastSendNanos;
    private long sentCommit = -1;
    /** The read round number of the last request sent (see {@link ReadIndexManager}). */
    private long sentRound;
    private long retryAtNanos;
    private boolean wakePending;

    private final long firstNextIndex;
    private boolean started;

    /**
     * @param firstNextIndex where the first probe starts: the leader's last index + 1 when it won
     *                       (before its no-op entry), so a follower that is up to date matches at once
     */
    Replicator(RaftGroup g, int peerId, long leaderEpoch, int term, FiberChannel<Object> inbox,
               long firstNextIndex) {
        this.firstNextIndex = firstNextIndex;
        this.g = g;
        this.peerId = peerId;
        this.leaderEpoch = leaderEpoch;
        this.term = term;
        this.inbox = inbox;
        this.heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(g.config.heartbeatIntervalMillis());
        this.retryPauseNanos = heartbeatNanos;
    }

    /** New entries or a new commit index: look again. Dispatcher thread. */
    void wake() {
        if (!wakePending) {
            wakePending = true;
            inbox.offer(WAKE);
        }
    }

    /** A request finished (answered or failed). I/O thread. */
    void rpcDone(AppendEntriesRequest r) {
        inbox.fireOffer(r);
    }

    private boolean alive() {
        RaftState s = g.state;
        return !s.stopping && s.roleEpoch == leaderEpoch && s.failure == null && !removed;
    }

    /** The peer left the configuration: the fiber ends. */
    private boolean removed;

    void remove() {
        removed = true;
        wake();
    }

    @Override
    public FrameCallResult execute(Object input) {
        // (Re)starts from scratch: a session that failed left nothing the next one can trust.
        matchIndex = g.commitManager.matchIndexOf(peerId);
        matchRaisedNanos = g.nowNanos();
        dropPipeline(g.nowNanos());
        nextIndex = Math.max(started ? g.store.lastIndex() + 1 : firstNextIndex, matchIndex + 1);
        started = true;
        needSnapshot = false;
        wakePending = false;
        return loop();
    }

    private FrameCallResult afterTake(Void v) {
        wakePending = false;
        return loop();
    }

    private FrameCallResult loop() {
        if (!alive()) {
            return Fiber.frameReturn();
        }
        for (int i = 0, n = taken.size(); i < n; i++) {
            Object o = taken.get(i);
            if (o instanceof AppendEntriesRequest) {
                onDone((AppendEntriesRequest) o);
                if (!alive()) {
                    taken.clear();
                    return Fiber.frameReturn();
                }
            }
        }
        taken.clear();
        if (needSnapshot) {
            SnapshotFiles.Snapshot snap = g.snapshotManager.latest();
            if (snap == null || snap.meta.lastIndex() < g.store.firstIndex() - 1) {
                // Cannot happen while the log is only deleted below a kept snapshot; wait for one.
                log.warn("group {}: follower {} needs entries below the first log index {} but no snapshot covers"
                        + " them", g.state.groupId, peerId, g.store.firstIndex());
                g.snapshotManager.requestSnapshot();
                needSnapshot = false;
                retryAtNanos = g.nowNanos() + retryPauseNanos * 5;
            } else {
                g.snapshotTransfers++;
                return Fiber.call(new SnapshotSender(g, this, snap), this::afterSnapshot);
            }
        }
        long now = g.nowNanos();
        if (pipelining) {
            FrameCallResult r = sendEntries(now);
            if (r != null) {
                return r;
            }
        } else if (inflight.isEmpty() && now - retryAtNanos >= 0) {
            FrameCallResult r = probe(now);
            if (r != null) {
                return r;
            }
        }
        long commit = g.state.commitIndex;
        if ((pipelining || inflight.isEmpty()) && now - retryAtNanos >= 0
                && (now - lastSendNanos >= heartbeatNanos || (sentCommit < commit && inflight.isEmpty())
                || sentRound < g.reads.currentRound())) {
            send(nextIndex - 1, Collections.emptyList(), now);
        }
        long waitNanos = lastSendNanos + heartbeatNanos - now;
        if (!pipelining && inflight.isEmpty() && retryAtNanos - now > 0) {
            waitNanos = Math.min(waitNanos, retryAtNanos - now);
        }
        long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos) + 1);
        return inbox.takeAll(taken, waitMillis, afterTake);
    }

    // ---------------------------------------------------------------- sending

    /** Pipelines every entry the leader has, within the in-flight caps. Returns a token when it must read the disk. */
    private FrameCallResult sendEntries(long now) {
        LogStore store = g.store;
        RaftConfig c = g.config;
        if (nextIndex < store.firstIndex()) {
            // The log was compacted past what this follower was sent (it fell behind with its in-flight
            // window full): neither the next entries nor the term of the one before them are left, so no
            // append — not even the heartbeat below, whose prevLogTerm would be asked of the store — can be
            // built. Only the snapshot serves it now.
            needSnapshot = true;
            return Fiber.resume(null, afterTake);
        }
        while (nextIndex <= store.lastIndex() && inflightItems < c.maxInflightItems()
                && inflightBytes < c.maxInflightBytes()) {
            if (nextIndex < store.firstIndex()) {
                needSnapshot = true;
                return Fiber.resume(null, afterTake);
            }
            List<LogItem> items = fromCache(nextIndex);
            if (items == null) {
                return loadFromDisk(nextIndex);
            }
            send(nextIndex - 1, items, now);
        }
        return null;
    }

    /** One request at a time until the follower's log matches. */
    private FrameCallResult probe(long now) {
        LogStore store = g.store;
        if (nextIndex < store.firstIndex()) {
            needSnapshot = true;
            return Fiber.resume(null, afterTake);
        }
        List<LogItem> items = nextIndex <= store.lastIndex() ? fromCache(nextIndex) : null;
        send(nextIndex - 1, items == null ? Collections.emptyList() : items, now);
        return null;
    }

    /** Entries from {@code from} as the tail cache has them (within the request caps), or null. */
    private List<LogItem> fromCache(long from) {
        TailCache cache = g.tailCache;
        LogItem first = cache.get(from);
        if (first == null) {
            return null;
        }
        RaftConfig c = g.config;
        long last = g.store.lastIndex();
        int maxItems = c.maxAppendItems();
        int maxBytes = c.maxAppendBytes();
        List<LogItem> items = new ArrayList<>(Math.min(maxItems, (int) Math.min(64, last - from + 1)));
        int bytes = 0;
        for (long i = from; i <= last && items.size() < maxItems; i++) {
            LogItem it = i == from ? first : cache.get(i);
            if (it == null) {
                break;
            }
            int size = TailCache.sizeOf(it);
            if (!items.isEmpty() && bytes + size > maxBytes) {
                break;
            }
            items.add(it);
            bytes += size;
        }
        return items;
    }

    private FrameCallResult loadFromDisk(long from) {
        g.diskReadsForFollowers++;
        RaftConfig c = g.config;
        return Fiber.call(Attempt.of(g.store.load(from, c.maxAppendItems(), c.maxAppendBytes())), this::afterLoad);
    }

    private FrameCallResult afterLoad(Attempt<List<LogItem>> a) {
        if (!alive()) {
            return Fiber.frameReturn();
        }
        if (!a.ok()) {
            if (g.store.firstIndex() > nextIndex) {
                needSnapshot = true;
            } else if (g.store.failure() != null) {
                // this leader's log is damaged (a read that finds it fails the store) or its store failed:
                // the group fails once and the leader steps down, instead of reading it again and warning
                // at every heartbeat
                g.fail(g.store.failure());
            } else {
                log.warn("group {}: reading entries from {} for follower {} failed", g.state.groupId, nextIndex, peerId,
                        a.error);
                dropPipeline(g.nowNanos() + retryPauseNanos);
            }
            return loop();
        }
        List<LogItem> items = a.value;
        if (!items.isEmpty() && items.get(0).getIndex() == nextIndex && pipelining) {
            send(nextIndex - 1, items, g.nowNanos());
        }
        return loop();
    }

    private void send(long prevIndex, List<LogItem> items, long now) {
        RaftState s = g.state;
        int prevTerm = g.store.termOf(prevIndex);
        AppendEntriesRequest req = new AppendEntriesRequest(s.groupId, term, s.selfId, prevIndex, prevTerm,
                s.commitIndex, items);
        req.replicator = this;
        req.generation = generation;
        req.sendNanos = now;
        req.leaseStamp = g.leaseReads.sendStamp(now);
        req.readRound = g.reads.currentRound();
        sentRound = req.readRound;
        inflight.add(req);
        inflightItems += items.size();
        inflightBytes += req.entriesBytes;
        if (pipelining) {
            nextIndex = prevIndex + items.size() + 1;
        }
        lastSendNanos = now;
        sentCommit = s.commitIndex;
        g.appendsSent++;
        g.transport.send(peerId, RaftCommands.APPEND_ENTRIES, req, AppendEntriesResponse.DECODER,
                g.config.replicationTimeoutMillis(), req);
    }

    // ---------------------------------------------------------------- answers

    private void onDone(AppendEntriesRequest req) {
        if (req.generation != generation) {
            return;   // the pipeline it belonged to was dropped
        }
        inflight.remove(req);
        inflightItems -= req.items.size();
        inflightBytes -= req.entriesBytes;
        long now = g.nowNanos();
        if (req.error != null) {
            g.appendsFailed++;
            if (log.isDebugEnabled()) {
                log.debug("group {}: append to follower {} failed: {}", g.state.groupId, peerId, req.error.toString());
            }
            // A failed probe says nothing about the follower's log: probe the same place again. Going back
            // to matchIndex + 1 would send a new leader (match 0) back to index 1, to resend the whole log
            // or a snapshot to a follower that was only unreachable for a moment.
            long probeAt = pipelining ? matchIndex + 1 : req.prevLogIndex + 1;
            dropPipeline(now + retryPauseNanos);
            nextIndex = Math.max(probeAt, matchIndex + 1);
            return;
        }
        AppendEntriesResponse resp = req.response;
        RaftState s = g.state;
        if (resp.term > s.currentTerm) {
            log.info("group {}: follower {} is in term {}, newer than this leader's {}; stepping down", s.groupId,
                    peerId, resp.term, s.currentTerm);
            g.roleManager.becomeFollower(resp.term, 0);
            g.statusSaver.persistInBackground();
            return;
        }
        if (resp.term < term || resp.isRefusal()) {
            // It does not take entries from us: its group failed (it then answers in its own, older
            // term, without taking ours), or it refused them. No proof of leadership, and no use
            // probing it back to back: with nothing scheduled the next probe would leave at once.
            dropPipeline(now + retryPauseNanos);
            return;
        }
        // The follower accepted this leader's term when it took the request: proof of leadership at the
        // send time, for check-quorum, the read lease and ReadIndex rounds.
        g.commitManager.onFollowerAck(peerId, req.sendNanos);
        g.leaseReads.onAck(peerId, req.leaseStamp);
        g.reads.onAck(peerId, req.readRound);
        if (resp.success) {
            if (resp.matchIndex > matchIndex) {
                matchIndex = resp.matchIndex;
                matchRaisedNanos = now;
                lostEntriesReported = false;
                g.commitManager.onFollowerMatch(peerId, matchIndex);
                g.onFollowerProgress(peerId, matchIndex);
            }
            if (!pipelining) {
                pipelining = true;
                nextIndex = Math.max(matchIndex + 1, req.lastIndex() + 1);
            }
            return;
        }
        // The follower's log does not match at prevLogIndex: find the match from its hint.
        dropPipeline(now);
        LogStore store = g.store;
        IndexTerm m = resp.hintIndex < 0 ? null
                : store.findLastMatch(resp.hintTerm, Math.min(resp.hintIndex, store.lastIndex()));
        // A refusal at or below the match: the follower lost entries it had acknowledged (a hint
        // above prevLogIndex is no refusal of it: the entry lies in the follower's snapshot). Only
        // for a request sent after the match was learnt: one sent before may have overtaken, on a
        // delaying network, the request that brought the follower to the match.
        if (req.prevLogIndex <= matchIndex && resp.hintIndex >= 0 && resp.hintIndex <= req.prevLogIndex
                && req.sendNanos - matchRaisedNanos > 0) {
            forgetLostMatch(req.prevLogIndex, Math.min(resp.hintIndex, m == null ? 0 : m.getIndex()));
        }
        long next;
        if (resp.hintIndex < 0) {
            next = matchIndex + 1;
        } else if (m == null) {
            needSnapshot = true;
            next = matchIndex + 1;
        } else {
            next = m.getIndex() + 1;
        }
        nextIndex = Math.max(next, matchIndex + 1);
        if (nextIndex < store.firstIndex()) {
            needSnapshot = true;
        }
    }

    /**
     * The follower acknowledged entries up to {@link #matchIndex}, and now its log lacks
     * {@code prevLogIndex}, at or below that, or holds another entry there: it lost entries it had
     * reported persisted (syncForce off and an OS crash or power loss, or its data directory wiped
     * or restored from an older copy). The match goes back to {@code matchAtMost}, where the
     * follower's hint and the leader's log may meet (the hint and the leader's last entry at or
     * below it with a term at most the hint's), and no further than the commit index, where
     * counting the follower changes nothing as nothing proves that match yet; probing goes on
     * from there. Kept at the old match, every probe would be sent at the old match + 1 and
     * refused, and the follower would never catch up. Should the follower refuse that probe too
     * (an older copy with entries of other terms), the match goes further back, each time below
     * the last. Commit is not affected: it never goes back, and the entries the follower lost
     * count again only once it acknowledges them again. The operator hears of it once per loss.
     */
    private void forgetLostMatch(long prevLogIndex, long matchAtMost) {
        long had = matchIndex;
        matchIndex = Math.min(matchAtMost, g.state.commitIndex);
        g.commitManager.onFollowerLostEntries(peerId, matchIndex);
        if (lostEntriesReported) {
            return;   // the same loss, probed further back
        }
        lostEntriesReported = true;
        log.warn("group {}: follower {} acknowledged entries up to index {} but no longer has entry {} as this"
                + " leader has it (its log matches up to {} at most): it lost entries it had reported persisted (syncForce off and an"
                + " OS crash or power loss, or a data directory wiped or restored from an older copy). It is sent"
                + " them again; if it also lost its term and vote, it may have voted twice in a term: check that"
                + " node's disk and data directory", g.state.groupId, peerId, had, prevLogIndex, matchIndex);
    }

    /** Forgets the requests in flight (their answers will be ignored) and goes back to probing at {@code retryAt}. */
    private void dropPipeline(long retryAt) {
        generation++;
        inflight.clear();
        inflightItems = 0;
        inflightBytes = 0;
        pipelining = false;
        nextIndex = matchIndex + 1;
        retryAtNanos = retryAt;
    }

    private FrameCallResult afterSnapshot(Boolean ok) {
        needSnapshot = false;
        if (!alive()) {
            return Fiber.frameReturn();
        }
        if (Boolean.TRUE.equals(ok)) {
            long idx = lastSnapshotIndex;
            if (idx > matchIndex) {
                matchIndex = idx;
                matchRaisedNanos = g.nowNanos();
                g.commitManager.onFollowerMatch(peerId, idx);
                g.onFollowerProgress(peerId, idx);
            }
            dropPipeline(g.nowNanos());
            nextIndex = idx + 1;
        } else {
            dropPipeline(g.nowNanos() + retryPauseNanos * 5);
        }
        return loop();
    }

    /** Set by the snapshot sender when the follower installed a snapshot ending there. */
    long lastSnapshotIndex;
    /**
     * The follower's refusals of snapshot chunks (a full disk there refuses every transfer, a few
     * heartbeats apart): the first of a run is logged, then one per 10 s. {@link SnapshotSender}.
     */
    final WarningThrottle snapshotRefusals = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));
    /**
     * Transfers that failed on the way (no answer in time, the connection lost, the snapshot file
     * unreadable): a follower cut off retries every few heartbeats, so these are throttled like
     * the refusals. {@link SnapshotSender}.
     */
    final WarningThrottle snapshotSendFailures = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));

    /**
     * The follower answered, in this leader's term, a snapshot chunk sent at {@code sendNanos} with
     * the lease stamp and read round of that moment: proof of leadership at the send time, as an
     * append's answer is. A follower receiving a long snapshot gets no heartbeats meanwhile; without
     * this its answers would confirm no read round and hold no lease, and a leader whose only other
     * reachable voter is that follower would time out every linearizable read until the transfer ends.
     */
    void onSnapshotAck(long sendNanos, long leaseStamp, long readRound) {
        g.commitManager.onFollowerAck(peerId, sendNanos);
        g.leaseReads.onAck(peerId, leaseStamp);
        g.reads.onAck(peerId, readRound);
    }

    int term() {
        return term;
    }

    /** The index this follower is known to have persisted. */
    long matchIndex() {
        return matchIndex;
    }

    /** The next index to send. */
    long nextIndex() {
        return nextIndex;
    }

    boolean isAlive() {
        return alive();
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        log.warn("group {}: the replicator of follower {} failed; it restarts", g.state.groupId, peerId, ex);
        return Fiber.frameReturn();
    }

    /**
     * The fiber's entry frame: runs the replicator for as long as the leadership lasts, restarting
     * it (after a pause) if a session ends with an error.
     */
    static final class Runner extends FiberFrame<Void> {
        private final Replicator replicator;

        Runner(Replicator replicator) {
            this.replicator = replicator;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return Fiber.call(replicator, this::afterSession);
        }

        private FrameCallResult afterSession(Void v) {
            if (!replicator.alive()) {
                return Fiber.frameReturn();
            }
            return Fiber.sleep(replicator.g.config.heartbeatIntervalMillis(), this::execute);
        }

        @Override
        public String toString() {
            return "Replicator.Runner[" + replicator.peerId + "]";
        }
    }

    @Override
    public String toString() {
        return "Replicator[group " + g.state.groupId + " -> " + peerId + ", next " + nextIndex + ", match "
                + matchIndex + (pipelining ? ", pipelining" : ", probing") + ", in flight " + inflight.size() + "]";
    }
}
