package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.common.LongObjMap;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ReqContext;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import io.poyang.raft.core.ReadTask;
import io.poyang.raft.sm.ApplyBatch;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.sm.StateMachine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * DtKV as a raft {@link StateMachine}: a {@link KvStore} fed with committed entries, plus what a
 * node serves around it — reads, watch registrations and pushes, lock-event pushes, and on the
 * leader the proposing of TTL and lease expiries.
 *
 * <p>Everything here runs on the group's dispatcher thread: {@link #apply} and the snapshot calls
 * (raft calls them there), reads (raft's read path runs each {@link KvRead} there once it is
 * linearizable) and two fibers of the group — the <em>service fiber</em>, which takes every task
 * queued by the network (watch registrations, push acknowledgements, closed connections) in one go
 * and serves them between applies, and, while this node leads, the <em>expiry fiber</em>, which
 * sleeps until the next deadline and proposes the expiries {@link TtlManager#pollDue} returns as
 * ordinary entries. So the store is never touched by two threads and needs no locks.
 *
 * <p>Exactly-once: DtKV writes are deduplicated by the store's own client sessions
 * ({@link ClientSessions}: the seq and acked_below inside the {@link KvReq}), not by raft's session
 * table — {@link KvProcessors.Write} hands writes to raft without a raft session, so every DtKV
 * write is checked once, by the store. See dtkv/README.md, "Sessions".
 *
 * <p>Bodies: entries are {@link KvReq}s ({@link KvReq.Decoder}); on the leader the request decoded
 * on the network thread is the entry's body and reaches {@link #apply} as it is. A non-SUCCESS
 * answer goes to the writer as BIZ_ERROR with the {@link KvCode} number as the business code (and
 * {@code [position N]} at the end of the message for a batch's failing key).
 *
 * <p>Pushes never block applying: watch changes coalesce in the {@link WatchManager} and one
 * notification per watcher is in flight; lock events are queued to the client's connections.
 */
public final class DtKvStateMachine implements StateMachine {

    private static final PoyangLog log = PoyangLogs.get(DtKvStateMachine.class);
    /** How long an expiry proposal may wait in raft before it is dropped (the TtlManager proposes it again). */
    private static final long EXPIRE_PROPOSAL_TIMEOUT_MILLIS = 5_000;
    /**
     * The largest chunk a snapshot file may hold: what readSnapshot accepts, and what the writer
     * refuses to exceed (a chunk is about {@code KvConfig.snapshotChunkBytes}, one node or session
     * answer more at most).
     */
    static final int MAX_SNAPSHOT_CHUNK_BYTES = 256 << 20;
    /** Most expiries proposed in one round of the expiry fiber (the next round follows at once). */
    private static final int EXPIRE_BATCH = 1_000;
    /** The expiry fiber looks at the deadlines at least this often even with nothing due (cheap). */
    private static final long EXPIRY_IDLE_MILLIS = 1_000;
    /** While proposed expiries wait to be applied, how often the fiber looks for new ones and retries. */
    private static final long EXPIRY_RECHECK_MILLIS = 50;

    private final DtKvService service;
    private final KvConfig config;
    private final KvStore store;
    private RaftGroup group;
    private FiberChannel<Object> tasks;
    private FiberCondition expiryWake;
    /** Watcher id (the connection's DtKV id) → connection, for pushes. */
    private final LongObjMap<DtKvService.ClientConnection> watchers = new LongObjMap<>();
    private final IdentityHashMap<KvSnapshot, Boolean> openSnapshots = new IdentityHashMap<>();
    private boolean leader;
    /** Moves at every change of leadership; an expiry fiber of an older one ends. */
    private int leaderEpoch;
    /** The deadline the expiry fiber sleeps toward; an apply that brings an earlier one wakes it. */
    private long expiryPlannedDueMillis = Long.MAX_VALUE;
    private final ArrayList<Object> taken = new ArrayList<>();

    DtKvStateMachine(DtKvService service, KvConfig config) {
        config.validate();
        this.service = service;
        this.config = config;
        this.store = new KvStore(config);
        store.setListener(this::onLockEvent);
    }

    public int groupId() {
        return config.groupId;
    }

    /** The store. Dispatcher thread only (tests: {@link RaftGroup#callInGroup}). */
    public KvStore store() {
        return store;
    }

    /** {@link KvStore#describeState()} read on the dispatcher: for comparing replicas. Any thread. */
    public String describeState() throws Exception {
        return group.callInGroup(store::describeState).get(30, TimeUnit.SECONDS);
    }

    // ---------------------------------------------------------------- raft's calls

    @Override
    public PbCallback<? extends Encodable> newBodyDecoder(int bizType) {
        return new KvReq.Decoder();
    }

    @Override
    public void onStart(RaftGroup group) {
        if (group.groupId() != config.groupId) {
            throw new IllegalStateException("a DtKV state machine made for group " + config.groupId
                    + " was given to group " + group.groupId() + "; use DtKvService.stateMachine(" + group.groupId() + ")");
        }
        this.group = group;
        this.tasks = group.fiberGroup().newChannel("kv-tasks-" + config.groupId);
        this.expiryWake = group.fiberGroup().newCondition("kv-expiry-" + config.groupId);
        // Not a daemon: when the group stops (a node stopping, or the group removed at runtime) the
        // fiber is woken with nothing, fails what waits and takes this group out of the service.
        new Fiber("kv-service-" + config.groupId, group.fiberGroup(), new ServiceFiber(), false).start();
        service.register(this);
    }

    /**
     * Yes: the store's log clock and its term come from every entry. A new leader's no-op moves the
     * deadlines by the leaderless gap as soon as it is applied (otherwise the first DtKV entry of
     * the term would, with a gap that runs on until then: in an idle group, the leader's own EXPIRE,
     * late by the gap, would push the deadline back by that much again). And the term a snapshot is
     * restored with (raft's, of its last entry) is the store's own.
     */
    @Override
    public boolean appliesRaftEntries() {
        return true;
    }

    @Override
    public void apply(ApplyBatch batch) {
        KvStore s = store;
        boolean wantResults = batch.resultsWanted();
        for (int i = 0, n = batch.size(); i < n; i++) {
            Encodable body = batch.body(i);
            if (!(body instanceof KvReq)) {
                s.applyOther(batch.index(i), batch.term(i), batch.timestampMillis(i));
                if (body != null) {   // null: raft's own entry (appliesRaftEntries), which has no answer
                    batch.setError(i, KvCode.INVALID_REQUEST.number(), "the entry holds no DtKV request");
                }
                continue;
            }
            KvResp r = s.apply(batch.index(i), batch.term(i), batch.timestampMillis(i), (KvReq) body);
            int code = r.codeNumber();
            if (code != 0) {
                batch.setError(i, code, errorMessage(r));
            } else if (wantResults) {
                batch.setResult(i, r);
            }
        }
        afterApply();
    }

    static String errorMessage(KvResp r) {
        String m = r.message() == null || r.message().isEmpty() ? r.code() == null ? "" : r.code().meaning() : r.message();
        return r.failedPosition() > 0 ? m + " [position " + r.failedPosition() + "]" : m;
    }

    private void afterApply() {
        flushNotifies();
        if (leader && store.ttlManager().nextDueMillis() < expiryPlannedDueMillis) {
            expiryWake.signal();
        }
    }

    @Override
    public void onRoleChange(RaftRole role, int term, int leaderId) {
        boolean nowLeader = role == RaftRole.LEADER;
        if (nowLeader == leader || group == null) {
            return;
        }
        leader = nowLeader;
        leaderEpoch++;
        TtlManager ttl = store.ttlManager();
        if (nowLeader) {
            // before this term's first entry is applied: deadlines are counted again from now
            ttl.onLeaderStart(group.leaderClockMillis());
            new Fiber("kv-expiry-" + config.groupId, group.fiberGroup(), new ExpiryFiber(leaderEpoch), true).start();
        } else {
            ttl.onLeaderEnd();
            expiryWake.signal();
            // NONE: the group stops here (the node stops, or the group alone is restarted or removed,
            // and then the clients' connections to this node stay open)
            moveWatchers(role == RaftRole.NONE ? "stops raft group " + config.groupId : "no longer leads");
        }
    }

    // ---------------------------------------------------------------- snapshots

    @Override
    public SnapshotWriter takeSnapshot(SnapshotMeta meta) {
        KvSnapshot snap = store.openSnapshot();
        openSnapshots.put(snap, Boolean.TRUE);
        return new ChunkWriter(snap);
    }

    /**
     * Streams a snapshot as length-prefixed {@link io.poyang.dtkv.server.KvSnapshotChunk}s. The
     * chunks are made on the dispatcher between applies (the store keeps the versions the snapshot
     * sees); this I/O thread only waits for each and writes its bytes.
     */
    private final class ChunkWriter implements SnapshotWriter {
        private final KvSnapshot snap;

        ChunkWriter(KvSnapshot snap) {
            this.snap = snap;
        }

        @Override
        public void writeTo(OutputStream out) throws IOException {
            DataOutputStream d = new DataOutputStream(out);
            while (true) {
                CompletableFuture<Object[]> f = group.callInGroup(() -> {
                    if (!openSnapshots.containsKey(snap)) {
                        throw new IOException("the snapshot was closed (a snapshot from the leader replaced the state)");
                    }
                    KvSnapshotChunk c = snap.nextChunk();
                    return new Object[]{EncodeContext.encodeToArray(c), c.isLast()};
                });
                Object[] r;
                try {
                    r = f.get(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while writing a DtKV snapshot", e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IOException("making a DtKV snapshot chunk failed: " + e, e);
                }
                byte[] bytes = (byte[]) r[0];
                if (bytes.length > MAX_SNAPSHOT_CHUNK_BYTES) {
                    // readSnapshot would refuse the file, after raft deleted the log below it
                    throw new IOException("a DtKV snapshot chunk came to " + bytes.length + " bytes, over the "
                            + MAX_SNAPSHOT_CHUNK_BYTES + " a snapshot may hold; this snapshot is not written"
                            + " (the older one and the log stay)");
                }
                d.writeInt(bytes.length);
                d.write(bytes);
                if ((Boolean) r[1]) {
                    break;
                }
            }
            d.flush();
        }

        @Override
        public void release() {
            openSnapshots.remove(snap);
            snap.close();
        }
    }

    @Override
    public Object readSnapshot(SnapshotMeta meta, InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        List<KvSnapshotChunk> chunks = new ArrayList<>();
        KvSnapshotChunk.Decoder decoder = new KvSnapshotChunk.Decoder();
        while (true) {
            int len;
            try {
                len = d.readInt();
            } catch (EOFException e) {
                throw new IOException("the DtKV snapshot of " + meta + " ended before its last chunk", e);
            }
            if (len < 0 || len > MAX_SNAPSHOT_CHUNK_BYTES) {
                throw new IOException("the DtKV snapshot of " + meta + " holds a chunk of " + len + " bytes; it is damaged");
            }
            byte[] b = new byte[len];
            d.readFully(b);
            KvSnapshotChunk c = PbParser.parse(b, decoder);
            chunks.add(c);
            if (c.isLast()) {
                return chunks;
            }
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void installSnapshot(SnapshotMeta meta, Object state) {
        for (KvSnapshot s : new ArrayList<>(openSnapshots.keySet())) {
            s.close();   // a snapshot being written of the state that is replaced: its writer fails
        }
        openSnapshots.clear();
        KvSnapshotRestorer r = store.beginRestore();
        for (KvSnapshotChunk c : (List<KvSnapshotChunk>) state) {
            r.accept(c);
        }
        r.finish(meta.lastTerm());
        if (leader) {
            store.ttlManager().onLeaderStart(group.leaderClockMillis());
        }
        afterApply();
    }

    // ---------------------------------------------------------------- tasks from the network

    /**
     * A read (I/O thread): handed to raft's read path, which runs it on the dispatcher once it is
     * linearizable — under the leader's lease, after a ReadIndex round, or on a follower after the
     * leader confirmed a read index and this node applied that far. Reads waiting together share
     * one lease check, heartbeat round or request to the leader; the only allocation here is the
     * {@link KvRead} itself.
     */
    void read(ReqContext ctx, RaftGroup g, KvReq req, ReadKind kind) {
        g.read(kind, ctx.deadlineNanos(), new KvRead(ctx, req));
    }

    /** A watch registration (I/O thread). */
    void watch(ReqContext ctx, DtKvService.ClientConnection c, KvWatchReq req) {
        tasks.fireOffer(new WatchTask(ctx, c, req));
    }

    /** A client connection closed (I/O thread): its watches go. */
    void onConnectionClosed(long connectionId) {
        FiberChannel<Object> t = tasks;
        if (t != null) {
            t.fireOffer(new ConnectionClosed(connectionId));
        }
    }

    /** One KV_READ in raft's read path: served from the store when safe, or answered with why not. */
    private final class KvRead implements ReadTask {
        private final ReqContext ctx;
        private final KvReq req;

        KvRead(ReqContext ctx, KvReq req) {
            this.ctx = ctx;
            this.req = req;
        }

        /** Dispatcher thread: this node applied at least the confirmed read index. */
        @Override
        public void run() {
            if (ctx.isExpired()) {
                return;   // the client gave up; isExpired ended the request (nobody waits for the answer)
            }
            KvResp r;
            try {
                r = store.read(req);
            } catch (RuntimeException e) {
                log.warn("group {}: a DtKV read failed: {}", config.groupId, req, e);
                ctx.respondError(ResponseCode.SYS_ERROR, "the read failed on node " + service.nodeId() + ": " + e);
                return;
            }
            respond(ctx, r);
        }

        /** Raft could not make the read safe here: the client learns where to go, or that time ran out. */
        @Override
        public void fail(Throwable e) {
            if (e instanceof NotLeaderException) {
                ctx.respond(WritePacket.error(ResponseCode.NOT_LEADER, ((NotLeaderException) e).leaderId(),
                        e.getMessage()));
            } else if (e instanceof StoppedException) {
                ctx.respondError(ResponseCode.STOPPING, e.getMessage());
            } else if (e instanceof PoyangTimeoutException) {
                ctx.respondError(ResponseCode.TIMEOUT, e.getMessage());
            } else {
                ctx.respondError(ResponseCode.SYS_ERROR, "the read failed on node " + service.nodeId() + ": " + e);
            }
        }
    }

    private static final class WatchTask {
        final ReqContext ctx;
        final DtKvService.ClientConnection connection;
        final KvWatchReq req;

        WatchTask(ReqContext ctx, DtKvService.ClientConnection connection, KvWatchReq req) {
            this.ctx = ctx;
            this.connection = connection;
            this.req = req;
        }
    }

    private static final class NotifyDone {
        final long watcherId;
        final boolean delivered;

        NotifyDone(long watcherId, boolean delivered) {
            this.watcherId = watcherId;
            this.delivered = delivered;
        }
    }

    private static final class ConnectionClosed {
        final long connectionId;

        ConnectionClosed(long connectionId) {
            this.connectionId = connectionId;
        }
    }

    /** Takes every queued task in one go and serves them between applies. */
    private final class ServiceFiber extends FiberFrame<Void> {
        @Override
        public FrameCallResult execute(Object input) {
            return tasks.takeAll(taken, this::serve);
        }

        private FrameCallResult serve(Void v) {
            if (getGroup().isShouldStop()) {
                // the watchers were told to move when the stop began (onRoleChange with NONE)
                failWatches("the raft group is stopping");
                service.unregister(DtKvStateMachine.this);   // a group removed at runtime leaves the service
                return Fiber.frameReturn();
            }
            for (int i = 0, n = taken.size(); i < n; i++) {
                Object t = taken.get(i);
                try {
                    if (t instanceof NotifyDone) {
                        NotifyDone d = (NotifyDone) t;
                        store.watchManager().onNotifyDone(d.watcherId, d.delivered);
                    } else if (t instanceof WatchTask) {
                        serveWatch((WatchTask) t);
                    } else if (t instanceof ConnectionClosed) {
                        long id = ((ConnectionClosed) t).connectionId;
                        watchers.remove(id);
                        store.watchManager().removeWatcher(id);
                    }
                } catch (RuntimeException e) {
                    log.warn("group {}: a DtKV task failed: {}", config.groupId, t, e);
                    if (t instanceof WatchTask) {
                        ((WatchTask) t).ctx.respondError(ResponseCode.SYS_ERROR, e.toString());
                    }
                }
            }
            taken.clear();
            flushNotifies();
            return tasks.takeAll(taken, this::serve);
        }

        private void failWatches(String why) {
            for (Object t : taken) {
                if (t instanceof WatchTask) {
                    ((WatchTask) t).ctx.respondError(ResponseCode.STOPPING, why);
                }
            }
            taken.clear();
        }
    }

    private void serveWatch(WatchTask t) {
        DtKvService.ClientConnection c = t.connection;
        if (!c.connection.isOpen()) {
            t.ctx.respondError(ResponseCode.STOPPING, "the connection closed");
            return;
        }
        if (!t.req.isRemove() && (!leader || group.failure() != null)) {
            // Watches live on the leader: it drops them (and says so, a "moved" push) when it stops
            // leading. One registered on a follower would go silent for good if that follower
            // stopped applying (cut off, or its replica failed), and nothing would tell the client.
            int hint = group.leaderId();
            t.ctx.respond(WritePacket.error(ResponseCode.NOT_LEADER, hint == group.nodeId() ? 0 : hint,
                    "node " + group.nodeId() + " does not lead raft group " + config.groupId
                            + "; watches are registered with the leader"));
            return;
        }
        watchers.put(c.id, c);
        respond(t.ctx, store.watchManager().watch(c.id, t.req));
    }

    /**
     * This node stopped leading (or its replica failed as leader, or the group stops here): its
     * watchers are told to register with the leader and dropped. A node that no longer leads may
     * stop applying (cut off from the others, failed, stopped), and a watch left here would then
     * never hear of a change again.
     */
    private void moveWatchers(String why) {
        WatchManager wm = store.watchManager();
        if (watchers.size() == 0 && wm.watcherCount() == 0) {
            return;
        }
        List<Long> ids = new ArrayList<>();
        watchers.forEach((id, c) -> {
            ids.add(id);
            return true;
        });
        for (long id : ids) {
            DtKvService.ClientConnection c = watchers.remove(id);
            wm.removeWatcher(id);
            if (c != null && c.connection.isOpen()) {
                service.pushMoved(c, config.groupId, store.lastAppliedIndex());   // sent again if it fails
            }
        }
        log.info("group {}: node {} {}; told {} watcher(s) to register with the leader", config.groupId,
                group.nodeId(), why, ids.size());
    }

    private static void respond(ReqContext ctx, KvResp r) {
        if (r.codeNumber() == 0) {
            ctx.respond(WritePacket.response(r));
        } else {
            ctx.respond(WritePacket.bizError(r.codeNumber(), errorMessage(r)));
        }
    }

    // ---------------------------------------------------------------- pushes

    /** Sends the next notification of every watcher that has changes and nothing in flight. */
    private void flushNotifies() {
        WatchManager wm = store.watchManager();
        if (wm.watcherCount() == 0) {
            return;
        }
        List<Long> ready = wm.takeReady();
        for (int i = 0, n = ready.size(); i < n; i++) {
            long id = ready.get(i);
            DtKvService.ClientConnection c = watchers.get(id);
            if (c == null || !c.connection.isOpen()) {
                watchers.remove(id);
                wm.removeWatcher(id);
                continue;
            }
            KvWatchNotify notify = wm.nextNotify(id);
            if (notify != null) {
                service.push(c, KvCommands.KV_WATCH_NOTIFY, notify, new NotifyCallback(id));
            }
        }
    }

    /** The client's acknowledgement of a notification (I/O thread) goes back to the dispatcher. */
    private final class NotifyCallback implements RpcCallback<Object> {
        private final long watcherId;

        NotifyCallback(long watcherId) {
            this.watcherId = watcherId;
        }

        @Override
        public void onSuccess(Object result) {
            tasks.fireOffer(new NotifyDone(watcherId, true));
        }

        @Override
        public void onFailure(Throwable error) {
            tasks.fireOffer(new NotifyDone(watcherId, false));
        }
    }

    /** A lock was granted to a waiter or lost by its holder (apply thread, every replica). */
    private void onLockEvent(KvLockEvent e) {
        service.pushToClient(e.clientUuidMost(), e.clientUuidLeast(), KvCommands.KV_LOCK_EVENT, e);
    }

    // ---------------------------------------------------------------- expiry (leader)

    /**
     * While this node leads: sleeps until the next TTL or lease deadline (by this node's clock,
     * shifted as {@link TtlManager} says), then proposes the due expiries. Ends when leadership does.
     */
    private final class ExpiryFiber extends FiberFrame<Void> {
        private final int epoch;

        ExpiryFiber(int epoch) {
            this.epoch = epoch;
        }

        @Override
        public FrameCallResult execute(Object input) {
            return round(null);
        }

        private FrameCallResult round(Object ignored) {
            if (epoch != leaderEpoch || !leader || getGroup().isShouldStop()) {
                return Fiber.frameReturn();
            }
            // the clock this leader stamps its entries with, which the deadlines are counted in
            long now = group.leaderClockMillis();
            TtlManager ttl = store.ttlManager();
            List<KvReq> due = ttl.pollDue(now, EXPIRE_BATCH);
            for (KvReq r : due) {
                r.groupId(config.groupId);
                group.submit(KvCommands.KV_BIZ_TYPE, r, EXPIRE_PROPOSAL_TIMEOUT_MILLIS).whenComplete((res, e) -> {
                    if (e != null) {
                        log.debug("group {}: an expiry proposal failed (proposed again later): {}", config.groupId,
                                e.toString());
                    }
                });
            }
            if (due.size() == EXPIRE_BATCH) {
                return Fiber.yield(this::round);
            }
            long next = ttl.nextDueMillis();
            long waitMillis;
            if (next == Long.MAX_VALUE) {
                waitMillis = EXPIRY_IDLE_MILLIS;
            } else if (next <= now) {
                // due and proposed already, waiting to be applied: look again for retries now and then
                waitMillis = EXPIRY_RECHECK_MILLIS;
            } else {
                waitMillis = Math.min(EXPIRY_IDLE_MILLIS, next - now);
            }
            expiryPlannedDueMillis = next;
            return expiryWake.await(waitMillis, this::round);
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            log.warn("group {}: the expiry fiber failed", config.groupId, ex);
            return Fiber.frameReturn();
        }
    }
}
