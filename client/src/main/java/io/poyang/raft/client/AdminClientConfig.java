package io.poyang.raft.client;

import io.poyang.net.NioClientConfig;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/** Settings of an {@link AdminClient}. Plain fields: set them before creating the client. */
public final class AdminClientConfig {

    /**
     * The nodes to administer: node id → "host:port" of its <b>replication</b> port (servers and
     * admin, 9431 by default), not the service port clients write to. More can be added later with
     * {@link AdminClient#setNodeAddress}.
     */
    public Map<Integer, String> nodes = new LinkedHashMap<>();

    /**
     * The network client's settings; its server list is filled in. Its {@code heartbeatIntervalMillis}
     * starts at {@link RaftClientConfig#CLIENT_HEARTBEAT_INTERVAL_MILLIS} (1 s), as a raft client's:
     * a node that went silent with its connection open is noticed in about 2 s, and commands to it
     * fail and are tried elsewhere or again instead of waiting out {@link #requestTimeoutMillis}. Set it
     * with {@link #heartbeatIntervalMillis(long)}; a value set here directly is checked when the client
     * is made.
     */
    public NioClientConfig net = new NioClientConfig();

    /** How long a command to one node (status, add/remove group or node) waits for its answer. */
    public long requestTimeoutMillis = 10_000;
    /** How long one RAFT_STATUS query (finding a group's leader) waits for a node. */
    public long statusTimeoutMillis = 1_000;
    /** First pause before trying again when no leader is known or a node cannot be reached; doubles up to the max. */
    public long minRetryBackoffMillis = 20;
    public long maxRetryBackoffMillis = 500;
    /**
     * Extra time a leader command waits for its answer beyond the timeout it gives the leader, so
     * the leader's own timeout answer (TIMEOUT, with the state it reached) arrives first.
     */
    public long answerMarginMillis = 2_000;

    /** Where futures complete. Null: ForkJoinPool.commonPool(). */
    public Executor callbackExecutor;

    public AdminClientConfig() {
        net.name = "AdminClient";
        net.heartbeatIntervalMillis = RaftClientConfig.CLIENT_HEARTBEAT_INTERVAL_MILLIS;
    }

    /** Adds a node and the address of its replication (admin) port ("host:port"). */
    public AdminClientConfig node(int nodeId, String replicationHostPort) {
        nodes.put(nodeId, replicationHostPort);
        return this;
    }

    /**
     * Sets {@code net.heartbeatIntervalMillis}: a connection that read nothing for {@code millis}
     * pings the node and closes when nothing is read for {@code millis} more, so a node that went
     * silent with its connection open is noticed in about twice this. Default
     * {@link RaftClientConfig#CLIENT_HEARTBEAT_INTERVAL_MILLIS} (1 s). Between
     * {@value ClientHeartbeatInterval#MIN_MILLIS} and {@value ClientHeartbeatInterval#MAX_MILLIS} ms; a
     * value set on the raw field is held to the same bounds when the client is made
     * ({@link ClientHeartbeatInterval}).
     */
    public AdminClientConfig heartbeatIntervalMillis(long millis) {
        net.heartbeatIntervalMillis = ClientHeartbeatInterval.checkSetting(millis);
        return this;
    }
}
