package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.KvConfig;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.log.ImpossibleStates;
import io.poyang.net.RpcCallback;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.FaultInjector;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A {@link LocalKvCluster} with test timeouts (election 500 ms, heartbeat 50 ms), a shared fault
 * injector and the checks every cluster test ends with: all running replicas' KvStores equal, no
 * impossible state reported, no server or client thread left.
 */
final class KvTestCluster implements AutoCloseable {

    static final long WAIT_SECONDS = 30;

    final FaultInjector faults = new FaultInjector();
    final LocalKvCluster cluster;
    private final List<KvClient> clients = new ArrayList<>();
    private final Set<String> threadsBefore = threadNames();

    KvTestCluster(Path dir, int nodes, RaftConfig raft, KvConfig kv) {
        ImpossibleStates.reset();
        cluster = new LocalKvCluster(dir, nodes, 1, raft, 2, faults, kv);
    }

    KvTestCluster(Path dir, int nodes) {
        this(dir, nodes, testConfig(), null);
    }

    static RaftConfig testConfig() {
        return new RaftConfig().electionTimeoutMillis(500).heartbeatIntervalMillis(50)
                .replicationTimeoutMillis(2000).segmentBytes(16 << 20).snapshotEvery(0, 0);
    }

    KvTestCluster start() {
        cluster.start();
        cluster.waitForLeader(1, WAIT_SECONDS * 1000);
        return this;
    }

    KvClient client() {
        KvClient c = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(5_000));
        c.start();
        synchronized (clients) {
            clients.add(c);
        }
        return c;
    }

    /** A client that knows only {@code nodes} (ids kept), with {@code config}'s other settings; closed with the cluster. */
    KvClient clientOf(KvClientConfig config, int... nodes) {
        for (int n : nodes) {
            config.node(n, "127.0.0.1:" + cluster.servicePort(n));
        }
        KvClient c = new KvClient(config);
        c.start();
        synchronized (clients) {
            clients.add(c);
        }
        return c;
    }

    int leader() {
        int l = cluster.waitForLeader(1, WAIT_SECONDS * 1000);
        if (l == 0) {
            throw new AssertionError("no leader of group 1 within " + WAIT_SECONDS + " s");
        }
        return l;
    }

    RaftGroup group(int node) {
        return cluster.group(node, 1);
    }

    static void waitFor(String what, BooleanSupplier condition) {
        waitFor(what, WAIT_SECONDS, condition);
    }

    static void waitFor(String what, long seconds, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
    }

    /**
     * Waits until every running node applied what the leader committed, then compares their
     * KvStores. An entry applied while they are read (a new leader's no-op after a restart, which
     * the stores count) makes them differ for a moment: then they are read again, within the wait.
     */
    String checkReplicasEqual() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            int leader = leader();
            long target = group(leader).commitIndex();
            List<Integer> nodes = cluster.runningNodes();
            waitFor("nodes " + nodes + " to apply up to " + target, () -> {
                long applied = group(leader).lastApplied();
                if (applied < target) {
                    return false;
                }
                for (int n : nodes) {
                    if (group(n).lastApplied() != applied) {
                        return false;
                    }
                }
                return true;
            });
            long applied = group(leader).lastApplied();
            String ref = cluster.machine(leader, 1).describeState();
            List<String> states = new ArrayList<>();
            for (int n : nodes) {
                states.add(cluster.machine(n, 1).describeState());
            }
            boolean moved = false;
            for (int n : nodes) {
                moved |= group(n).lastApplied() != applied;
            }
            if (!moved || System.nanoTime() - deadline > 0) {
                for (int i = 0; i < nodes.size(); i++) {
                    assertEquals(ref, states.get(i), "node " + nodes.get(i) + "'s KvStore differs from leader "
                            + leader + "'s");
                }
                return ref;
            }
        }
    }

    /**
     * Sends {@code req} (for group 1) to the group's leader as it is, past KvClient's own checks and
     * session handling: for tests of what the server does with what a client sends.
     */
    static CompletableFuture<KvResp> callLeaderRaw(KvClient client, int command, KvReq req) {
        CompletableFuture<KvResp> f = new CompletableFuture<>();
        client.raftClient().callLeader(1, command, req.groupId(1), KvResp.Decoder::new, 5_000,
                RpcCallback.completing(f));
        return f;
    }

    @Override
    public void close() {
        synchronized (clients) {
            for (KvClient c : clients) {
                c.close();
            }
        }
        cluster.close();
        waitFor("the cluster's and clients' threads to end", 30, () -> leftoverThreads().isEmpty());
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported");
    }

    List<String> leftoverThreads() {
        List<String> left = new ArrayList<>();
        for (String n : threadNames()) {
            if (!threadsBefore.contains(n) && (n.startsWith("raft-") || n.startsWith("KvClient"))
                    && !n.contains("fault-timer")) {
                left.add(n);
            }
        }
        return left;
    }

    private static Set<String> threadNames() {
        Set<String> names = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                names.add(t.getName());
            }
        }
        return names;
    }
}
