package io.poyang.server.metrics;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.server.Await;
import io.poyang.server.node.InProcessNodes;
import io.poyang.server.node.PoyangNode;
import io.poyang.server.process.Http;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /metrics} and {@code /health} of three nodes in this JVM: every line of the exposition is
 * valid Prometheus text format, and the figures move with the work (writes, fsyncs, bytes, lag).
 */
class MetricsEndpointTest {

    @TempDir
    Path tmp;
    private InProcessNodes cluster;
    private List<PoyangNode> nodes;

    @AfterEach
    void stopAll() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static PrometheusTextParser scrape(int port) throws Exception {
        Http r = Http.get(port, "/metrics");
        assertEquals(200, r.status);
        assertEquals(PrometheusText.CONTENT_TYPE, r.contentType);
        return PrometheusTextParser.parse(r.body);
    }

    private void startCluster() throws Exception {
        cluster = new InProcessNodes(tmp, 3, Collections.singletonMap("metricsPort", "0"));
        nodes = cluster.nodes();
    }

    private PoyangNode awaitLeader() throws Exception {
        return cluster.awaitLeader(null, 60_000);
    }

    @Test
    void everyLineIsValidAndTheFiguresMoveWithWrites() throws Exception {
        startCluster();
        PoyangNode leader = awaitLeader();
        int port = leader.metricsPort();
        PrometheusTextParser before = scrape(port);
        double applied0 = before.value("poyang_raft_writes_total", "group", "1", "outcome", "applied");
        double latency0 = before.value("poyang_raft_write_latency_seconds_count", "group", "1");
        double fsyncs0 = before.value("poyang_log_fsyncs_total", "group", "1");
        double logBytes0 = before.value("poyang_log_written_bytes_total", "group", "1");
        double fsyncLatency0 = before.value("poyang_log_fsync_latency_seconds_count", "group", "1");
        double serviceBytes0 = before.value("poyang_net_bytes_read_total", "port", "service");

        KvClientConfig cfg = cluster.clientConfig();
        try (KvClient kv = new KvClient(cfg)) {
            kv.start();
            kv.mkdir("m");
            for (int i = 0; i < 200; i++) {
                kv.put("m.k" + i, "v" + i);
            }
            assertTrue(!kv.compareAndSet("m.k0", "wrong".getBytes(), "x".getBytes()), "a rejected write");
            // a steady stream for the ops/s gauge, sampled once a second
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_500);
            List<CompletableFuture<Long>> inFlight = new ArrayList<>();
            int n = 0;
            while (System.nanoTime() < end) {
                inFlight.add(kv.putAsync("m.k" + (n++ % 100), "w".getBytes()));
                if (inFlight.size() >= 50) {
                    for (CompletableFuture<Long> f : inFlight) {
                        f.get(30, TimeUnit.SECONDS);
                    }
                    inFlight.clear();
                }
            }
            for (CompletableFuture<Long> f : inFlight) {
                f.get(30, TimeUnit.SECONDS);
            }
            PrometheusTextParser after = scrape(port);
            assertTrue(after.value("poyang_raft_writes_total", "group", "1", "outcome", "applied") >= applied0 + 201,
                    "the applied-writes counter moved by every write");
            assertTrue(after.value("poyang_raft_writes_total", "group", "1", "outcome", "rejected") >= 1,
                    "the CAS mismatch counts as rejected");
            assertTrue(after.value("poyang_raft_write_latency_seconds_count", "group", "1") >= latency0 + 202);
            assertTrue(after.value("poyang_raft_write_latency_seconds_sum", "group", "1") > 0);
            assertTrue(after.value("poyang_raft_write_ops_per_second", "group", "1") > 0, "ops/s while writing");
            assertTrue(after.value("poyang_log_fsyncs_total", "group", "1") > fsyncs0);
            // 200 puts of a few bytes each: every entry is at least its fixed header on disk
            assertTrue(after.value("poyang_log_written_bytes_total", "group", "1") >= logBytes0 + 200 * 32,
                    "the log's byte counter moved by the writes");
            assertTrue(after.value("poyang_log_fsync_latency_seconds_count", "group", "1") > fsyncLatency0);
            assertTrue(after.value("poyang_net_bytes_read_total", "port", "service") > serviceBytes0);
            assertTrue(after.value("poyang_net_requests_received_total", "port", "service") >= 203);
            assertTrue(after.value("poyang_net_connections", "port", "service") >= 1);
            assertEquals(1, after.value("poyang_raft_role", "group", "1", "role", "LEADER"));
            assertTrue(after.value("poyang_raft_persisted_index", "group", "1") >= 202);
            for (PoyangNode f : nodes) {
                if (f != leader) {
                    String id = String.valueOf(f.config().nodeId);
                    assertTrue(after.value("poyang_raft_follower_lag_entries", "group", "1", "follower", id) >= 0);
                    assertTrue(after.value("poyang_raft_follower_match_index", "group", "1", "follower", id) > 0);
                }
            }
            assertTrue(after.has("poyang_fiber_queue_length"));
            assertTrue(after.value("poyang_fiber_dispatch_delay_seconds", "group", "1") >= 0);
            assertTrue(after.has("poyang_fiber_dispatcher_steps_total"));
            assertTrue(after.value("poyang_jvm_memory_used_bytes", "area", "heap") > 0);
            assertTrue(after.has("poyang_jvm_gc_collections_total"));
        }
        // followers: valid too, and they applied everything
        for (PoyangNode f : nodes) {
            if (f != leader) {
                PrometheusTextParser m = scrape(f.metricsPort());
                assertEquals(1, m.value("poyang_raft_role", "group", "1", "role", "FOLLOWER"));
                assertEquals(0, m.value("poyang_raft_writes_total", "group", "1", "outcome", "applied"),
                        "writes are counted by the leader that answered them");
            }
        }
    }

    private static final String[] JOURNAL_METRICS = {"poyang_log_journal_fsyncs_total",
            "poyang_log_journal_records_total", "poyang_log_journal_checkpoints_total", "poyang_log_journal_failed"};

    /** One node leading group 1, its metrics on, with these settings added. */
    private PoyangNode startOneNode(Map<String, String> settings) throws Exception {
        Map<String, String> all = new HashMap<>(settings);
        all.put("metricsPort", "0");
        cluster = new InProcessNodes(tmp, 1, all);
        nodes = cluster.nodes();
        return awaitLeader();
    }

    @Test
    void aNodeWithTheLogJournalShowsItsFsyncsRecordsAndCheckpoints() throws Exception {
        PoyangNode node = startOneNode(Collections.singletonMap("logJournal", "true"));
        int port = node.metricsPort();
        PrometheusTextParser before = scrape(port);
        double fsyncs0 = before.value("poyang_log_journal_fsyncs_total", "node", "1");
        double records0 = before.value("poyang_log_journal_records_total", "node", "1");
        double checkpoints0 = before.value("poyang_log_journal_checkpoints_total", "node", "1");
        assertEquals(0, before.value("poyang_log_journal_failed", "node", "1"));
        // the groups' own fsync figures say what the journal takes from them
        for (String name : new String[] {"poyang_log_fsyncs_total", "poyang_log_fsync_latency_seconds"}) {
            String help = before.help(name);
            assertTrue(help != null && help.contains("logJournal") && help.contains("journal makes durable"), name
                    + ": " + help);
        }
        // the journal's threads have their entries among the crashed I/O threads
        assertEquals(0, before.value("poyang_net_io_threads_crashed", "node", "1", "port", "log_journal"));
        assertEquals(0, before.value("poyang_net_io_threads_crashed", "node", "1", "port", "log_journal_checkpoint"));
        try (KvClient kv = new KvClient(cluster.clientConfig())) {
            kv.start();
            kv.mkdir("j");
            // 3 MiB through a journal of 16 MiB files: past an eighth of a file, where a checkpoint starts
            byte[] value = new byte[64 * 1024];
            for (int i = 0; i < 48; i++) {
                kv.put("j.k" + i, value);
            }
        }
        PrometheusTextParser after = scrape(port);
        assertTrue(after.value("poyang_log_journal_fsyncs_total", "node", "1") > fsyncs0, "journal fsyncs moved");
        assertTrue(after.value("poyang_log_journal_records_total", "node", "1") > records0, "journal records moved");
        assertEquals(0, after.value("poyang_log_journal_failed", "node", "1"));
        // a checkpoint runs on its own thread and counts once saved
        Await.until("a log journal checkpoint in /metrics", 30_000,
                () -> scrape(port).value("poyang_log_journal_checkpoints_total", "node", "1") > checkpoints0);
    }

    @Test
    void aNodeWithoutTheLogJournalShowsNoJournalMetrics() throws Exception {
        PoyangNode node = startOneNode(Collections.emptyMap());
        try (KvClient kv = new KvClient(cluster.clientConfig())) {
            kv.start();
            kv.put("k", "v");
        }
        PrometheusTextParser m = scrape(node.metricsPort());
        assertTrue(m.has("poyang_log_fsyncs_total"), "the groups' own log fsyncs are there");
        for (String name : JOURNAL_METRICS) {
            assertFalse(m.has(name), name + " without a journal");
        }
    }

    @Test
    void aGroupRestartedOnTheLeaderNeverShowsANegativeWriteRate() throws Exception {
        startCluster();
        PoyangNode leader = awaitLeader();
        int port = leader.metricsPort();
        try (KvClient kv = new KvClient(cluster.clientConfig())) {
            kv.start();
            kv.mkdir("r");
            // writes until the once-a-second sampler has seen them (a rate above 0)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (scrape(port).value("poyang_raft_write_ops_per_second", "group", "1") <= 0) {
                assertTrue(System.nanoTime() < deadline, "no write rate within 30 s");
                List<CompletableFuture<Long>> inFlight = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    inFlight.add(kv.putAsync("r.k" + (i % 100), "v".getBytes()));
                }
                for (CompletableFuture<Long> f : inFlight) {
                    f.get(30, TimeUnit.SECONDS);
                }
            }
        }
        // the last sample holds the old group's count, which the restarted group's starts below
        Await.until("a sample after the writes", 10_000,
                () -> scrape(port).value("poyang_raft_write_ops_per_second", "group", "1") == 0);
        leader.raftServer().restartGroup(1).get(60, TimeUnit.SECONDS);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_500);
        int scrapes = 0;
        while (System.nanoTime() < end) {
            double rate = scrape(port).value("poyang_raft_write_ops_per_second", "group", "1");
            assertTrue(rate >= 0, "write ops/s after the group restarted: " + rate);
            scrapes++;
            Thread.sleep(100);   // the scrape interval over the sampler's seconds, not a synchronisation
        }
        assertTrue(scrapes > 5);
    }

    @Test
    void aPeerAddressThatReachesAnotherNodeMakesHealth503AndShowsInTheMetrics() throws Exception {
        startCluster();
        awaitLeader();
        PoyangNode one = nodes.get(0);
        int port3 = nodes.get(2).raftServer().replicationPort();
        String right2 = one.raftServer().nodeAddresses().get(2);
        // node 3's address under another spelling, given as node 2's
        one.raftServer().setNodeAddress(2, "localhost:" + port3);
        Http h = Await.value("node 1's /health to turn 503", 30_000, () -> {
            Http r = Http.get(one.metricsPort(), "/health");
            return r.status == 200 ? null : r;
        });
        assertEquals(503, h.status, h.body);
        assertTrue(h.body.contains("\"reason\":\"node 2: the address localhost:" + port3 + " of node 2 reaches node 3;"
                + " give it its right address with ./poyang admin add-node 2 <host:port>\""), h.body);
        PrometheusTextParser m = scrape(one.metricsPort());
        assertEquals(1, m.value("poyang_net_peer_misaddressed", "node", "1", "peer", "2"));
        assertEquals(0, m.value("poyang_net_peer_misaddressed", "node", "1", "peer", "3"));

        one.raftServer().setNodeAddress(2, right2);
        Await.until("node 1's /health to be ok again", 30_000, () -> Http.get(one.metricsPort(), "/health").status == 200);
        assertEquals(0, scrape(one.metricsPort()).value("poyang_net_peer_misaddressed", "node", "1", "peer", "2"));
    }

    @Test
    void healthIsOkWithALeaderAndUnhealthyWithout() throws Exception {
        startCluster();
        PoyangNode leader = awaitLeader();
        Http h = Http.get(leader.metricsPort(), "/health");
        assertEquals(200, h.status);
        assertEquals("application/json", h.contentType);
        assertTrue(h.body.startsWith("{\"status\":\"ok\",\"node\":" + leader.config().nodeId + ",\"groups\":[{\"id\":1,"
                + "\"role\":\"LEADER\""), h.body);
        // stop the other two: the leader loses its majority, steps down, and no leader is known
        for (PoyangNode n : nodes) {
            if (n != leader) {
                n.stop();
            }
        }
        Http later = Await.value("node " + leader.config().nodeId + "'s /health to turn 503", 30_000, () -> {
            Http h2 = Http.get(leader.metricsPort(), "/health");
            return h2.status == 200 ? null : h2;
        });
        assertEquals(503, later.status, later.body);
        assertTrue(later.body.contains("\"status\":\"unhealthy\",\"reason\":\"group 1: no leader\""), later.body);
    }
}
