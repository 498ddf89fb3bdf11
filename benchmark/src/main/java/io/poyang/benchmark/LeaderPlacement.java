package io.poyang.benchmark;

import io.poyang.raft.client.AdminClient;
import io.poyang.raft.client.AdminClientConfig;

import java.util.Map;

/**
 * {@code --leaders N}: moves the leader of every group to node N before the warm-up, through the
 * nodes' replication (admin) ports. With every leader on one node, one client's writes to all the
 * groups go over one connection; where the elections put them, the throughput of several groups
 * depended on how their leaders happened to be spread (docs/benchmarks.md). The bench also makes
 * node N every group's preferred leader when it builds the nodes, so the placement outlasts a
 * failover; this one-shot move only makes the run start with the leaders placed.
 */
public final class LeaderPlacement {

    /** How long one group's transfer may take: the target catches up and wins an election. */
    public static final long TRANSFER_TIMEOUT_MILLIS = 30_000;

    private LeaderPlacement() {
    }

    /**
     * Moves the leaders of groups {@code 1..groups} to {@code nodeId}, one group after the other,
     * each within {@code timeoutMillis}, and says so on stderr.
     *
     * @param replicationAddresses node id → "host:port" of its replication (admin) port, every node
     * @throws RunFailedException naming the first group whose leader could not be moved, and why
     */
    public static void moveAll(Map<Integer, String> replicationAddresses, int groups, int nodeId, long timeoutMillis)
            throws RunFailedException {
        AdminClientConfig config = new AdminClientConfig();
        config.net.name = "BenchAdminClient";
        replicationAddresses.forEach(config::node);
        try (AdminClient admin = new AdminClient(config)) {
            admin.start();
            for (int g = 1; g <= groups; g++) {
                try {
                    admin.transferLeader(g, nodeId, timeoutMillis);
                } catch (RuntimeException e) {
                    throw new RunFailedException("--leaders " + nodeId + ": could not move the leader of group " + g
                            + " to node " + nodeId + " within " + timeoutMillis + " ms: " + e.getMessage());
                }
            }
        }
        System.err.println("bench: moved the leaders of " + groups + " group(s) to node " + nodeId);
    }
}
