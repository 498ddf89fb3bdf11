package io.poyang.benchmark.raft;

import io.poyang.benchmark.BenchDirs;
import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.LeaderPlacement;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.RaftServerConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The raft servers of the raft benchmarks: {@code --nodes} nodes in this process on loopback, in a
 * fresh data directory (under {@code $POYANG_BENCH_DIR} or the system temp directory, deleted by
 * {@link #close}), hosting groups 1..{@code --groups} of all the nodes with {@link BenchStateMachine}s,
 * fsync per {@code --fsync}, the node's log journal and batched appends per {@code --log-journal} and
 * {@code --batch-appends}; with {@code --leaders N} every group's leader is on node N once it is built,
 * and node N is every group's preferred leader, so it leads again after a failover.
 */
final class BenchCluster implements AutoCloseable {

    final RaftServer[] servers;
    private final java.util.Map<Long, BenchStateMachine> machines = new java.util.concurrent.ConcurrentHashMap<>();
    private final Path dir;
    private final int groups;

    BenchCluster(BenchOptions o) throws Exception {
        this.groups = o.groups;
        dir = BenchDirs.create("poyang-bench-raft-");
        int n = o.nodes;
        servers = new RaftServer[n];
        try {
            startServers(o);
        } catch (Exception | Error e) {
            try {
                close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private void startServers(BenchOptions o) throws Exception {
        int n = o.nodes;
        int[] members = new int[n];
        for (int i = 0; i < n; i++) {
            members[i] = i + 1;
        }
        for (int i = 0; i < n; i++) {
            int id = i + 1;
            RaftServerConfig.Builder b = RaftServer.builder()
                    .nodeId(id)
                    .servicePort("127.0.0.1", 0)
                    .dataDir(dir.resolve("node-" + id))
                    .dispatchers(dispatchers(n))
                    .fsyncPermits(Integer.getInteger("poyang.bench.fsyncPermits", 0))
                    .batchAppends(o.batchAppends)
                    .logJournal(o.logJournal)
                    .logJournalFiles(Integer.getInteger("poyang.bench.logJournalFiles", 8),
                            Long.getLong("poyang.bench.logJournalFileMiB", 16) << 20)
                    .raftConfig(new RaftConfig().syncForce(o.fsync).snapshotEvery(0, 0));
            for (int j = 0; j < n; j++) {
                b.node(j + 1, "127.0.0.1:0");   // ports picked at start, told to the others below
            }
            for (int g = 1; g <= groups; g++) {
                int group = g;
                b.group(g, () -> {
                    BenchStateMachine sm = new BenchStateMachine(o.keys);
                    machines.put(key(id, group), sm);
                    return sm;
                }, members);
                if (o.leadersOn > 0) {
                    b.preferredLeader(g, o.leadersOn);   // the placement outlasts a failover
                }
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
        if (o.leadersOn > 0) {
            Map<Integer, String> replication = new LinkedHashMap<>();
            for (RaftServer s : servers) {
                replication.put(s.nodeId(), "127.0.0.1:" + s.replicationPort());
            }
            LeaderPlacement.moveAll(replication, groups, o.leadersOn, LeaderPlacement.TRANSFER_TIMEOUT_MILLIS);
        }
    }

    /**
     * The report's lines on how the cluster was set up: fsync, dispatchers, the log journal and
     * batched appends (as the servers were built), the node the leaders were moved to (0: none), the
     * leader of each group, the JDK.
     */
    void putSetup(Map<String, Object> m, BenchOptions o) {
        m.put("fsync", o.fsync);
        m.put("dispatchers_per_node", dispatchers(o.nodes));
        m.put("log_journal", servers[0].config().logJournal());
        m.put("batch_appends", servers[0].config().batchAppends());
        m.put("leaders_on", o.leadersOn);
        m.put("leaders", leaders());
        m.put("java", System.getProperty("java.version"));
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

    /** The node leading {@code groupId} now, or 0. */
    int leaderOf(int groupId) {
        for (RaftServer s : servers) {
            RaftGroup g = s.group(groupId);
            if (g != null && g.isLeader()) {
                return s.nodeId();
            }
        }
        return 0;
    }

    /** The group on node {@code nodeId}. */
    RaftGroup group(int nodeId, int groupId) {
        return servers[nodeId - 1].group(groupId);
    }

    /** The state machine of {@code groupId} on {@code nodeId} (read it only on the group's dispatcher). */
    BenchStateMachine machine(int nodeId, int groupId) {
        return machines.get(key(nodeId, groupId));
    }

    private static long key(int nodeId, int groupId) {
        return ((long) nodeId << 32) | groupId;
    }

    /** The leaders of groups 1..N, comma-separated (for the report). */
    String leaders() {
        StringBuilder b = new StringBuilder();
        for (int g = 1; g <= groups; g++) {
            if (g > 1) {
                b.append(',');
            }
            b.append(leaderOf(g));
        }
        return b.toString();
    }

    @Override
    public void close() throws IOException {
        RuntimeException stopFailure = null;
        for (RaftServer s : servers) {
            if (s != null) {
                try {
                    s.stop();
                } catch (RuntimeException e) {   // one that failed to stop must not keep the data
                    if (stopFailure == null) {
                        stopFailure = e;
                    } else {
                        stopFailure.addSuppressed(e);
                    }
                }
            }
        }
        BenchDirs.delete(dir);
        if (stopFailure != null) {
            throw stopFailure;
        }
    }
}
