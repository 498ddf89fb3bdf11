package io.poyang.benchmark.raft;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.Outcome;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.UsageException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.net.BytesBody;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.RpcCallback;
import io.poyang.raft.client.RaftClient;
import io.poyang.raft.client.RaftClientConfig;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.RaftServerConfig;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * {@code --op raft}: {@code --nodes} (1 or 3) raft servers in this process on loopback, in fresh
 * data directories, hosting {@code --groups} groups of all the nodes with a trivial built-in state
 * machine ({@link BenchStateMachine}: the last value per key), fsync per {@code --fsync}. Each of
 * {@code --clients} {@link RaftClient}s (one connection per node) keeps {@code --max-pending}
 * writes of {@code --value-size} bytes (256 unless given) in flight, spread over the groups in
 * turn; a write counts when its answer arrives, i.e. once it is committed (persisted on a
 * majority) and applied.
 *
 * <p>The data directory is under {@code $POYANG_BENCH_DIR} or the system temp directory and is
 * deleted after.
 */
public final class RaftScenario implements Scenario {

    static final long WRITE_TIMEOUT_MILLIS = 10_000;

    private Path dir;
    private RaftServer[] servers;
    private RaftClient[] clients;
    private BytesBody[] bodies;
    private int groups;
    private final AtomicInteger nextGroup = new AtomicInteger();
    private BenchOptions options;

    @Override
    public void setUp(BenchOptions o) throws Exception {
        if (!o.servers.isEmpty()) {
            throw new UsageException("--op raft starts its own servers; --servers is for the put/get ops");
        }
        if (o.sync) {
            throw new UsageException("--op raft drives asynchronous writes; --sync is not supported for it yet");
        }
        if (!o.valueSizeGiven) {
            o.valueSize = 256;
        }
        if (o.valueSize < 8) {
            throw new UsageException("--op raft needs --value-size of at least 8 (the key)");
        }
        options = o;
        groups = o.groups;
        String base = System.getenv("POYANG_BENCH_DIR");
        Path parent = Paths.get(base != null && !base.isEmpty() ? base : System.getProperty("java.io.tmpdir"));
        dir = Files.createTempDirectory(parent, "poyang-bench-raft-");

        int n = o.nodes;
        int[] members = new int[n];
        for (int i = 0; i < n; i++) {
            members[i] = i + 1;
        }
        servers = new RaftServer[n];
        for (int i = 0; i < n; i++) {
            int id = i + 1;
            RaftServerConfig.Builder b = RaftServer.builder()
                    .nodeId(id)
                    .servicePort("127.0.0.1", 0)
                    .dataDir(dir.resolve("node-" + id))
                    .dispatchers(dispatchers(n))
                    .fsyncPermits(Integer.getInteger("poyang.bench.fsyncPermits", 0))
                    .raftConfig(new RaftConfig().syncForce(o.fsync).snapshotEvery(0, 0));
            for (int j = 0; j < n; j++) {
                b.node(j + 1, "127.0.0.1:0");   // ports picked at start, told to the others below
            }
            for (int g = 1; g <= groups; g++) {
                b.group(g, () -> new BenchStateMachine(o.keys), members);
            }
            servers[i] = b.build();
        }
        for (RaftServer s : servers) {
            s.start();
        }
        for (RaftServer s : servers) {
            for (RaftServer peer : servers) {
                if (peer != s) {
                    s.setNodeAddress(peer.nodeId(), "127.0.0.1:" + peer.replicationPort());
                }
            }
        }
        awaitLeaders(30_000);
        startNanos = System.nanoTime();

        clients = new RaftClient[o.clients];
        for (int c = 0; c < clients.length; c++) {
            RaftClientConfig cc = new RaftClientConfig();
            cc.net.name = "BenchRaftClient" + c;
            cc.net.maxPendingRequests = Math.max(cc.net.maxPendingRequests, o.maxPending + 1000);
            cc.callbackOnIoThread = true;
            for (int i = 0; i < n; i++) {
                cc.node(i + 1, "127.0.0.1:" + servers[i].servicePort());
            }
            clients[c] = new RaftClient(cc);
            clients[c].start();
            clients[c].waitForConnected(5_000);
            for (int g = 1; g <= groups; g++) {
                clients[c].findLeader(g).get(5, TimeUnit.SECONDS);
            }
        }
        // a few distinct bodies (different keys), made once: writes allocate no payload
        Random rnd = new Random(1);
        bodies = new BytesBody[64];
        for (int i = 0; i < bodies.length; i++) {
            byte[] b = new byte[o.valueSize];
            rnd.nextBytes(b);
            ByteBuffer.wrap(b).putLong(rnd.nextInt(o.keys));
            bodies[i] = new BytesBody(b);
        }
    }

