package io.poyang.dtkv.client;

import io.poyang.common.DaemonTimer;
import io.poyang.common.FlowControlException;
import io.poyang.common.Futures;
import io.poyang.common.PoyangException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvListPage;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ConnectionListener;
import io.poyang.net.DecoderFactory;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.NioConnection;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.raft.client.RaftClient;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.raft.client.UnansweredAttemptListener;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The DtKV client: every operation of the tree, watches and distributed locks, over one
 * connection per node (a {@link RaftClient} underneath finds the leader, follows NOT_LEADER
 * answers and retries what was certainly not applied).
 *
 * <p>Every operation comes three ways: sync ({@code put(key, value)} returns the result or throws
 * {@link KvException} with a named {@link KvCode}, or a raft/net exception), with a
 * {@link KvCallback} ({@code put(key, value, callback)}), and as a {@link CompletableFuture}
 * ({@code putAsync(key, value)}). Callbacks and futures run on the callback executor (the common
 * pool unless configured), never on the I/O thread unless {@link KvClientConfig#callbackOnIoThread}.
 *
 * <p>Writes are exactly-once: each carries the client's id (its connection handshake id, also the
 * owner of its temp nodes and locks) and a seq; a write whose connection dropped before the answer,
 * whose leader stepped down before it committed (a leader cut off from its peers answers its
 * uncommitted writes so when check-quorum ends its leadership), or that got no answer within
 * {@link KvClientConfig#writeAttemptMillis} (3 s by default: a leader that answers pings but not
 * writes) is sent again with the same seq within its deadline — to the new leader, once the raft
 * client finds it — and the group applies it at most once, answering a repeat with the first
 * answer; the first answer to arrive wins. So is one the leader answered TIMEOUT before the write's
 * deadline (it holds each attempt to the attempt's deadline, and gave it no log index by then). Writes outstanding together may then
 * be applied in another order than they were sent; a write sent after another's answer is always
 * applied after it. A write with no answer by its deadline fails with
 * {@link RaftOutcomeUnknownException}: it may or may not be applied.
 *
 * <p>Reads are linearizable: each returns data at least as new as every write acknowledged before
 * it was sent. The {@link KvReadKind} (the config's, or a view's from {@link #withReadKind}) says
 * how: a lease read or a ReadIndex read on the leader, or a follower read on any node (to
 * {@link KvClientConfig#readNodeId} or the connected nodes in turn). A read to the leader that
 * gets no answer within {@link KvClientConfig#readAttemptMillis} (3 s by default) is sent again to
 * the leader found by asking every node, within its deadline, and so is a full watch
 * re-registration (a single add that gets no answer in that time is followed by one). A
 * read no node could confirm in time fails with {@link PoyangTimeoutException}, never with old data.
 *
 * <pre>{@code
 * KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:9432"));
 * kv.start();
 * kv.mkdir("app");
 * kv.put("app.url", "jdbc:...".getBytes(UTF_8));
 * KvNode n = kv.get("app.url");
 * kv.close();
 * }</pre>
 */
public final class KvClient implements AutoCloseable {

    /**
     * Most writes of one client to one group that may wait for their answers at once (the
     * exactly-once session's window); one more fails at once with FlowControlException.
     */
    public static final int MAX_OUTSTANDING_WRITES_PER_GROUP = KvSession.WINDOW;

    private static final PoyangLog log = PoyangLogs.get(KvClient.class);
    private static final DecoderFactory<KvResp> RESP = KvResp.Decoder::new;

    /** What all views of one client share. */
    static final class Shared {
        final KvClientConfig config;
        final RaftClient raft;
        final UUID clientId;
        /** The application's executor, with the client's own threads for what it rejects. */
        final CallbackExecutor callbackExecutor;
        final SerialExecutor eventExecutor;
        final ConcurrentHashMap<Integer, KvSession> sessions = new ConcurrentHashMap<>();
        final KvWatches watches;
        final KvLocks locks;
        /** The started election locks not closed yet: stopping the client ends their leadership first. */
        final Set<ElectionLock> electionLocks = ConcurrentHashMap.newKeySet();
        final ScheduledExecutorService timer;
        /** How long one attempt of a write waits before it is sent again ({@link KvClientConfig#writeAttemptMillis}). */
        final long writeAttemptMillis;
        /**
         * How long one attempt of a read to the leader or of a watch registration waits before it is
         * sent again ({@link KvClientConfig#readAttemptMillis}).
         */
        final long readAttemptMillis;
        /** The raft client's node ids (a view, filled when it starts), for follower reads. */
        final List<Integer> nodeIds;
        /** Where the next follower read starts looking for a connected node. */
        final AtomicInteger nextReadNode = new AtomicInteger();

        Shared(KvClientConfig config) {
            this.config = config;
            this.writeAttemptMillis = config.effectiveWriteAttemptMillis();   // checked before any thread starts
            this.readAttemptMillis = config.effectiveReadAttemptMillis();
            config.checkedHeartbeatIntervalMillis();
            config.raft.callbackOnIoThread = true;   // this client delivers on its own executor
            this.raft = new RaftClient(config.raft);
            this.clientId = raft.clientUuid();
            this.callbackExecutor = new CallbackExecutor(
                    config.callbackExecutor != null ? config.callbackExecutor : ForkJoinPool.commonPool(), config.raft.net.name);
            this.eventExecutor = new SerialExecutor(callbackExecutor);
            this.timer = DaemonTimer.create(config.raft.net.name + "-kv-timer");
            this.watches = new KvWatches(this);
            this.locks = new KvLocks(this);
            raft.network().register(KvCommands.KV_WATCH_NOTIFY, watches.processor());
            raft.network().register(KvCommands.KV_LOCK_EVENT, locks.processor());
            raft.network().setConnectionListener(new ConnectionListener() {
                @Override
                public void onConnected(NioConnection connection) {
                    watches.onConnected(connection);
                    locks.onConnected();
                }

                @Override
                public void onClosed(NioConnection connection) {
                    watches.onClosed(connection);
                }
            });
            this.nodeIds = raft.nodeIds();
        }

        /**
         * The node for a follower read: {@code readNodeId} while connected, else the next connected
         * node in turn. {@code avoid} (the node that just failed) is taken only when no other is
         * connected; nodes in {@code exclude} (they host no such group) never. 0: none connected.
         */
        int pickReadNode(int avoid, List<Integer> exclude) {
            int preferred = config.readNodeId;
            if (preferred != 0 && preferred != avoid && raft.isConnected(preferred)
                    && (exclude == null || !exclude.contains(preferred))) {
                return preferred;
            }
            int n = nodeIds.size();
            int start = (nextReadNode.getAndIncrement() & Integer.MAX_VALUE) % Math.max(1, n);
            int fallback = 0;
            for (int i = 0; i < n; i++) {
                int id = nodeIds.get((start + i) % n);
                if (exclude != null && exclude.contains(id) || !raft.isConnected(id)) {
                    continue;
                }
                if (id == avoid) {
                    fallback = id;
                    continue;
                }
                return id;
            }
            return fallback;
        }

        KvSession session(int groupId) {
            KvSession s = sessions.get(groupId);
            if (s == null) {
                s = sessions.computeIfAbsent(groupId, g -> new KvSession());
            }
            return s;
        }
    }

    final Shared shared;
    final int groupId;
    private final KvReadKind readKind;
    private final boolean root;

    public KvClient(KvClientConfig config) {
        if (config.readKind == null) {
            throw new IllegalArgumentException("KvClientConfig.readKind must not be null (LEASE_READ is the default)");
        }
        this.shared = new Shared(config);
        this.groupId = config.groupId;
        this.readKind = config.readKind;
        this.root = true;
    }

    private KvClient(Shared shared, int groupId, KvReadKind readKind) {
        this.shared = shared;
        this.groupId = groupId;
        this.readKind = readKind;
        this.root = false;
    }

    /** Connects to the nodes (connections are made in the background; operations wait for them within their deadline). */
    public void start() {
        if (root) {
            shared.raft.start();
        }
    }

    /**
     * Stops the client: its election locks stop competing (a leader hears {@code onLost}), locks it
     * holds are released and lock queues it waits in are left (best effort, answered within the
     * network's stop timeout), connections close, pending operations fail. Views made by
     * {@link #forGroup} stop with it.
     */
    public void stop() {
        if (root) {
            // before the release lets another candidate lead: a leader here must stop claiming it first
            for (ElectionLock e : shared.electionLocks) {
                e.onClientStop();
            }
            shared.locks.releaseAll();
            shared.locks.closeAll();
            List<Runnable> dropped = shared.timer.shutdownNow();
            shared.raft.stop();
            // resends and retries waiting in the timer: run now, each fails its request as stopped
            DaemonTimer.runDropped(dropped);
        }
    }

    @Override
    public void close() {
        stop();
    }

    /** Waits until connected to every node (tests, tools). */
    public void waitForConnected(long timeoutMillis) throws InterruptedException {
        shared.raft.waitForConnected(timeoutMillis);
    }

    /**
     * A view of this client on another DtKV group of the same cluster: the same connections,
     * session id and executor. Stopping the original stops it.
     */
    public KvClient forGroup(int groupId) {
        return new KvClient(shared, groupId, readKind);
    }

    /**
     * A view of this client whose reads use {@code kind} (same connections, session and group):
     * {@code kv.withReadKind(KvReadKind.FOLLOWER_READ).get(key)} spreads reads over the nodes,
     * {@code READ_INDEX} does not rely on the leader's lease (clocks). Writes are the same for
     * every view. Stopping the original stops it.
     */
    public KvClient withReadKind(KvReadKind kind) {
        if (kind == null) {
            throw new IllegalArgumentException("kind must not be null");
        }
        return kind == readKind ? this : new KvClient(shared, groupId, kind);
    }

    /** How this view's reads are made linearizable. */
    public KvReadKind readKind() {
        return readKind;
    }

    /** This client's id: the owner of its temp nodes and locks, and its exactly-once session. */
    public UUID clientId() {
        return shared.clientId;
    }

    public int groupId() {
        return groupId;
    }

    /** The raft client underneath (leader hints, counters). */
    public RaftClient raftClient() {
        return shared.raft;
    }

    // =====================================================================================
    // writes
    // =====================================================================================

    /** Creates or replaces a value; returns the raft index of the write (the node's new update index). */
    public long put(String key, byte[] value) {
        return sync(putAsync(key, value));
    }

    public void put(String key, byte[] value, KvCallback<Long> callback) {
        write(KvReq.put(key, value), key, INDEX, callback);
    }

    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        return future(cb -> put(key, value, cb));
    }

    /** Puts a UTF-8 string. */
    public long put(String key, String value) {
        return put(key, utf8(value));
    }

    /**
     * Sets all keys or none, in one raft entry; a failure names the 1-based position of the key
     * ({@link KvException#failedPosition()}). A batch with no keys, or with not one value per key,
     * fails with IllegalArgumentException before anything is sent.
     */
    public long batchPut(List<String> keys, List<byte[]> values) {
        return sync(batchPutAsync(keys, values));
    }

    public void batchPut(List<String> keys, List<byte[]> values, KvCallback<Long> callback) {
        if (checkBatchHasKeys("batchPut", keys, callback) && checkValueCount(keys, values, callback)
                && checkBatch(keys, values, callback)) {
            write(KvReq.batchPut(keys, values), null, INDEX, callback);
        }
    }

    public CompletableFuture<Long> batchPutAsync(List<String> keys, List<byte[]> values) {
        return future(cb -> batchPut(keys, values, cb));
    }

    /** Removes a value or an empty directory. */
    public long remove(String key) {
        return sync(removeAsync(key));
    }

    public void remove(String key, KvCallback<Long> callback) {
        write(KvReq.remove(key), key, INDEX, callback);
    }

    public CompletableFuture<Long> removeAsync(String key) {
        return future(cb -> remove(key, cb));
    }

    /**
     * Removes all keys or none, in order (a directory may follow its children). A batch with no keys
     * fails with IllegalArgumentException before anything is sent.
     */
    public long batchRemove(List<String> keys) {
        return sync(batchRemoveAsync(keys));
    }

    public void batchRemove(List<String> keys, KvCallback<Long> callback) {
        if (checkBatchHasKeys("batchRemove", keys, callback) && checkBatch(keys, null, callback)) {
            write(KvReq.batchRemove(keys), null, INDEX, callback);
        }
    }

    public CompletableFuture<Long> batchRemoveAsync(List<String> keys) {
        return future(cb -> batchRemove(keys, cb));
    }

    /** Creates a directory (an existing directory is success). */
    public long mkdir(String key) {
        return sync(mkdirAsync(key));
    }

    public void mkdir(String key, KvCallback<Long> callback) {
        write(KvReq.mkdir(key), key, INDEX, callback);
    }

    public CompletableFuture<Long> mkdirAsync(String key) {
        return future(cb -> mkdir(key, cb));
    }

    /**
     * Sets {@code value} if the key holds exactly {@code expected} ({@code expected == null}: only if
     * the key does not exist). True when set, false on CAS_MISMATCH; other failures throw.
     */
    public boolean compareAndSet(String key, byte[] expected, byte[] value) {
        return sync(compareAndSetAsync(key, expected, value));
    }

    public void compareAndSet(String key, byte[] expected, byte[] value, KvCallback<Boolean> callback) {
        KvReq req = expected == null ? KvReq.compareAbsentAndSet(key, value) : KvReq.compareAndSet(key, expected, value);
        write(req, key, CAS, callback);
    }

    public CompletableFuture<Boolean> compareAndSetAsync(String key, byte[] expected, byte[] value) {
        return future(cb -> compareAndSet(key, expected, value, cb));
    }

    /**
     * A temp value owned by this client that expires {@code ttlMillis} after it is written (again
     * over this client's own temp value: new value, TTL restarts).
     */
    public long putTemp(String key, byte[] value, long ttlMillis) {
        return sync(putTempAsync(key, value, ttlMillis));
    }

    public void putTemp(String key, byte[] value, long ttlMillis, KvCallback<Long> callback) {
        write(KvReq.putTemp(key, value, ttlMillis), key, INDEX, callback);
    }

    public CompletableFuture<Long> putTempAsync(String key, byte[] value, long ttlMillis) {
        return future(cb -> putTemp(key, value, ttlMillis, cb));
    }

    /** A temp directory owned by this client; it expires with everything under it, in one entry. */
    public long makeTempDir(String key, long ttlMillis) {
        return sync(makeTempDirAsync(key, ttlMillis));
    }

    public void makeTempDir(String key, long ttlMillis, KvCallback<Long> callback) {
        write(KvReq.makeTempDir(key, ttlMillis), key, INDEX, callback);
    }

    public CompletableFuture<Long> makeTempDirAsync(String key, long ttlMillis) {
        return future(cb -> makeTempDir(key, ttlMillis, cb));
    }

    /** Restarts a temp node's TTL from now ({@code ttlMillis}); owner only. */
    public long updateTtl(String key, long ttlMillis) {
        return sync(updateTtlAsync(key, ttlMillis));
    }

    public void updateTtl(String key, long ttlMillis, KvCallback<Long> callback) {
        write(KvReq.updateTtl(key, ttlMillis), key, INDEX, callback);
    }

    public CompletableFuture<Long> updateTtlAsync(String key, long ttlMillis) {
        return future(cb -> updateTtl(key, ttlMillis, cb));
    }

    // =====================================================================================
    // reads
    // =====================================================================================

    /** The node at {@code key}; a missing key is a node with {@code exists() == false} (create index 0). */
    public KvNode get(String key) {
        return sync(getAsync(key));
    }

    public void get(String key, KvCallback<KvNode> callback) {
        read(KvReq.get(key), key, NODE, callback);
    }

    public CompletableFuture<KvNode> getAsync(String key) {
        return future(cb -> get(key, cb));
    }

    /** The value at {@code key} as UTF-8, or null when it does not exist (or is a directory). */
    public String getString(String key) {
        KvNode n = get(key);
        return n.exists() && !n.isDir() ? new String(n.value(), StandardCharsets.UTF_8) : null;
    }

    /**
     * One node per key, in order. A batch with no keys fails with IllegalArgumentException before
     * anything is sent, as an empty batchPut or batchRemove does.
     */
    public List<KvNode> batchGet(List<String> keys) {
        return sync(batchGetAsync(keys));
    }

    public void batchGet(List<String> keys, KvCallback<List<KvNode>> callback) {
        if (checkBatchHasKeys("batchGet", keys, callback) && checkBatch(keys, null, callback)) {
            read(KvReq.batchGet(keys), null, NODES, callback);
        }
    }

    public CompletableFuture<List<KvNode>> batchGetAsync(List<String> keys) {
        return future(cb -> batchGet(keys, cb));
    }

    /** The children of a directory ("" is the root), sorted by key, values included. */
    public List<KvNode> list(String dirKey) {
        return sync(listAsync(dirKey));
    }

    public void list(String dirKey, KvCallback<List<KvNode>> callback) {
        read(KvReq.list(dirKey), dirKey, NODES, callback);
    }

    public CompletableFuture<List<KvNode>> listAsync(String dirKey) {
        return future(cb -> list(dirKey, cb));
    }

    /**
     * One page of a directory's children, by key: those after {@code startAfter} (a full key, as
     * {@link KvNode#key()} gives; null: from the first; it need not exist), at most {@code limit}
     * (0: {@link KvKeys#DEFAULT_LIST_PAGE_NODES}) and about 4 MiB of nodes ({@link KvKeys#MAX_LIST_PAGE_BYTES};
     * a single larger child comes alone). Ask again with {@link KvListPage#nextStartAfter()} while {@link KvListPage#more()}.
     * Each page is one linearizable read; a directory read in pages is not one snapshot: a child added
     * or removed meanwhile shows in a later page or not at all, while the others come exactly once.
     * Use it for a directory too large for {@link #list} (ANSWER_TOO_LARGE).
     */
    public KvListPage listPage(String dirKey, String startAfter, int limit) {
        return sync(listPageAsync(dirKey, startAfter, limit));
    }

    public void listPage(String dirKey, String startAfter, int limit, KvCallback<KvListPage> callback) {
        if (limit < 0) {
            deliver(callback, null, new KvException(KvCode.INVALID_REQUEST, dirKey, "a list limit of " + limit
                    + " is negative; give 0 for the default"));
            return;
        }
        read(KvReq.listPage(dirKey, startAfter, limit), dirKey, r -> pageOf(r, startAfter, limit), callback);
    }

    /**
     * The page an answer holds. A server older than paging ignores start_after and limit and answers
     * the whole directory without {@code more}: cut here to what was asked (a no-op on a page).
     */
    static KvListPage pageOf(KvResp r, String startAfter, int limit) {
        List<KvNode> nodes = r.nodes();
        boolean more = r.more();
        if (!more) {
            int from = 0;
            if (startAfter != null && !startAfter.isEmpty()) {
                while (from < nodes.size() && nodes.get(from).key().compareTo(startAfter) <= 0) {
                    from++;
                }
            }
            int to = nodes.size();
            if (limit > 0 && to - from > limit) {
                to = from + limit;
                more = true;
            }
            if (from > 0 || to < nodes.size()) {
                nodes = new ArrayList<>(nodes.subList(from, to));
            }
        }
        return new KvListPage(nodes, more, r.raftIndex());
    }

    public CompletableFuture<KvListPage> listPageAsync(String dirKey, String startAfter, int limit) {
        return future(cb -> listPage(dirKey, startAfter, limit, cb));
    }

    // =====================================================================================
    // watches and locks
    // =====================================================================================

    /**
     * Watches keys and directories of this client's group: the listener first gets the current
     * state of each (an absent key as a node that does not exist; a directory as its whole subtree),
     * then every change, in order, on the callback executor. Changes coalesce: a slow listener gets
     * the latest state of each changed key. After a reconnect or a failover the watch is registered
     * again with the index of the last state seen, so the listener always ends with the latest
     * state; the server then sends what changed, and watched directories whole and missing keys as
     * absent again, so the listener may get those states twice. Close the returned handle to stop.
     */
    public KvWatch watch(KvWatchListener listener, String... keys) {
        return shared.watches.watch(groupId, listener, keys);
    }

    /**
     * A distributed lock of this group by name (lock names follow the key rules; no parent needed):
     * the same object for a name as long as it exists; the client keeps only the ones in use, so an
     * unused one nobody refers to goes (see {@link KvLock}).
     */
    public KvLock lock(String name) {
        return shared.locks.lock(this, name);
    }

    /**
     * A lock for leader election that this client keeps trying to take and, once held, renews every
     * third of its lease; the listener hears {@code onAcquired(fencingToken)} and {@code onLost()}
     * on the callback executor. Call {@link ElectionLock#start()}; {@link ElectionLock#close()}
     * releases it without waiting ({@link ElectionLock#closeAsync()} tells when), and so does
     * stopping this client (which also reports {@code onLost()} to a leader).
     */
    public ElectionLock electionLock(String name, long leaseMillis, ElectionLock.Listener listener) {
        return new ElectionLock(this, name, leaseMillis, listener);
    }

    // =====================================================================================
    // the request path
    // =====================================================================================

    /** How a KvResp becomes the operation's result. */
    interface ResultMapper<T> {
        T map(KvResp resp);
    }

    static final ResultMapper<Long> INDEX = KvResp::raftIndex;
    static final ResultMapper<Boolean> CAS = r -> Boolean.TRUE;
    static final ResultMapper<KvNode> NODE = KvResp::node;
    static final ResultMapper<List<KvNode>> NODES = r -> r.nodes() == null ? Collections.<KvNode>emptyList() : r.nodes();
    static final ResultMapper<KvResp> RAW = r -> r;

    /** Sends a write with this client's session; see the class comment for retries. */
    <T> void write(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback) {
        write(req, key, mapper, callback, shared.config.timeoutMillis);
    }

    <T> void write(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback, long timeoutMillis) {
        if (key != null && !checkKey(req.op(), key, callback)) {
            return;
        }
        KvSession session = shared.session(groupId);
        long seq = session.next();
        if (seq == 0) {
            deliver(callback, null, new FlowControlException("more than " + KvSession.WINDOW + " writes of this client"
                    + " are waiting for answers; slow down"));
            return;
        }
        req.groupId(groupId).session(shared.clientId.getMostSignificantBits(), shared.clientId.getLeastSignificantBits())
                .seq(seq, session.ackedBelow());
        if (!checkRequestSize(req, key, callback)) {
            session.complete(seq);
            return;
        }
        Call<T> call = new Call<>(req, key, mapper, callback, KvCommands.KV_WRITE, session, seq,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        call.send();
    }

    /**
     * Sends a read with this view's read kind: to the leader (lease read, ReadIndex) through the
     * raft client's leader discovery, or to a node in turn (follower read).
     */
    <T> void read(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback) {
        if (key != null && !checkKey(req.op(), key, callback)) {
            return;
        }
        req.groupId(groupId).readKind(readKind);
        if (!checkRequestSize(req, key, callback)) {
            return;
        }
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(shared.config.timeoutMillis);
        if (readKind == KvReadKind.FOLLOWER_READ) {
            new NodeReadCall<>(req, key, mapper, callback, deadlineNanos).send();
            return;
        }
        new Call<>(req, key, mapper, callback, KvCommands.KV_READ, null, 0, deadlineNanos).send();
    }

    private <T> boolean checkKey(KvOp op, String key, KvCallback<T> callback) {
        KvCode c = op == KvOp.LIST ? KvKeys.checkDirOrRoot(key) : KvKeys.check(key);
        if (c == KvCode.SUCCESS) {
            return true;
        }
        deliver(callback, null, new KvException(c, key, KvKeys.explain(c, key)));
        return false;
    }

    /**
     * A request larger than {@link KvKeys#MAX_REQUEST_BYTES} fails here with a KvException: the
     * network layer would refuse one over the frame with a bare NetException, and the server one just
     * under it (it could not be replicated). Sized once the request is complete; sending reuses the size.
     */
    private <T> boolean checkRequestSize(KvReq req, String key, KvCallback<T> callback) {
        int bytes = req.encodedSize();
        KvCode c = KvKeys.checkRequestSize(req.op(), bytes);
        if (c == KvCode.SUCCESS) {
            return true;
        }
        deliver(callback, null, new KvException(c, key, KvKeys.explainRequestSize(req.op(), bytes)));
        return false;
    }

    /**
     * A batch with no keys (or a null list) is a caller's bug, not a request: a write batch would cost
     * a replicated and fsynced raft entry that changes nothing, and a batchGet a trip through raft's
     * read path (a lease check, or a heartbeat round for READ_INDEX) that answers nothing. The server
     * refuses both too, for clients that do not check. It fails through the callback like the other
     * input checks, so the sync form throws it, the future fails with it and a callback gets it in
     * onFailure.
     */
    private <T> boolean checkBatchHasKeys(String operation, List<String> keys, KvCallback<T> callback) {
        if (keys != null && !keys.isEmpty()) {
            return true;
        }
        deliver(callback, null, new IllegalArgumentException(operation + " was given " + (keys == null ? "a null key"
                + " list" : "no keys") + ": a batch needs at least one key (skip the call when there is nothing"
                + " to " + (operation.equals("batchGet") ? "read" : "write") + ")"));
        return false;
    }

    /**
     * A batchPut needs one value per key; lists of different lengths are a caller's bug, which would
     * otherwise reach the server and come back as INVALID_REQUEST without saying which list is short.
     */
    private <T> boolean checkValueCount(List<String> keys, List<byte[]> values, KvCallback<T> callback) {
        int valueCount = values == null ? 0 : values.size();
        if (valueCount == keys.size()) {
            return true;
        }
        deliver(callback, null, new IllegalArgumentException("batchPut was given " + keys.size() + " keys and "
                + (values == null ? "a null value list" : valueCount + " values") + ": it needs one value per key,"
                + " in the same order"));
        return false;
    }

    /**
     * A batch's keys are checked before sending like a single key (a null one would otherwise fail
     * the encoding with a bare NullPointerException): a bad key, or a null value of a batchPut, fails
     * with its 1-based position.
     */
    private <T> boolean checkBatch(List<String> keys, List<byte[]> values, KvCallback<T> callback) {
        for (int i = 0, n = keys == null ? 0 : keys.size(); i < n; i++) {
            String key = keys.get(i);
            KvCode c = KvKeys.check(key);
            if (c != KvCode.SUCCESS) {
                deliver(callback, null, new KvException(c, key, KvKeys.explain(c, key)).failedPosition(i + 1));
                return false;
            }
        }
        for (int i = 0, n = values == null ? 0 : values.size(); i < n; i++) {
            if (values.get(i) == null) {
                String key = keys != null && i < keys.size() ? keys.get(i) : null;
                deliver(callback, null, new KvException(KvCode.INVALID_REQUEST, key, "value " + (i + 1)
                        + " of the batch is null; pass an empty array for an empty value").failedPosition(i + 1));
                return false;
            }
        }
        return true;
    }

    /**
     * A request in flight whose answer is mapped to the caller's result type and delivered once: what
     * {@link Call} and {@link NodeReadCall} share. The answer (or its mapping's failure) goes to
     * {@link #finish}.
     */
    abstract class MappedCall<T> implements RpcCallback<KvResp> {
        final KvReq req;
        final String key;
        final ResultMapper<T> mapper;
        final KvCallback<T> callback;
        final long deadlineNanos;

        MappedCall(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback, long deadlineNanos) {
            this.req = req;
            this.key = key;
            this.mapper = mapper;
            this.callback = callback;
            this.deadlineNanos = deadlineNanos;
        }

        @Override
        public void onSuccess(KvResp resp) {
            T result;
            try {
                result = mapper.map(resp);
            } catch (RuntimeException e) {
                finish(null, e);
                return;
            }
            finish(result, null);
        }

        /** Delivers the outcome to the caller (once). */
        abstract void finish(T result, Throwable error);
    }

    /** One operation in flight: sent through the raft client, mapped, delivered once. */
    final class Call<T> extends MappedCall<T> implements UnansweredAttemptListener {
        private final int command;
        private final KvSession session;
        private final long seq;
        /**
         * A copy of this write went out and got no outcome (its connection lost, no answer within the
         * attempt limit, its leader stepped down with it in its log): whatever a later copy hears that
         * says "not applied" is true of that copy only.
         */
        private boolean earlierCopyUnknown;
        /** What became of the earlier copy, for the outcome-unknown message. */
        private String earlierCopyFate = "its connection was lost";
        /** The pause before sending again after SESSION_EXPIRED; doubles each time. */
        private long expiredBackoffMillis = 10;
        /** The answer that made the last copy be sent again (reported if the deadline passes first). */
        private Throwable resentAfter;

        Call(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback, int command, KvSession session,
             long seq, long deadlineNanos) {
            super(req, key, mapper, callback, deadlineNanos);
            this.command = command;
            this.session = session;
            this.seq = seq;
        }

        void send() {
            long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (leftMillis <= 0) {
                finish(null, session == null ? readTimeout(groupId, req, null)
                        : earlierCopyUnknown || resentAfter == null
                        ? new RaftOutcomeUnknownException(groupId, "an earlier copy of the write was sent and "
                        + earlierCopyFate + ", and the deadline passed before it could be sent again; it may or"
                        + " may not be applied", null)
                        : resentAfter);
                return;
            }
            try {
                if (session != null) {
                    // the group applies (client, seq) once: each attempt may go unanswered for a while
                    // only, then the raft client sends it to whoever leads then
                    shared.raft.callLeaderExactlyOnce(groupId, command, req, RESP, leftMillis,
                            shared.writeAttemptMillis, this);
                } else {
                    // a read changes nothing: an attempt the leader holds unanswered (its group stuck) is
                    // sent again to the leader of the highest term, within the deadline
                    shared.raft.callLeaderIdempotent(groupId, command, req, RESP, leftMillis,
                            shared.readAttemptMillis, this);
                }
            } catch (RuntimeException e) {
                // Flow control, or the client stopping. On a resend (the timer thread, or the stop
                // running the resends still waiting) "not sent" is of this copy only: an earlier
                // copy, whose connection was lost, may still be applied.
                finish(null, session != null && earlierCopyUnknown ? outcomeUnknown(e) : e);
            }
        }

        @Override
        public void onFailure(Throwable error) {
            if (error instanceof RemoteException) {
                RemoteException r = (RemoteException) error;
                if (r.responseCode() == ResponseCode.BIZ_ERROR) {
                    if (mapper == CAS && r.bizCode() == KvCode.CAS_MISMATCH.number()) {
                        finish(castFalse(), null);
                        return;
                    }
                    KvException answer = toKvException(r, key);
                    if (session != null && r.bizCode() == KvCode.SESSION_EXPIRED.number()) {
                        // The group forgot this client's session (idle longer than its sessionIdleMillis)
                        // and refused the write, because seqs below it were still open then. It takes the
                        // write once they have ended (answered or given up): send it again, same seq,
                        // with the acknowledged mark as it is now.
                        resentAfter = answer;
                        long pause = expiredBackoffMillis;
                        expiredBackoffMillis = Math.min(expiredBackoffMillis * 2, shared.config.raft.maxRetryBackoffMillis);
                        req.seq(seq, session.ackedBelow());
                        if (resendAfter(pause)) {
                            return;
                        }
                    }
                    finish(null, earlierCopyUnknown && answer.kvCode() == KvCode.SESSION_EXPIRED
                            ? outcomeUnknown(answer) : answer);
                    return;
                }
            }
            // (A read's and a write's copies are sent again by the raft client itself: callLeaderIdempotent
            // and callLeaderExactlyOnce resend after a lost connection or no answer within the attempt
            // limit, and report such a failure only once the deadline has passed.)
            if (session != null && earlierCopyUnknown && !(error instanceof RaftOutcomeUnknownException)) {
                // e.g. "no leader took the write before its deadline; it was not applied": of this copy
                error = outcomeUnknown(error);
            }
            finish(null, session == null ? readFailure(groupId, req, error) : error);
        }

        /**
         * A copy of this write went unanswered and the raft client sends it again: that copy may still
         * be applied, whatever a later copy hears (see {@link #earlierCopyUnknown}).
         */
        @Override
        public void onUnansweredAttempt(int nodeId, Throwable why) {
            earlierCopyUnknown = true;
            if (isSteppedDown(why)) {
                earlierCopyFate = "its leader (node " + nodeId + ") stepped down before it committed";
            } else if (why instanceof NetTimeoutException) {
                earlierCopyFate = "node " + nodeId + " did not answer it within the attempt limit ("
                        + shared.writeAttemptMillis + " ms, KvClientConfig.writeAttemptMillis)";
            } else if (why instanceof NetConnectionException) {
                earlierCopyFate = "its connection to node " + nodeId + " was lost";
            } else {
                earlierCopyFate = "node " + nodeId + " failed with it in its log (" + why.getMessage() + ")";
            }
        }

        /** Schedules {@link #send} again; false when the deadline is too close or the client stopped. */
        private boolean resendAfter(long pauseMillis) {
            if (deadlineNanos - System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(pauseMillis) <= 0) {
                return false;
            }
            try {
                shared.timer.schedule(this::send, pauseMillis, TimeUnit.MILLISECONDS);
                return true;
            } catch (RejectedExecutionException e) {
                return false;   // stopped: the caller reports the failure
            }
        }

        private RaftOutcomeUnknownException outcomeUnknown(Throwable lastCopysFailure) {
            return new RaftOutcomeUnknownException(groupId, "an earlier copy of the write was sent and "
                    + earlierCopyFate + ", and the last copy failed (" + lastCopysFailure.getMessage()
                    + "): it may or may not be applied", lastCopysFailure);
        }

        @SuppressWarnings("unchecked")
        private T castFalse() {
            return (T) Boolean.FALSE;
        }

        @Override
        void finish(T result, Throwable error) {
            if (session != null) {
                session.complete(seq);
            }
            deliver(callback, result, error);
        }
    }

    /**
     * A follower read: sent to one node (see {@link Shared#pickReadNode}); a node that cannot serve
     * it now (no leader known, stopping, connection lost, no answer within
     * {@link KvClientConfig#readAttemptMillis}) is left for the next one, until the deadline. Reads
     * change nothing, so sending one again is always safe.
     */
    final class NodeReadCall<T> extends MappedCall<T> {
        /** 1 once the outcome is delivered (a field, not an AtomicInteger: one object less per read). */
        volatile int done;
        private long backoffMillis;
        private int node;
        private int failedNode;
        private Throwable lastError;
        /** Nodes that answered they host no such group (rare; allocated then). */
        private List<Integer> noGroup;

        NodeReadCall(KvReq req, String key, ResultMapper<T> mapper, KvCallback<T> callback, long deadlineNanos) {
            super(req, key, mapper, callback, deadlineNanos);
            this.backoffMillis = shared.config.raft.minRetryBackoffMillis;
        }

        void send() {
            long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (leftMillis <= 0) {
                finish(null, readTimeout(groupId, req, lastError));
                return;
            }
            int n = shared.pickReadNode(failedNode, noGroup);
            if (n == 0) {
                retryLater(new NetConnectionException("no node of the cluster is connected"));
                return;
            }
            node = n;
            try {
                // a node whose group is stuck holds the read for one attempt, then the next node is asked
                shared.raft.callNode(n, KvCommands.KV_READ, req, RESP, Math.min(leftMillis, shared.readAttemptMillis),
                        this);
            } catch (NetConnectionException e) {
                failedNode = n;
                retryLater(e);
            } catch (RuntimeException e) {
                finish(null, e);
            }
        }

        private void retryLater(Throwable why) {
            lastError = why;
            long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            long pause = Math.max(1, Math.min(backoffMillis, leftMillis));
            backoffMillis = Math.min(backoffMillis * 2, shared.config.raft.maxRetryBackoffMillis);
            try {
                shared.timer.schedule(this::send, pause, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                finish(null, new StoppedException("the DtKV client is stopped"));
            }
        }

        @Override
        public void onFailure(Throwable error) {
            if (error instanceof RemoteException) {
                RemoteException r = (RemoteException) error;
                switch (r.responseCode()) {
                    case ResponseCode.BIZ_ERROR:
                        finish(null, toKvException(r, key));
                        return;
                    case ResponseCode.NOT_LEADER:   // knows no leader to confirm the read with
                    case ResponseCode.STOPPING:
                        failedNode = node;
                        retryLater(r);
                        return;
                    case ResponseCode.TIMEOUT:      // could not confirm it within this attempt: try another
                        if (deadlineNanos - System.nanoTime() > 0) {
                            failedNode = node;
                            retryLater(r);
                            return;
                        }
                        finish(null, readFailure(groupId, req, r));
                        return;
                    case ResponseCode.BAD_REQUEST:  // the node hosts no such group; others may
                        if (noGroup == null) {
                            noGroup = new ArrayList<>(2);
                        }
                        noGroup.add(node);
                        if (noGroup.size() >= shared.nodeIds.size()) {
                            finish(null, r);
                        } else {
                            retryLater(r);
                        }
                        return;
                    default:
                        finish(null, readFailure(groupId, req, r));
                        return;
                }
            }
            if (error instanceof NetConnectionException
                    || error instanceof NetTimeoutException && deadlineNanos - System.nanoTime() > 0) {
                // lost, or not answered within readAttemptMillis (the node's group stuck, say)
                failedNode = node;
                retryLater(error);
                return;
            }
            finish(null, readFailure(groupId, req, error));
        }

        @Override
        void finish(T result, Throwable error) {
            if (READ_DONE.compareAndSet(this, 0, 1)) {
                deliver(callback, result, error);
            }
        }
    }

    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<NodeReadCall> READ_DONE =
            AtomicIntegerFieldUpdater.newUpdater(NodeReadCall.class, "done");

    /**
     * Whether {@code cause} is a leader's answer that it stopped leading with the write in its log,
     * not committed as far as it knew (SYS_ERROR, {@link RaftCommands#SYS_ERROR_STEPPED_DOWN}).
     */
    static boolean isSteppedDown(Throwable cause) {
        return cause instanceof RemoteException && ((RemoteException) cause).responseCode() == ResponseCode.SYS_ERROR
                && ((RemoteException) cause).bizCode() == RaftCommands.SYS_ERROR_STEPPED_DOWN;
    }

    /** What a read's failure means to the caller: reads have no "unknown outcome", only no answer in time. */
    static Throwable readFailure(int groupId, KvReq req, Throwable error) {
        // (RaftOutcomeUnknownException is a PoyangTimeoutException: look at its cause first)
        if (error instanceof RaftOutcomeUnknownException && error.getCause() instanceof RemoteException) {
            RemoteException r = (RemoteException) error.getCause();   // SYS_ERROR: the server failed serving it
            return new PoyangException("the read " + req + " of DtKV group " + groupId + " failed on the server: "
                    + r.remoteMessage(), r);
        }
        if (error instanceof PoyangTimeoutException || error instanceof NetTimeoutException
                || error instanceof RemoteException && ((RemoteException) error).responseCode() == ResponseCode.TIMEOUT) {
            return readTimeout(groupId, req, error);
        }
        return error;
    }

    static PoyangTimeoutException readTimeout(int groupId, KvReq req, Throwable cause) {
        // a node's own answer or a lost connection says why; the raft client's timeouts speak of writes
        boolean telling = cause instanceof RemoteException || cause instanceof NetConnectionException;
        return new PoyangTimeoutException("no node served the read " + req + " of DtKV group " + groupId + " ("
                + KvReadKind.of(req.readKindNumber()) + ") before its deadline; it can be sent again"
                + (telling ? " (last: " + cause.getMessage() + ")" : ""), cause);
    }

    /** A BIZ_ERROR as the KvException it stands for, with the batch position from the message. */
    static KvException toKvException(RemoteException r, String key) {
        String msg = r.remoteMessage() == null ? "" : r.remoteMessage();
        int position = 0;
        int at = msg.lastIndexOf(" [position ");
        if (at >= 0 && msg.endsWith("]")) {
            try {
                position = Integer.parseInt(msg.substring(at + 11, msg.length() - 1));
                msg = msg.substring(0, at);
            } catch (NumberFormatException e) {
                position = 0;
            }
        }
        return new KvException(r.bizCode(), key, msg).failedPosition(position);
    }

    /**
     * A callback of this package that must run where the outcome arrives (an I/O or timer thread),
     * not behind whatever the callback executor is busy with: it records state with a deadline, such
     * as a lock lease renewed, and hands everything else to the callback executor itself. It must not
     * block.
     */
    interface OnArrivalCallback<T> extends KvCallback<T> {
    }

    <T> void deliver(KvCallback<T> callback, T result, Throwable error) {
        if (shared.config.callbackOnIoThread || callback instanceof OnArrivalCallback) {
            invoke(callback, result, error);
            return;
        }
        shared.callbackExecutor.execute(() -> invoke(callback, result, error));
    }

    /** Completes {@code f} where {@link #deliver} would run a caller's callback (its dependents run there). */
    <T> void completeForCaller(CompletableFuture<T> f, T result, Throwable error) {
        deliver(completing(f), result, error);
    }

    /** A callback that completes {@code f} with its outcome. */
    static <T> KvCallback<T> completing(CompletableFuture<T> f) {
        return new KvCallback<T>() {
            @Override
            public void onSuccess(T result) {
                f.complete(result);
            }

            @Override
            public void onFailure(Throwable error) {
                f.completeExceptionally(error);
            }
        };
    }

    private static <T> void invoke(KvCallback<T> callback, T result, Throwable error) {
        try {
            if (error == null) {
                callback.onSuccess(result);
            } else {
                callback.onFailure(error);
            }
        } catch (Throwable t) {
            log.warn("a KvClient callback threw", t);
        }
    }

    interface Starter<T> {
        void start(KvCallback<T> callback);
    }

    static <T> CompletableFuture<T> future(Starter<T> starter) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            starter.start(completing(f));
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    /** Waits for a future of this client and unwraps its error (a KvException, a raft or net exception). */
    static <T> T sync(CompletableFuture<T> f) {
        return Futures.await(f, "a DtKV operation");
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static List<String> list(String... keys) {
        List<String> l = new ArrayList<>(keys.length);
        Collections.addAll(l, keys);
        return l;
    }

    static PoyangTimeoutException timeout(String what) {
        return new PoyangTimeoutException(what);
    }
}
