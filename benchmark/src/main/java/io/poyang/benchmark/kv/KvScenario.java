package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchDirs;
import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.CleanupSteps;
import io.poyang.benchmark.CounterWindow;
import io.poyang.benchmark.FailureCause;
import io.poyang.benchmark.LeaderPlacement;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.Outcome;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.ServerProbe;
import io.poyang.benchmark.UsageException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvCallback;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code --op put|get|mixed}: DtKV through {@link KvClient}s. Without {@code --servers} it starts
 * {@code --nodes} (1 or 3) DtKV nodes on loopback with {@code --groups} DtKV groups, fsync per
 * {@code --fsync}, fresh data directories under {@code $POYANG_BENCH_DIR} or the temp directory,
 * deleted after: as child processes running the node of the server module ({@link NodeProcesses};
 * the default, what a user deploys), or with {@code --in-process} in this JVM ({@link LocalKvCluster};
 * one profile shows client and server). With {@code --servers} it uses that cluster and starts and
 * stops nothing. The nodes it starts write through the node's log journal per {@code --log-journal},
 * batch their appends per {@code --batch-appends}, and with {@code --leaders N} have every group's
 * leader moved to node N before the clients start.
 *
 * <p>Each of {@code --clients} KvClients (one connection per node) keeps {@code --max-pending}
 * operations in flight (or {@code --sync --threads N} blocking callers), on {@code --keys} keys
 * (10,000 unless given) of {@code --value-size} bytes (256 unless given) spread over the groups;
 * {@code --batch-size N} puts or gets N keys per request (batchPut / batchGet). put writes, get
 * reads keys written before the run, mixed does half of each. An operation counts when its answer
 * arrives: a put once applied on the leader after a majority persisted it.
 */
public final class KvScenario implements Scenario {

    static final long TIMEOUT_MILLIS = 10_000;
    /**
     * Keys per batchPut of the preload at most: a few hundred KiB with the default 256-byte values,
     * so no single raft entry of the preload is large; fewer when the values are large.
     */
    static final int PRELOAD_BATCH_KEYS = 1000;
    /**
     * An upper bound on what a request takes besides its keys and values (op, group, session, seq
     * and read-kind fields: under 100 bytes), so the size checks here err on the safe side.
     */
    static final int REQUEST_FIXED_BYTES = 1024;
    /**
     * An upper bound on what one key and value add to a batch request or a batchGet answer beyond
     * their own bytes: field tags and length prefixes, and in an answer the node's flags, indexes,
     * owner and TTL (about 100 bytes in all).
     */
    static final int ENTRY_OVERHEAD_BYTES = 128;

    /** Most bytes of values a get or mixed run preloads (keys × value size); DtKV holds them all in memory. */
    static final long MAX_PRELOAD_BYTES = 2L << 30;

    /**
     * What a get of a key absent from the server is counted under, in every mode: the cause a
     * KvException NOT_FOUND gets, which is what the --sync mode throws. Every key is written before
     * a get or mixed run, so an absent one is a miss the report must show (a wrong group mapping, a
     * follower-read bug, keys removed from a --servers cluster), not a cheap success.
     */
    static final String MISSING_KEY_CAUSE = FailureCause.of(missingKey("bench.k0"));

    /** With --servers: the environment variable naming the server processes on this machine, for CPU per operation. */
    static final String SERVER_PIDS_VARIABLE = "POYANG_BENCH_SERVER_PIDS";

    private final String op;
    /** With --servers, the server processes {@link #SERVER_PIDS_VARIABLE} names; empty otherwise. */
    private List<Long> givenServerPids = Collections.emptyList();
    /** How {@link #close} stops a client: tests put one in that fails. */
    Consumer<KvClient> clientStopper = KvClient::close;
    /** False only in tests, to see how gets of absent keys are counted. */
    private final boolean preload;
    private LocalKvCluster local;
    private NodeProcesses processes;
    private Path dir;
    private KvClient[] roots;
    /** [client][group - 1]: views of each client on each group. */
    private KvClient[][] clients;
    private String[] keys;
    private byte[] value;
    private int groups;
    private int batch;
    private final CounterWindow window = new CounterWindow(this::localCounters);
    private BenchOptions options;

    public KvScenario(String op) {
        this(op, true);
    }

    /** {@code preload} false: get and mixed read keys nobody wrote (tests). */
    KvScenario(String op, boolean preload) {
        this.op = op;
        this.preload = preload;
    }

