package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;
import io.poyang.net.LoopbackPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader stopped gracefully hands its group to another voter first: with an election timeout of
 * 4 s, the group has a new leader well before any follower would have timed out and stood.
 */
class LeaderHandOverTest {

    private static final long ELECTION_TIMEOUT_MILLIS = 4_000;

    @TempDir
    Path tmp;
    private final List<PoyangNode> nodes = new ArrayList<>();

    @AfterEach
    void stopAll() {
        for (PoyangNode n : nodes) {
            n.stop();
        }
    }

    @Test
    void aStoppingLeaderHandsOverBeforeAnElectionTimeout() throws Exception {
        int[] p = LoopbackPorts.pick(6);
        TreeMap<Integer, String> addrs = new TreeMap<>();
        for (int i = 1; i <= 3; i++) {
            addrs.put(i, "127.0.0.1:" + p[2 * i - 2]);
        }
        TreeMap<Integer, ServersConfig.Group> groups = new TreeMap<>();
        groups.put(1, new ServersConfig.Group(1, new int[]{1, 2, 3}, new int[0]));
        ServersConfig servers = new ServersConfig(addrs, groups);
        for (int i = 1; i <= 3; i++) {
            PropertiesFile f = PropertiesFile.empty(tmp.resolve("config-" + i + ".properties"));
            f.set("nodeId", String.valueOf(i));
            f.set("replicationPort", String.valueOf(p[2 * i - 2]));
            f.set("servicePort", String.valueOf(p[2 * i - 1]));
            f.set("metricsPort", "-1");
            f.set("dataDir", tmp.resolve("data-" + i).toString());
            f.set("electionTimeoutMillis", String.valueOf(ELECTION_TIMEOUT_MILLIS));
            f.set("dispatchers", "1");
            f.writeAtomically();
            PoyangNode n = new PoyangNode(NodeConfig.load(f.path()), servers, null);
            n.start();
            nodes.add(n);
        }
        PoyangNode leader = awaitLeader(null, 60_000);
        KvClientConfig cfg = new KvClientConfig().timeoutMillis(30_000);
        for (int i = 0; i < 3; i++) {
            cfg.node(i + 1, "127.0.0.1:" + nodes.get(i).servicePort());
        }
        try (KvClient kv = new KvClient(cfg)) {
            kv.start();
            kv.put("before", "1");
            long start = System.nanoTime();
            CompletableFuture<Void> stopping = CompletableFuture.runAsync(leader::stop);
            PoyangNode next = awaitLeader(leader, 30_000);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < ELECTION_TIMEOUT_MILLIS - 1_000, "a new leader after " + tookMillis
                    + " ms: handed over, not elected after a timeout");
            stopping.get(60, TimeUnit.SECONDS);
            assertTrue(next != leader);
            kv.put("after", "2");   // the client follows the new leader
            assertEquals("1", kv.getString("before"));
        }
    }

    private PoyangNode awaitLeader(PoyangNode not, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            for (PoyangNode n : nodes) {
                if (n != not && !n.isStopped() && n.raftServer().group(1).isLeader()) {
                    return n;
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no leader within " + timeoutMillis + " ms");
    }
}
