package io.poyang.dtkv.client;

import io.poyang.raft.client.RaftClientConfig;

import java.util.concurrent.Executor;

/** Settings of a {@link KvClient}. Plain fields and chainable setters: set them before creating the client. */
public final class KvClientConfig {

    /** The raft client underneath: the nodes (id → service "host:port") and network settings. */
    public final RaftClientConfig raft = new RaftClientConfig();
    /** The DtKV group operations go to (a client can address others with {@link KvClient#forGroup}). */
    public int groupId = 1;
    /** Deadline of an operation unless given per call. */
    public long timeoutMillis = 5_000;
    /** Where callbacks, futures, watch listeners and lock listeners run. Null: ForkJoinPool.commonPool(). */
    public Executor callbackExecutor;
    /**
     * Run operation callbacks and futures on the network I/O thread: fastest, but a callback must be
     * quick and never block (benchmarks, asynchronous pipelines). Watch and lock listeners still run
     * on the callback executor.
     */
    public boolean callbackOnIoThread;

    public KvClientConfig() {
        raft.net.name = "KvClient";
    }

    /** Adds a node of the cluster and its service address ("host:port"). */
    public KvClientConfig node(int nodeId, String serviceHostPort) {
        raft.node(nodeId, serviceHostPort);
        return this;
    }

    /**
     * Adds the nodes from "host:port,host:port,..." (ids 1, 2, 3 … in order), the form of the
     * command-line tools' {@code --servers}.
     */
    public KvClientConfig servers(String hostPorts) {
        int id = raft.nodes.size() + 1;
        for (String s : hostPorts.split(",")) {
            if (!s.trim().isEmpty()) {
                raft.node(id++, s.trim());
            }
        }
        return this;
    }

    public KvClientConfig groupId(int groupId) {
        this.groupId = groupId;
        return this;
    }

    public KvClientConfig timeoutMillis(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
        return this;
    }

    public KvClientConfig callbackExecutor(Executor executor) {
        this.callbackExecutor = executor;
        return this;
    }

    public KvClientConfig callbackOnIoThread(boolean onIoThread) {
        this.callbackOnIoThread = onIoThread;
        return this;
    }

    /** Most requests sent and not answered (past it an operation fails at once with FlowControlException). */
    public KvClientConfig maxPendingRequests(int max) {
        raft.net.maxPendingRequests = max;
        return this;
    }
}
