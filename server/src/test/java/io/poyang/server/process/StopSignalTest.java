package io.poyang.server.process;

import io.poyang.dtkv.client.KvClient;
import io.poyang.server.Await;
import io.poyang.server.ServerCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SIGTERM on a node process: a graceful stop answers the writes it already took before it stops,
 * and a second SIGTERM forces the stop at once. To have writes in flight for as long as the test
 * needs, the leader's two followers are paused (SIGSTOP) while the writes go in, so none can commit
 * until they are resumed (SIGCONT).
 */
class StopSignalTest {

    @TempDir
    Path tmp;

    private static Map<String, String> settings() {
        Map<String, String> s = new HashMap<>();
        s.put("drainTimeoutMillis", "25000");
        s.put("shutdownTimeoutMillis", "40000");
        return s;
    }

    private static void signal(long pid, String name) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + name, String.valueOf(pid)).start();
        assertTrue(k.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, k.exitValue(), "kill -" + name + " " + pid);
    }

    private static int[] others(int id) {
        return id == 1 ? new int[]{2, 3} : id == 2 ? new int[]{1, 3} : new int[]{1, 2};
    }

    /** Sends {@code count} puts to the cluster without waiting for their answers. */
    private static List<CompletableFuture<Long>> putAsync(KvClient kv, String prefix, int count) {
        List<CompletableFuture<Long>> f = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            f.add(kv.putAsync(prefix + i, ("v" + i).getBytes()));
        }
        return f;
    }

    private static void awaitStderr(NodeProcess p, String text, long timeoutMillis) throws Exception {
        Await.until("node " + p.nodeId + " to log '" + text + "'", timeoutMillis, () -> p.stderrTail().contains(text));
    }

    @Test
    void aGracefulStopAnswersTheWritesItTookThenExitsZero() throws Exception {
        try (Cluster c = new Cluster(tmp, 3, settings())) {
            c.run(() -> {
                for (int id = 1; id <= 3; id++) {
                    c.start(id);
                }
                for (int id = 1; id <= 3; id++) {
                    c.awaitReady(id);
                }
                int leader = c.awaitLeader(60_000, 1, 2, 3);
                try (KvClient kv = new KvClient(c.clientConfig(40_000))) {
                    kv.start();
                    kv.mkdir("inflight");
                    for (int f : others(leader)) {
                        signal(c.nodes.get(f).pid(), "STOP");
                    }
                    List<CompletableFuture<Long>> writes;
                    try {
                        writes = putAsync(kv, "inflight.k", 50);
                        // the leader takes them (pending writes); without a follower they cannot commit
                        Await.until("the leader to take the 50 writes", 30_000,
                                () -> c.groupMetric(leader, "poyang_raft_pending_writes", 1) == 50);
                        assertTrue(writes.stream().noneMatch(CompletableFuture::isDone), "nothing commits without followers");
                        c.nodes.get(leader).terminate();
                        awaitStderr(c.nodes.get(leader), "draining the writes in flight", 30_000);
                        Thread.sleep(500);   // the thing under test: the drain (up to 25 s) keeps the node up
                        assertTrue(c.nodes.get(leader).isAlive(), "the leader waits for its writes");
                    } finally {
                        for (int f : others(leader)) {
                            signal(c.nodes.get(f).pid(), "CONT");
                        }
                    }
                    for (CompletableFuture<Long> w : writes) {
                        assertTrue(w.get(60, TimeUnit.SECONDS) > 0, "every write taken before the stop succeeds");
                    }
                    assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(leader).waitForExit(60_000));
                    for (int i = 0; i < 50; i++) {
                        assertEquals("v" + i, kv.getString("inflight.k" + i));
                    }
                }
                Path data = c.dir.resolve("data-" + leader);
                assertEquals(0, Files.size(data.resolve("poyang.pid")), "the PID file is emptied");
                try (Stream<Path> snaps = Files.list(data.resolve("group-1").resolve("snapshot"))) {
                    assertTrue(snaps.anyMatch(p -> p.toString().endsWith(".meta")), "snapshotOnStop wrote a snapshot");
                }
                assertTrue(c.nodes.get(leader).stderrTail().contains("node " + leader + " stopped"));
            });
        }
    }

    @Test
    void aSecondSigtermForcesTheStop() throws Exception {
        // the followers are stopped while the leader takes 20 writes: with the sample's 1 s election
        // timeout a stall of this machine could make it step down first, failing them
        Map<String, String> settings = settings();
        settings.put("electionTimeoutMillis", "5000");
        try (Cluster c = new Cluster(tmp, 3, settings)) {
            c.run(() -> {
                for (int id = 1; id <= 3; id++) {
                    c.start(id);
                }
                for (int id = 1; id <= 3; id++) {
                    c.awaitReady(id);
                }
                int leader = c.awaitLeader(60_000, 1, 2, 3);
                NodeProcess l = c.nodes.get(leader);
                try (KvClient kv = new KvClient(c.clientConfig(40_000))) {
                    kv.start();
                    kv.mkdir("forced");
                    for (int f : others(leader)) {
                        signal(c.nodes.get(f).pid(), "STOP");
                    }
                    try {
                        putAsync(kv, "forced.k", 20);
                        Await.until("the leader to take the 20 writes", 30_000,
                                () -> c.groupMetric(leader, "poyang_raft_pending_writes", 1) == 20);
                        signal(l.pid(), "TERM");
                        awaitStderr(l, "draining the writes in flight", 30_000);
                        long sent = System.nanoTime();
                        signal(l.pid(), "TERM");
                        assertEquals(ServerCommand.EXIT_FORCED, l.waitForExit(20_000));
                        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent) < 15_000,
                                "forced, not drained (the drain would wait 25 s)");
                        assertTrue(l.stderrTail().contains("SIGTERM again: stopping at once"), l.stderrTail());
                    } finally {
                        for (int f : others(leader)) {
                            signal(c.nodes.get(f).pid(), "CONT");
                        }
                    }
                }
                // the forced node starts again on its data and rejoins
                c.start(leader);
                c.awaitReady(leader);
                c.awaitLeader(60_000, 1, 2, 3);
            });
        }
    }

    /**
     * A start cannot be stopped gracefully (it replays the logs), so a signal during one ends the
     * process at once, exit 0, and the next start finds every acknowledged write. The start is held
     * by a named pipe in place of the group's status file: reading it blocks until a writer opens it.
     */
    @Test
    void aSignalDuringTheStartExitsAtOnceAndTheNextStartLosesNothing() throws Exception {
        int[] p = io.poyang.net.LoopbackPorts.pick(3);
        TestConf.Ports ports = new TestConf.Ports(p[0], p[1], p[2]);
        Path conf = TestConf.write(TestConf.samples().resolve("single"), tmp.resolve("conf"), ports,
                tmp.resolve("data"), java.util.Collections.singletonMap(1, ports), java.util.Collections.emptyMap());
        String clientServers = "127.0.0.1:" + ports.service;
        try (NodeProcess first = new NodeProcess(1, conf, tmp).start()) {
            first.awaitReady(60_000);
            try (KvClient kv = new KvClient(new io.poyang.dtkv.client.KvClientConfig().servers(clientServers))) {
                kv.start();
                kv.mkdir("app");
                for (int i = 0; i < 20; i++) {
                    kv.put("app.k" + i, "v" + i);
                }
            }
            first.terminate();
            assertEquals(ServerCommand.EXIT_STOPPED, first.waitForExit(60_000));
        }
        Path status = tmp.resolve("data").resolve("group-1").resolve("status");
        Path saved = tmp.resolve("status.saved");
        Files.move(status, saved);
        Process mkfifo = new ProcessBuilder("mkfifo", status.toString()).inheritIO().start();
        assertTrue(mkfifo.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, mkfifo.exitValue(), "mkfifo " + status);

        try (NodeProcess blocked = new NodeProcess(1, conf, tmp).start()) {
            // the group's start is what reads the status file; the raft server is up before it
            Await.until("the node to start its group", 60_000, () -> blocked.stderrTail().contains("raft node 1 started"));
            Thread.sleep(500);   // the thing under test: still starting, held by the pipe
            assertTrue(blocked.isAlive(), "held by the pipe: " + blocked.stderrTail());
            assertTrue(blocked.stdoutLines().isEmpty(), "no ready line yet");
            long sent = System.nanoTime();
            blocked.signal("TERM");
            assertEquals(ServerCommand.EXIT_STOPPED, blocked.waitForExit(20_000), blocked.stderrTail());
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent) < 15_000, "at once");
            assertTrue(blocked.stderrTail().contains("SIGTERM during the start: exiting at once"), blocked.stderrTail());
        }

        Files.delete(status);
        Files.move(saved, status);
        try (NodeProcess again = new NodeProcess(1, conf, tmp).start()) {
            again.awaitReady(60_000);
            try (KvClient kv = new KvClient(new io.poyang.dtkv.client.KvClientConfig().servers(clientServers))) {
                kv.start();
                for (int i = 0; i < 20; i++) {
                    assertEquals("v" + i, kv.getString("app.k" + i));
                }
            }
            again.terminate();
            assertEquals(ServerCommand.EXIT_STOPPED, again.waitForExit(60_000));
        }
    }
}
