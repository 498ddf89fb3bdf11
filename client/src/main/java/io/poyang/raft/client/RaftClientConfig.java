package io.poyang.raft.client;

import io.poyang.net.NioClientConfig;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/** Settings of a {@link RaftClient}. Plain fields: set them before creating the client. */
public final class RaftClientConfig {

    /** The nodes of the cluster: node id → "host:servicePort". Required. */
    public Map<Integer, String> nodes = new LinkedHashMap<>();

    /** The network client's settings (I/O threads, pending-request bounds …); its server list is filled in. */
    public NioClientConfig net = new NioClientConfig();

    /** How long one RAFT_STATUS query (finding a leader) waits for a node. */
    public long statusTimeoutMillis = 1000;
    /**
     * First pause before asking again when no leader is known; doubles up to the max. Also the
     * least time between the end of a leader search that found no leader and the next search that
     * waiting writes start (one round of status queries per interval, however many writes wait).
     */
    public long minRetryBackoffMillis = 10;
    /**
     * How long one attempt of an exactly-once write waits for its answer before it is sent again
     * (within the write's deadline). Plain writes wait for their whole deadline: they are never
     * sent twice.
     */
    public long exactlyOnceAttemptMillis = 3_000;
    public long maxRetryBackoffMillis = 300;

    /**
     * Where write callbacks and futures complete. Null: ForkJoinPool.commonPool(). Ignored when
     * {@link #callbackOnIoThread} is set.
     */
    public Executor callbackExecutor;
    /**
     * Run write callbacks on the network I/O thread: fastest, but a callback must be quick and must
     * never block (benchmarks, asynchronous pipelines).
     */
    public boolean callbackOnIoThread;

    public RaftClientConfig() {
        net.name = "RaftClient";
    }

    /** Adds a node of the cluster and its service address ("host:port"). */
    public RaftClientConfig node(int nodeId, String serviceHostPort) {
        nodes.put(nodeId, serviceHostPort);
        return this;
    }
}