    /** One dispatcher per core for one node; with three nodes sharing the cores, one each. */
    static int dispatchers(int nodes) {
        int cores = Runtime.getRuntime().availableProcessors();
        return nodes == 1 ? cores : Math.max(1, cores / nodes);
    }

    private void awaitLeaders(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (int g = 1; g <= groups; g++) {
            while (leaderOf(g) == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("group " + g + " elected no leader within " + timeoutMillis + " ms");
                }
                Thread.sleep(10);
            }
        }
    }

    private int leaderOf(int groupId) {
        for (RaftServer s : servers) {
            RaftGroup g = s.group(groupId);
            if (g != null && g.isLeader()) {
                return s.nodeId();
            }
        }
        return 0;
    }

    @Override
    public int clients() {
        return clients.length;
    }

    @Override
    public void issue(int client, OpCallback callback) {
        int i = nextGroup.getAndIncrement() & Integer.MAX_VALUE;
        int group = groups == 1 ? 1 : 1 + i % groups;
        clients[client].write(group, 0, bodies[i & (bodies.length - 1)], IgnoreBodyDecoder.factory(),
                WRITE_TIMEOUT_MILLIS, new WriteCallback(callback));
    }

    @Override
    public void call(int thread) {
        throw new UnsupportedOperationException("--op raft is asynchronous");
    }

    /** Adapts a write's outcome to the driver's. */
    private static final class WriteCallback implements RpcCallback<Object> {
        private final OpCallback callback;

        WriteCallback(OpCallback callback) {
            this.callback = callback;
        }

        @Override
        public void onSuccess(Object body) {
            callback.done(Outcome.SUCCESS);
        }

        @Override
        public void onFailure(Throwable error) {
            callback.done(error instanceof PoyangTimeoutException ? Outcome.TIMEOUT : Outcome.FAILED);
        }
    }

    private long startNanos;

    /** fsyncs and writes of every log of every node so far. */
    private long[] logCounts() {
        long fsyncs = 0;
        long writes = 0;
        for (RaftServer s : servers) {
            for (RaftGroup g : s.groups()) {
                fsyncs += g.logFsyncCount();
                writes += g.logWriteCount();
            }
        }
        return new long[]{fsyncs, writes};
    }

    @Override
    public Map<String, Object> extras(double measuredSeconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        long[] now = logCounts();
        // over the whole run (warm-up included): the counters are not sampled per window
        double secs = (System.nanoTime() - startNanos) / 1e9;
        m.put("log_fsyncs_per_sec", Math.round(now[0] / secs));
        m.put("log_writes_per_sec", Math.round(now[1] / secs));
        long[] p = new long[4];
        for (RaftServer s : servers) {
            for (RaftGroup g : s.groups()) {
                long[] c = g.pipelineCounters();
                for (int i = 0; i < 4; i++) {
                    p[i] += c[i];
                }
            }
        }
        m.put("writer_batches_per_sec", Math.round(p[0] / secs));
        m.put("appends_sent_per_sec", Math.round(p[1] / secs));
        m.put("apply_batches_per_sec", Math.round(p[3] / secs));
        m.put("fsync", options.fsync);
        m.put("dispatchers_per_node", dispatchers(options.nodes));
        StringBuilder leaders = new StringBuilder();
        for (int g = 1; g <= groups; g++) {
            if (g > 1) {
                leaders.append(',');
            }
            leaders.append(leaderOf(g));
        }
        m.put("leaders", leaders.toString());
        m.put("java", System.getProperty("java.version"));
        return m;
    }

    @Override
    public void close() throws Exception {
        if (clients != null) {
            for (RaftClient c : clients) {
                if (c != null) {
                    c.stop();
                }
            }
        }
        if (servers != null) {
            for (RaftServer s : servers) {
                if (s != null) {
                    s.stop();
                }
            }
        }
        if (dir != null) {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.deleteIfExists(p);
                    } catch (IOException e) {
                        // best effort
                    }
                });
            }
        }
    }
}
