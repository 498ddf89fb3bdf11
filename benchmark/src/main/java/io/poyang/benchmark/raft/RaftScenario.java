package io.poyang.benchmark.raft;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.CleanupSteps;
import io.poyang.benchmark.CounterWindow;
import io.poyang.benchmark.FailureCause;
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
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --op raft}: {@code --nodes} (1 or 3) raft servers in this process ({@link BenchCluster})
 * hosting {@code --groups} groups of all the nodes with a trivial built-in state machine
 * ({@link BenchStateMachine}: the last value per key), fsync per {@code --fsync}. Each of
 * {@code --clients} {@link RaftClient}s (one connection per node) keeps {@code --max-pending}
 * writes of {@code --value-size} bytes (256 unless given) in flight, spread over the groups in
 * turn; a write counts when its answer arrives, i.e. once it is committed (persisted on a
 * majority) and applied.
 */
public final class RaftScenario implements Scenario {

    static final long WRITE_TIMEOUT_MILLIS = 10_000;

    private BenchCluster cluster;
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
        int n = o.nodes;
        cluster = new BenchCluster(o);
        servers = cluster.servers;

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
            callback.succeeded();
        }

        @Override
        public void onFailure(Throwable error) {
            callback.failed(error instanceof PoyangTimeoutException ? Outcome.TIMEOUT : Outcome.FAILED, FailureCause.of(error));
        }
    }

    /**
     * fsyncs, writes and bytes of every log of every node, then leader-writer batches, appends sent,
     * apply batches, and the time the fsyncs took (ns).
     */
    private final CounterWindow window = new CounterWindow(this::counters);

    private long[] counters() {
        long[] sum = new long[7];
        for (RaftServer s : servers) {
            sum[0] += s.logJournalFsyncCount();
            for (RaftGroup g : s.groups()) {
                sum[0] += g.logFsyncCount();
                sum[1] += g.logWriteCount();
                sum[2] += g.logWrittenBytes();
                long[] c = g.pipelineCounters();
                sum[3] += c[0];
                sum[4] += c[1];
                sum[5] += c[3];
                sum[6] += g.logFsyncLatency().sumNanos();
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
        if (window.complete()) {
            m.put("log_fsyncs_per_sec", window.perSecond(0));
            m.put("log_writes_per_sec", window.perSecond(1));
            // all nodes' logs share this machine's disk: past its sustained bandwidth the disk, not the CPU, is the bound
            m.put("log_mb_per_sec", Math.round(window.perSecond(2) / 1e6));
            m.put("writer_batches_per_sec", window.perSecond(3));
            m.put("appends_sent_per_sec", window.perSecond(4));
            m.put("apply_batches_per_sec", window.perSecond(5));
            // how long one fsync takes: it grows when the logs' fsyncs queue at the disk
            long fsyncs = window.delta(0);
            if (fsyncs > 0) {
                m.put("log_fsync_avg_ms", Math.round(window.delta(6) / (double) fsyncs / 1e3) / 1e3);
            }
        }
        cluster.putSetup(m, options);
        return m;
    }

    /** Every step runs even when one before it failed: a client that fails to stop must not leave the servers running. */
    @Override
    public void close() throws Exception {
        CleanupSteps steps = new CleanupSteps();
        if (clients != null) {
            for (RaftClient c : clients) {
                if (c != null) {
                    steps.run(c::stop);
                }
            }
        }
        if (cluster != null) {
            steps.run(cluster::close);
        }
        steps.finish();
    }
}