    @Override
    public void setUp(BenchOptions o) throws Exception {
        options = o;
        if (!o.valueSizeGiven) {
            o.valueSize = 256;
        }
        if (!o.keysGiven) {
            o.keys = 10_000;
        }
        groups = o.groups;
        batch = o.batchSize;
        if (batch > KvKeys.MAX_BATCH_KEYS) {
            throw new UsageException("--batch-size is at most " + KvKeys.MAX_BATCH_KEYS + " (DtKV's batch limit)");
        }
        if (o.valueSize > KvKeys.MAX_VALUE_BYTES) {
            throw new UsageException("--value-size is at most " + KvKeys.MAX_VALUE_BYTES + " for --op " + op
                    + " (DtKV's value limit), got " + o.valueSize);
        }
        if (batch > 1) {
            // every batchPut would fail in the client, every batchGet answer on the server: say so before the run
            long entryBytes = entryBytes(("bench.k" + (o.keys - 1)).length(), o.valueSize);
            long requestBytes = REQUEST_FIXED_BYTES + batch * entryBytes;
            if (requestBytes > KvKeys.MAX_REQUEST_BYTES) {
                throw new UsageException("--batch-size " + batch + " with --value-size " + o.valueSize + " makes requests (or"
                        + " batchGet answers) of up to " + requestBytes + " bytes; DtKV takes at most " + KvKeys.MAX_REQUEST_BYTES
                        + ": at most " + (KvKeys.MAX_REQUEST_BYTES - REQUEST_FIXED_BYTES) / entryBytes + " keys of this size per batch");
            }
        }
        if (!op.equals("get") && o.maxPending > KvClient.MAX_OUTSTANDING_WRITES_PER_GROUP) {
            // a client's writes beyond its session window fail at once (FlowControlException), all run long
            throw new UsageException("--max-pending " + o.maxPending + " for --op " + op + ": a KvClient keeps at most "
                    + KvClient.MAX_OUTSTANDING_WRITES_PER_GROUP + " writes in flight to one group; use more --clients");
        }
        if (!op.equals("put") && (long) o.keys * o.valueSize > MAX_PRELOAD_BYTES) {
            // the node holds every value in memory and every log writes them: fail now, not after minutes
            throw new UsageException("--op " + op + " preloads --keys " + o.keys + " values of --value-size " + o.valueSize
                    + ", " + (long) o.keys * o.valueSize + " bytes; at most " + MAX_PRELOAD_BYTES + " (2 GiB) are allowed:"
                    + " lower --keys or --value-size");
        }
        String servers;
        if (!o.servers.isEmpty()) {
            givenServerPids = serverPidsOf(System.getenv(SERVER_PIDS_VARIABLE));
            // a wrong or dead address fails now, not after the client's 10 s connect wait
            ServerProbe.requireReachable(o.servers, ServerProbe.BUDGET_MILLIS);
            servers = String.join(",", o.servers);
        } else {
            if (o.nodes != 1 && o.nodes != 3) {
                throw new UsageException("--nodes is 1 or 3");
            }
            if (o.inProcess) {
                dir = BenchDirs.create("poyang-bench-kv-");
                RaftConfig rc = new RaftConfig().syncForce(o.fsync).snapshotEvery(0, 0);
                local = new LocalKvCluster(dir, o.nodes, groups, rc, dispatchers(o.nodes), null, null).deleteOnClose(true)
                        .logJournal(o.logJournal).batchAppends(o.batchAppends);
                local.start();
                if (o.leadersOn > 0) {
                    // the placement outlasts a failover (the nodes' processes get it from servers.properties)
                    for (int n = 1; n <= o.nodes; n++) {
                        for (int g = 1; g <= groups; g++) {
                            local.group(n, g).setPreferredLeader(o.leadersOn);
                        }
                    }
                }
                for (int g = 1; g <= groups; g++) {
                    if (local.waitForLeader(g, 30_000) == 0) {
                        throw new IllegalStateException("DtKV group " + g + " elected no leader within 30 s");
                    }
                }
                servers = local.serviceAddresses();
            } else {
                // Child processes: the node a user runs (./poyang server), in a JVM of its own.
                processes = NodeProcesses.start(o, dispatchers(o.nodes));
                servers = processes.serviceAddresses();
            }
            if (o.leadersOn > 0) {
                // before the clients start: each then finds every group's leader on that node
                LeaderPlacement.moveAll(replicationAddresses(), groups, o.leadersOn, LeaderPlacement.TRANSFER_TIMEOUT_MILLIS);
            }
        }

        roots = new KvClient[o.clients];
        clients = new KvClient[o.clients][groups];
        for (int c = 0; c < roots.length; c++) {
            KvClientConfig cc = new KvClientConfig().servers(servers).timeoutMillis(TIMEOUT_MILLIS)
                    .callbackOnIoThread(true).maxPendingRequests(Math.max(50_000, o.maxPending + 1_000))
                    .readKind(readKind(o.readKind));
            cc.raft.net.name = "BenchKvClient" + c;
            roots[c] = new KvClient(cc);
            roots[c].start();
            roots[c].waitForConnected(10_000);
            for (int g = 1; g <= groups; g++) {
                clients[c][g - 1] = g == 1 && cc.groupId == 1 ? roots[c] : roots[c].forGroup(g);
            }
        }
        keys = new String[o.keys];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "bench.k" + i;
        }
        value = new byte[o.valueSize];
        new Random(1).nextBytes(value);
        for (int g = 1; g <= groups; g++) {
            clients[0][g - 1].mkdir("bench");
        }
        if (!op.equals("put") && preload) {
            preload();
        }
    }

    /** node id → replication (admin) address of the nodes started here. */
    private Map<Integer, String> replicationAddresses() {
        if (processes != null) {
            return processes.replicationAddresses();
        }
        Map<Integer, String> m = new LinkedHashMap<>();
        for (int n = 1; n <= local.nodeCount(); n++) {
            m.put(n, "127.0.0.1:" + local.server(n).replicationPort());
        }
        return m;
    }

    /** Writes every key once (in batches that fit one request) so reads find values. */
    private void preload() {
        for (int g = 1; g <= groups; g++) {
            List<String> ofGroup = new ArrayList<>();
            for (int i = 0; i < keys.length; i++) {
                if (groupOf(i) == g) {
                    ofGroup.add(keys[i]);
                }
            }
            for (List<String> ks : preloadBatches(ofGroup, value.length)) {
                clients[0][g - 1].batchPut(ks, Collections.nCopies(ks.size(), value));
            }
        }
    }

    /**
     * {@code keys} cut, in order, into the batchPuts of the preload: at most {@link #PRELOAD_BATCH_KEYS}
     * keys each, and few enough that the request stays under DtKV's {@link KvKeys#MAX_REQUEST_BYTES}
     * with values of {@code valueBytes} (a batch of 1,000 16 KiB values is over it). Each batch holds
     * at least one key: one value of at most {@link KvKeys#MAX_VALUE_BYTES} always fits.
     */
    static List<List<String>> preloadBatches(List<String> keys, int valueBytes) {
        List<List<String>> batches = new ArrayList<>();
        List<String> batch = new ArrayList<>();
        long batchBytes = REQUEST_FIXED_BYTES;
        for (String key : keys) {
            long entryBytes = entryBytes(key.getBytes(StandardCharsets.UTF_8).length, valueBytes);
            if (!batch.isEmpty() && (batch.size() == PRELOAD_BATCH_KEYS || batchBytes + entryBytes > KvKeys.MAX_REQUEST_BYTES)) {
                batches.add(batch);
                batch = new ArrayList<>();
                batchBytes = REQUEST_FIXED_BYTES;
            }
            batch.add(key);
            batchBytes += entryBytes;
        }
        if (!batch.isEmpty()) {
            batches.add(batch);
        }
        return batches;
    }

    /** At most what one key and its value add to a batch request or answer: their bytes and {@link #ENTRY_OVERHEAD_BYTES}. */
    static long entryBytes(int keyBytes, int valueBytes) {
        return (long) keyBytes + valueBytes + ENTRY_OVERHEAD_BYTES;
    }

    static KvReadKind readKind(String option) {
        switch (option) {
            case "read-index":
                return KvReadKind.READ_INDEX;
            case "follower":
                return KvReadKind.FOLLOWER_READ;
            default:
                return KvReadKind.LEASE_READ;
        }
    }

    private int groupOf(int key) {
        return groups == 1 ? 1 : 1 + key % groups;
    }

    /** One dispatcher per core for one node; with three nodes sharing the cores, one each. */
    static int dispatchers(int nodes) {
        int cores = Runtime.getRuntime().availableProcessors();
        return nodes == 1 ? cores : Math.max(1, cores / nodes);
    }

    @Override
    public int clients() {
        return roots.length;
    }

    private boolean nextIsPut() {
        return op.equals("put") || (op.equals("mixed") && ThreadLocalRandom.current().nextBoolean());
    }

    @Override
    public void issue(int client, OpCallback callback) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int k = r.nextInt(keys.length);
        KvClient kv = clients[client][groupOf(k) - 1];
        boolean put = nextIsPut();
        if (batch <= 1) {
            if (put) {
                kv.put(keys[k], value, new Done<>(callback));
            } else {
                kv.get(keys[k], new GetDone(callback));
            }
            return;
        }
        List<String> ks = batchKeys(k, r);
        if (put) {
            List<byte[]> vs = new ArrayList<>(ks.size());
            for (int i = 0; i < ks.size(); i++) {
                vs.add(value);
            }
            kv.batchPut(ks, vs, new Done<>(callback));
        } else {
            kv.batchGet(ks, new BatchGetDone(callback));
        }
    }

    /** {@code --batch-size} random keys of the same group as {@code first}. */
    private List<String> batchKeys(int first, ThreadLocalRandom r) {
        List<String> ks = new ArrayList<>(batch);
        ks.add(keys[first]);
        int g = groupOf(first);
        while (ks.size() < batch) {
            int k = r.nextInt(keys.length);
            if (groupOf(k) == g) {
                ks.add(keys[k]);
            }
        }
        return ks;
    }

    /** A write's end: any answer is a success. */
    private static class Done<T> implements KvCallback<T> {
        final OpCallback callback;

        Done(OpCallback callback) {
            this.callback = callback;
        }

        @Override
        public void onSuccess(T result) {
            callback.succeeded();
        }

        @Override
        public void onFailure(Throwable error) {
            callback.failed(error instanceof PoyangTimeoutException ? Outcome.TIMEOUT : Outcome.FAILED, FailureCause.of(error));
        }
    }

    /** A get's end: a success only when the key was found (see {@link #MISSING_KEY_CAUSE}). */
    private static final class GetDone extends Done<KvNode> {
        GetDone(OpCallback callback) {
            super(callback);
        }

        @Override
        public void onSuccess(KvNode node) {
            if (node.exists()) {
                callback.succeeded();
            } else {
                callback.failed(Outcome.FAILED, MISSING_KEY_CAUSE);
            }
        }
    }

    /** A batchGet's end: a success only when every key was found. */
    private static final class BatchGetDone extends Done<List<KvNode>> {
        BatchGetDone(OpCallback callback) {
            super(callback);
        }

        @Override
        public void onSuccess(List<KvNode> nodes) {
            if (firstMissing(nodes) < 0) {
                callback.succeeded();
            } else {
                callback.failed(Outcome.FAILED, MISSING_KEY_CAUSE);
            }
        }
    }

    /** The position of the first node of {@code nodes} that does not exist, or -1. */
    private static int firstMissing(List<KvNode> nodes) {
        for (int i = 0; i < nodes.size(); i++) {
            if (!nodes.get(i).exists()) {
                return i;
            }
        }
        return -1;
    }

    private static KvException missingKey(String key) {
        return new KvException(KvCode.NOT_FOUND, key, "a preloaded key is missing");
    }

    @Override
    public void call(int thread) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int k = r.nextInt(keys.length);
        KvClient kv = clients[thread % clients.length][groupOf(k) - 1];
        boolean put = nextIsPut();
        if (batch <= 1) {
            if (put) {
                kv.put(keys[k], value);
            } else {
                if (!kv.get(keys[k]).exists()) {
                    throw missingKey(keys[k]);
                }
            }
            return;
        }
        List<String> ks = batchKeys(k, r);
        if (put) {
            List<byte[]> vs = new ArrayList<>(ks.size());
            for (int i = 0; i < ks.size(); i++) {
                vs.add(value);
            }
            kv.batchPut(ks, vs);
        } else {
            int missing = firstMissing(kv.batchGet(ks));
            if (missing >= 0) {
                throw missingKey(ks.get(missing));
            }
        }
    }

    /** The node processes started here, or with --servers those {@code POYANG_BENCH_SERVER_PIDS} names. */
    @Override
    public List<Long> serverPids() {
        return processes != null ? processes.pids() : givenServerPids;
    }

    /**
     * The process ids in {@code value} ({@value #SERVER_PIDS_VARIABLE}: comma-separated, null or blank
     * for none), each of a process running on this machine. A bad entry is a usage error told before
     * the run: it used to end the run with a stack trace, or a pid not running dropped out of the
     * servers' CPU unnoticed.
     */
    static List<Long> serverPidsOf(String value) throws UsageException {
        List<Long> pids = new ArrayList<>();
        if (value == null) {
            return pids;
        }
        for (String t : value.split(",")) {
            String token = t.trim();
            if (token.isEmpty()) {
                continue;
            }
            long pid;
            try {
                pid = Long.parseLong(token);
            } catch (NumberFormatException e) {
                pid = 0;
            }
            if (pid <= 0) {
                throw new UsageException(SERVER_PIDS_VARIABLE + " takes the process ids of the --servers nodes running on"
                        + " this machine, comma-separated; '" + token + "' is not a process id");
            }
            if (ProcessHandle.of(pid).isEmpty()) {
                throw new UsageException(SERVER_PIDS_VARIABLE + " names process " + pid + ", which is not running on this"
                        + " machine: give the pids of the --servers nodes running here, or unset it");
            }
            pids.add(pid);
        }
        return pids;
    }

    /** A node process that exited during the run (only the child processes are watched). */
    @Override
    public String failure() {
        NodeProcesses p = processes;
        return p == null ? null : p.failure();
    }

    /**
     * Of the in-process nodes, summed: log fsyncs, leader-writer batches, apply batches, then the
     * read counters (lease, read-index, read-index rounds, follower, read-index fetches).
     */
    private long[] localCounters() {
        long[] sum = new long[8];
        if (local == null) {
            return sum;
        }
        for (int n : local.runningNodes()) {
            for (RaftGroup g : local.server(n).groups()) {
                sum[0] += g.logFsyncCount();
                long[] c = g.pipelineCounters();
                sum[1] += c[0];
                sum[2] += c[3];
                long[] rc = g.readCounters();
                for (int i = 0; i < 5; i++) {
                    sum[3 + i] += rc[i];
                }
            }
        }
        return sum;
    }

    @Override
    public CounterWindow counterWindow() {
        return window;
    }

    @Override
    public Map<String, Object> extras(double measuredSeconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("keys", options.keys);
        m.put("batch_size", batch);
        m.put("read_kind", options.readKind);
        m.put("fsync", options.fsync);
        m.put("servers", local != null ? "in-process" : processes != null ? "child processes" : String.join(",", options.servers));
        if (local != null) {
            if (window.complete()) {
                if (!op.equals("put")) {
                    // what raft's read path did for the reads
                    m.put("lease_reads_per_sec", window.perSecond(3));
                    m.put("read_index_reads_per_sec", window.perSecond(4));
                    m.put("read_index_rounds_per_sec", window.perSecond(5));
                    m.put("follower_reads_per_sec", window.perSecond(6));
                    m.put("read_index_fetches_per_sec", window.perSecond(7));
                }
                m.put("log_fsyncs_per_sec", window.perSecond(0));
                m.put("writer_batches_per_sec", window.perSecond(1));
                m.put("apply_batches_per_sec", window.perSecond(2));
            }
            m.put("dispatchers_per_node", dispatchers(options.nodes));
            // as the in-process servers were built
            m.put("log_journal", local.server(1).config().logJournal());
            m.put("batch_appends", local.server(1).config().batchAppends());
        } else if (processes != null) {
            // as written into the nodes' config.properties (an existing cluster's own settings are not known here)
            m.put("log_journal", options.logJournal);
            m.put("batch_appends", options.batchAppends);
        }
        m.put("leaders_on", options.leadersOn);
        m.put("leaders", knownLeaders());
        m.put("java", System.getProperty("java.version"));
        return m;
    }

    /**
     * Each group's leader as the first client knows it at the end of the run (node ids in group
     * order, 0 when it knows none): with several groups the throughput depends on how their leaders
     * are spread over the nodes, which the elections decide anew for each run.
     */
    private String knownLeaders() {
        StringBuilder b = new StringBuilder();
        for (int g = 1; g <= groups; g++) {
            if (g > 1) {
                b.append(',');
            }
            b.append(roots == null || roots[0] == null ? 0 : roots[0].raftClient().knownLeader(g));
        }
        return b.toString();
    }

    /** Every step runs even when one before it failed: a client that fails to stop must not leave the servers running. */
    @Override
    public void close() throws Exception {
        CleanupSteps steps = new CleanupSteps();
        if (roots != null) {
            for (KvClient c : roots) {
                if (c != null) {
                    steps.run(() -> clientStopper.accept(c));
                }
            }
        }
        if (local != null) {
            steps.run(local::close);
        }
        if (dir != null) {
            steps.run(() -> BenchDirs.delete(dir));   // LocalKvCluster deleted it; forgets it (and deletes it if its setup failed)
        }
        if (processes != null) {
            steps.run(processes::close);
        }
        steps.finish();
    }

    /** The in-process nodes' data directory, null without them (tests: it is gone once closed). */
    Path dataDirectory() {
        return dir;
    }
}
