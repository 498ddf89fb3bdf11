package io.poyang.net;

import java.util.concurrent.Executor;

/**
 * Settings shared by {@link NioServerConfig} and {@link NioClientConfig}. Plain fields: set them
 * before passing the config to a server or client; they are read once at start.
 */
public abstract class NioConfig {

    /** Prefix of thread names and log messages. */
    public String name;

    /** Number of I/O worker threads. */
    public int ioThreads;

    /**
     * This side's node id in its cluster, sent in every handshake; 0 (the default) when it is no
     * cluster node, as a client. A server with a node id refuses a connection meant for another
     * node ({@link NioClient#addPeer(String, int)}); a client refuses a server that says it is
     * another node than the one it meant to reach.
     */
    public int nodeId;

    /**
     * The name of this side's cluster, sent in every handshake; null or empty (the default) names
     * none. When both sides name one and the names differ, the connection is refused like one
     * meant for another node id: two clusters whose node ids overlap cannot take each other's nodes
     * for their own through a wrong address. At most {@value Handshake#MAX_CLUSTER_NAME_CHARS}
     * printable ASCII characters.
     */
    public String clusterName;

    /** Largest frame (length prefix excluded) this side accepts; a larger one closes the connection. */
    public int maxFrameBytes = 8 * 1024 * 1024;

    /** Incoming requests in flight (decoded, not yet answered) per I/O worker; past it: FLOW_CONTROL. */
    public int maxInFlightRequests = 100_000;
    /** Bytes of incoming requests in flight per I/O worker; past it: FLOW_CONTROL. */
    public long maxInFlightBytes = 512L * 1024 * 1024;

    /** Outgoing requests waiting for a response (all connections); past it sends block or fail. */
    public int maxPendingRequests = 50_000;
    /** Bytes of outgoing requests waiting for a response or a write; past it sends block or fail. */
    public long maxPendingBytes = 256L * 1024 * 1024;

    /**
     * Encoded bytes waiting to be written to one connection. Past it the worker stops reading from
     * that connection until the backlog halves, so a peer that sends without reading cannot grow
     * our memory without bound. Only on connections this side accepted: the side that connected
     * always reads (answers free room and make nothing to write), or the two sides could each wait
     * for the other to read; what it sends is bounded by {@link #maxPendingBytes}.
     */
    public int maxWriteBacklogBytes = 16 * 1024 * 1024;
    /** A connection whose pending writes make no progress this long is closed (the peer stopped reading). */
    public long writeStallTimeoutMillis = 20_000;

    /** The per-worker buffer reads land in; many packets are decoded from one read, in place. */
    public int readBufferBytes = 128 * 1024;
    /** Size of the pooled direct buffers outgoing packets are encoded into (small packets share one). */
    public int writeBufferBytes = 64 * 1024;
    /** Encoded bytes written to one connection per loop at most, so one busy connection cannot starve the rest. */
    public int maxWriteBatchBytes = 4 * 1024 * 1024;

    /** Free buffers each worker keeps without locking. */
    public long localPoolBytes = 16L * 1024 * 1024;
    /** Free buffers shared by the workers. */
    public long sharedPoolBytes = 64L * 1024 * 1024;

    /** How often each worker checks deadlines (pending requests, handshakes, idle connections). */
    public long tickMillis = 20;

    /** Stop waits this long for requests in flight to finish before failing them. */
    public long stopTimeoutMillis = 5_000;

    /**
     * Where request callbacks run unless the caller asked for the I/O thread. Null means
     * ForkJoinPool.commonPool().
     */
    public Executor callbackExecutor;

    NioConfig(String name, int ioThreads) {
        this.name = name;
        this.ioThreads = ioThreads;
    }

    void validate() {
        check(ioThreads >= 1, "ioThreads must be at least 1: " + ioThreads);
        check(nodeId >= 0, "nodeId must not be negative: " + nodeId);
        String badName = Handshake.checkClusterName(clusterName);
        check(badName == null, "clusterName: " + badName);
        check(maxFrameBytes >= 1024, "maxFrameBytes must be at least 1024: " + maxFrameBytes);
        check(maxInFlightRequests >= 1, "maxInFlightRequests must be at least 1: " + maxInFlightRequests);
        check(maxInFlightBytes >= 1, "maxInFlightBytes must be at least 1: " + maxInFlightBytes);
        check(maxPendingRequests >= 1, "maxPendingRequests must be at least 1: " + maxPendingRequests);
        check(maxPendingBytes >= 1, "maxPendingBytes must be at least 1: " + maxPendingBytes);
        check(maxWriteBacklogBytes >= 1024, "maxWriteBacklogBytes must be at least 1024: " + maxWriteBacklogBytes);
        check(readBufferBytes >= 1024, "readBufferBytes must be at least 1024: " + readBufferBytes);
        check(writeBufferBytes >= 1024, "writeBufferBytes must be at least 1024: " + writeBufferBytes);
        check(maxWriteBatchBytes >= writeBufferBytes, "maxWriteBatchBytes must be at least writeBufferBytes");
        check(tickMillis >= 1, "tickMillis must be at least 1: " + tickMillis);
        check(stopTimeoutMillis >= 0, "stopTimeoutMillis must not be negative: " + stopTimeoutMillis);
        check(writeStallTimeoutMillis >= 1, "writeStallTimeoutMillis must be positive: " + writeStallTimeoutMillis);
    }

    static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
