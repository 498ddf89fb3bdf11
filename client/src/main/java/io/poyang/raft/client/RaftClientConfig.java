package io.poyang.raft.client;

import io.poyang.net.NioClientConfig;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/** Settings of a {@link RaftClient}. Plain fields: set them before creating the client. */
public final class RaftClientConfig {

    /**
     * The heartbeat interval a cluster's clients start with ({@code net.heartbeatIntervalMillis}): a
     * connection that read nothing for this long pings the server, and closes when nothing is read
     * for as long again. So a server that stopped answering without closing its connection (its
     * process paused — SIGSTOP, a long GC pause, a frozen VM — or the network to it black-holed) is
     * noticed within about twice this, and the writes pending on it fail with a lost connection:
     * exactly-once writes are then sent to the new leader within their deadline (a new leader is
     * elected about one election timeout, 1 s by default, after the old one went silent), plain ones
     * end outcome-unknown. The network layer's own default (10 s, kept for node-to-node connections)
     * would notice it after about 20 s, past the writes' deadlines. The cost: an idle client pings
     * each server it is connected to once per interval, answered on the server's I/O thread (not
     * behind its busy dispatcher), so a slow state machine does not close the connection; a server
     * whose I/O thread stalls longer than the interval does.
     */
    public static final long CLIENT_HEARTBEAT_INTERVAL_MILLIS = 1_000;

    /**
     * The default {@link #exactlyOnceAttemptMillis}: long enough for a busy leader to commit (a resend
     * of a write still in the log adds a second entry, applied as a repeat), short enough to leave a
     * 5 s deadline time to find a new leader and send the write there.
     */
    public static final long DEFAULT_EXACTLY_ONCE_ATTEMPT_MILLIS = 3_000;

    /** The nodes of the cluster: node id → "host:servicePort". Required. */
    public Map<Integer, String> nodes = new LinkedHashMap<>();

    /**
     * The network client's settings (I/O threads, pending-request bounds …); its server list is filled
     * in. Its {@code heartbeatIntervalMillis} starts at {@link #CLIENT_HEARTBEAT_INTERVAL_MILLIS} (1 s):
     * the time in which a server that went silent is noticed is about twice it. Set it with
     * {@link #heartbeatIntervalMillis(long)}; a value set here directly is checked when the client is made.
     */
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
    public long exactlyOnceAttemptMillis = DEFAULT_EXACTLY_ONCE_ATTEMPT_MILLIS;
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
        net.heartbeatIntervalMillis = CLIENT_HEARTBEAT_INTERVAL_MILLIS;
    }

    /** Adds a node of the cluster and its service address ("host:port"). */
    public RaftClientConfig node(int nodeId, String serviceHostPort) {
        nodes.put(nodeId, serviceHostPort);
        return this;
    }

    /**
     * Sets {@code net.heartbeatIntervalMillis}: a connection that read nothing for {@code millis}
     * pings the server and closes when nothing is read for {@code millis} more, so a server that went
     * silent with its connection open is noticed in about twice this. Default
     * {@link #CLIENT_HEARTBEAT_INTERVAL_MILLIS} (1 s). Between {@value ClientHeartbeatInterval#MIN_MILLIS}
     * and {@value ClientHeartbeatInterval#MAX_MILLIS} ms; a value set on the raw field is held to the
     * same bounds when the client is made ({@link ClientHeartbeatInterval}).
     */
    public RaftClientConfig heartbeatIntervalMillis(long millis) {
        net.heartbeatIntervalMillis = ClientHeartbeatInterval.checkSetting(millis);
        return this;
    }
}
