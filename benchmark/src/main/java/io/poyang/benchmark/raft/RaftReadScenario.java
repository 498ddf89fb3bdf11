package io.poyang.benchmark.raft;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.CounterWindow;
import io.poyang.benchmark.FailureCause;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.Outcome;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.UsageException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import io.poyang.raft.core.ReadTask;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --op raft-read}: linearizable reads of one raft group on {@code --nodes} in-process nodes
 * ({@link BenchCluster}), of the kind {@code --read-kind} names:
 * <ul>
 * <li>{@code lease}: {@link ReadKind#LEASE_READ} on the leader (served under the lease; ReadIndex
 * when the lease is not valid);</li>
 * <li>{@code read-index}: {@link ReadKind#READ_INDEX} on the leader (each batch of queued reads waits
 * for one heartbeat round a majority acknowledges);</li>
 * <li>{@code follower}: {@link ReadKind#FOLLOWER_READ} on the followers, clients spread over them
 * (each batch asks the leader for a read index once, then waits to have applied it).</li>
 * </ul>
 * The group is first filled with {@code --keys} (at most 10,000) writes of {@code --value-size}
 * bytes; a read then looks one key up in the state machine on the group's dispatcher thread once
 * the read is safe. Reads are issued in-process through {@link RaftGroup#read(ReadKind, long, ReadTask)},
 * not over a client connection (raft has no read command of its own; DtKV's get brings one): the
 * figures are those of raft's read path — the lease check, heartbeat rounds and READ_INDEX requests
 * — without a client network hop. {@code --clients} × {@code --max-pending} reads are in flight.
 */
public final class RaftReadScenario implements Scenario {

    static final long READ_TIMEOUT_MILLIS = 10_000;

    private BenchCluster cluster;
    private BenchOptions options;
    private ReadKind kind;
    /** Per client: the node it reads on. */
    private int[] clientNodes;
    private int keys;
    private final AtomicInteger nextKey = new AtomicInteger();
    private final CounterWindow window = new CounterWindow(this::readCounters);

    @Override
    public void setUp(BenchOptions o) throws Exception {
        if (!o.servers.isEmpty()) {
            throw new UsageException("--op raft-read starts its own servers; --servers is for the put/get ops");
        }
        if (o.sync) {
            throw new UsageException("--op raft-read drives asynchronous reads; --sync is not supported for it");
        }
        if (o.groups != 1) {
            throw new UsageException("--op raft-read reads one group; --groups must be 1");
        }
        switch (o.readKind) {
            case "lease":
                kind = ReadKind.LEASE_READ;
                break;
            case "read-index":
                kind = ReadKind.READ_INDEX;
                break;
            default:
                kind = ReadKind.FOLLOWER_READ;
                if (o.nodes < 3) {
                    throw new UsageException("--read-kind follower needs followers: --nodes 3");
                }
                break;
        }
        if (!o.valueSizeGiven) {
            o.valueSize = 256;
        }
        if (o.valueSize < 8) {
            throw new UsageException("--op raft-read needs --value-size of at least 8 (the key)");
        }
        options = o;
        cluster = new BenchCluster(o);
        keys = Math.min(o.keys, 10_000);
        fill();
        int leader = cluster.leaderOf(1);
        clientNodes = new int[o.clients];
        int f = 0;
        for (int c = 0; c < clientNodes.length; c++) {
            if (kind == ReadKind.FOLLOWER_READ) {
                int node;
                do {
                    node = 1 + (f++ % o.nodes);
                } while (node == leader);
                clientNodes[c] = node;
            } else {
                clientNodes[c] = leader;
            }
        }
    }

    /** Writes every key once (in batches of 1,000 in flight), so reads find values. */
    private void fill() throws Exception {
        RaftGroup g = cluster.group(cluster.leaderOf(1), 1);
        Random rnd = new Random(2);
        java.util.List<java.util.concurrent.CompletableFuture<?>> pending = new java.util.ArrayList<>();
        for (int k = 0; k < keys; k++) {
            byte[] b = new byte[options.valueSize];
            rnd.nextBytes(b);
            ByteBuffer.wrap(b).putLong(k);
            pending.add(g.submit(0, new ByteBody(b), 30_000));
            if (pending.size() == 1_000 || k == keys - 1) {
                for (java.util.concurrent.CompletableFuture<?> p : pending) {
                    p.get(60, TimeUnit.SECONDS);
                }
                pending.clear();
            }
        }
    }

    @Override
    public int clients() {
        return clientNodes.length;
    }

    @Override
    public void issue(int client, OpCallback callback) {
        int node = clientNodes[client];
        RaftGroup g = cluster.group(node, 1);
        BenchStateMachine sm = cluster.machine(node, 1);
        int key = (nextKey.getAndIncrement() & Integer.MAX_VALUE) % keys;
        Read r = new Read(sm, key, callback);
        g.read(kind, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_TIMEOUT_MILLIS), r);
        r.issued();
    }

    @Override
    public void call(int thread) {
        throw new UnsupportedOperationException("--op raft-read is asynchronous");
    }

    /**
     * One read: looks its key up once the read is safe. A failure reported before
     * {@link RaftGroup#read} returned (this node does not lead, the group is stopping) is thrown
     * from {@link #issue} instead, as the driver expects.
     */
    private static final class Read implements ReadTask {
        private static final int ISSUING = 0;
        private static final int ISSUED = 1;
        private static final int FAILED_EARLY = 2;

        private final BenchStateMachine sm;
        private final int key;
        private final OpCallback callback;
        private final AtomicInteger state = new AtomicInteger(ISSUING);
        private Throwable early;

        Read(BenchStateMachine sm, int key, OpCallback callback) {
            this.sm = sm;
            this.key = key;
            this.callback = callback;
        }

        void issued() {
            if (!state.compareAndSet(ISSUING, ISSUED)) {
                throw new IllegalStateException("the read could not start: " + early, early);
            }
        }

        @Override
        public void run() {
            // runs on the group's dispatcher thread: the state machine is read without locks
            if (sm.get(key) != null) {
                callback.succeeded();
            } else {
                callback.failed(Outcome.FAILED, "key not found");
            }
        }

        @Override
        public void fail(Throwable error) {
            if (state.get() == ISSUING) {
                early = error;
                if (state.compareAndSet(ISSUING, FAILED_EARLY)) {
                    return;
                }
            }
            callback.failed(error instanceof PoyangTimeoutException ? Outcome.TIMEOUT : Outcome.FAILED, FailureCause.of(error));
        }
    }

    /** The read counters of every node, summed. */
    private long[] readCounters() {
        long[] sum = new long[6];
        for (int n = 1; n <= options.nodes; n++) {
            long[] c = cluster.group(n, 1).readCounters();
            for (int i = 0; i < sum.length; i++) {
                sum[i] += c[i];
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
        m.put("read", options.readKind);
        if (window.complete()) {
            m.put("lease_reads_per_sec", window.perSecond(0));
            m.put("read_index_reads_per_sec", window.perSecond(1));
            m.put("heartbeat_rounds_per_sec", window.perSecond(2));
            m.put("follower_reads_per_sec", window.perSecond(3));
            m.put("read_index_requests_per_sec", window.perSecond(4));
        }
        cluster.putSetup(m, options);
        return m;
    }

    @Override
    public void close() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }
}
