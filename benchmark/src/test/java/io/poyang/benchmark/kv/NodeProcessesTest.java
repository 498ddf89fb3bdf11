package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchOptions;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.ServersConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/**
 * How {@link NodeProcesses} stops its processes, with shell processes standing in for nodes: one that
 * takes a moment to stop after SIGTERM, as a node does; and the config files it writes for its nodes.
 */
class NodeProcessesTest {

    @TempDir
    Path parent;

    /**
     * Starts a process in {@code nodes} that stops {@code stopSeconds} after SIGTERM, creating
     * {@code stopped} as it does; returns once it handles SIGTERM.
     */
    private static Process slowToStop(NodeProcesses nodes, String stopSeconds, Path stopped) throws Exception {
        Process p = nodes.startProcess(new ProcessBuilder("sh", "-c", "trap 'sleep " + stopSeconds + "; touch \""
                + stopped + "\"; exit 0' TERM; echo ready; while :; do sleep 0.05; done"));
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("ready", r.readLine());
        return p;
    }

    /** The node's own parser reads what the bench writes: --log-journal and --batch-appends reach the node. */
    @Test
    void theNodeConfigCarriesTheLogJournalAndBatchedAppendsOfTheOptions() throws Exception {
        Path on = parent.resolve("on.properties");
        Files.write(on, NodeProcesses.configProperties(BenchOptions.parse("--nodes", "3", "--log-journal", "true",
                "--batch-appends", "true", "--fsync", "false"), 2, 9999, parent.resolve("data"), 1)
                .getBytes(StandardCharsets.UTF_8));
        NodeConfig c = NodeConfig.load(on);
        assertEquals(2, c.nodeId);
        assertEquals(9999, c.replicationPort);
        assertTrue(c.logJournal(1), "on even for one group: the option says so");
        assertTrue(c.batchAppends(1));
        assertFalse(c.raft.syncForce());
        Path off = parent.resolve("off.properties");
        Files.write(off, NodeProcesses.configProperties(BenchOptions.parse(), 1, 9998, parent.resolve("data"), 1)
                .getBytes(StandardCharsets.UTF_8));
        c = NodeConfig.load(off);
        assertFalse(c.logJournal(4), "off even for several groups: the bench's options say so");
        assertFalse(c.batchAppends(4));
    }

    /** The node's own parser reads the servers file the bench writes: --leaders N makes node N every group's preferred leader. */
    @Test
    void theServersFileNamesThePreferredLeaderOfTheOptions() throws Exception {
        Path with = parent.resolve("with.properties");
        Files.write(with, NodeProcesses.serversProperties(BenchOptions.parse("--nodes", "3", "--groups", "2",
                "--leaders", "2"), new int[]{9001, 9002, 9003}).getBytes(StandardCharsets.UTF_8));
        ServersConfig s = ServersConfig.load(with);
        assertEquals("127.0.0.1:9003", s.nodes().get(3));
        assertEquals(2, s.groups().size());
        for (ServersConfig.Group g : s.groups().values()) {
            assertArrayEquals(new int[]{1, 2, 3}, g.members);
            assertEquals(2, g.preferredLeader, "group " + g.id);
        }
        Path without = parent.resolve("without.properties");
        Files.write(without, NodeProcesses.serversProperties(BenchOptions.parse("--nodes", "3"), new int[]{9001, 9002, 9003})
                .getBytes(StandardCharsets.UTF_8));
        assertEquals(0, ServersConfig.load(without).groups().get(1).preferredLeader, "no --leaders: no preference");
    }

    /**
     * The exit hook interrupts the run's thread, which may be the one closing: the close must still
     * stop the processes as usual and wait for them before deleting their directory (it SIGKILLed
     * them and deleted at once, racing processes that had not ended yet).
     */
    @Test
    void closeOnAnInterruptedThreadStillStopsTheProcessesAndWaitsForThem() throws Exception {
        Path dir = Files.createDirectory(parent.resolve("nodes"));
        NodeProcesses nodes = new NodeProcesses(dir);
        Path stopped = parent.resolve("stopped");
        Process p = slowToStop(nodes, "0.3", stopped);
        Thread.currentThread().interrupt();
        nodes.close();
        assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
        assertFalse(p.isAlive(), "close returned before the process ended");
        assertTrue(Files.exists(stopped), "the process was not let stop on its SIGTERM");
        assertFalse(Files.exists(dir));
    }

    /**
     * The exit hook's close, while the run's thread is closing: it returns only once that close is
     * done, since the JVM ends when its hooks return (it returned at once, leaving the directory and
     * the processes still stopping).
     */
    @Test
    void aSecondCloseWaitsForTheFirstToFinish() throws Exception {
        Path dir = Files.createDirectory(parent.resolve("nodes"));
        NodeProcesses nodes = new NodeProcesses(dir);
        Process p = slowToStop(nodes, "1", parent.resolve("stopped"));
        Thread first = new Thread(nodes::close);
        first.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (first.getState() != Thread.State.TIMED_WAITING && first.isAlive() && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);   // poll interval; the loop has a deadline
        }
        nodes.close();
        assertFalse(p.isAlive(), "the second close returned while the process was stopping");
        assertFalse(Files.exists(dir));
        first.join(10_000);
    }

    /**
     * Ctrl-C while the setup writes the nodes' config files: the exit hook's close deletes the
     * directory, the setup writes one more file before it sees it must stop, and its own close must
     * delete that too (it returned at once, leaving the directory).
     */
    @Test
    void aLaterCloseDeletesWhatWasWrittenAfterTheFirst() throws Exception {
        Path dir = Files.createDirectory(parent.resolve("nodes"));
        NodeProcesses nodes = new NodeProcesses(dir);
        nodes.close();
        assertFalse(Files.exists(dir));
        Files.write(Files.createDirectories(dir.resolve("node1")).resolve("config.properties"), new byte[]{'#'});
        assertThrows(java.io.IOException.class, () -> nodes.startProcess(new ProcessBuilder("true")),
                "no process starts once closed");
        nodes.close();
        assertFalse(Files.exists(dir), "left behind");
    }

    /** A node process that ends on its own during the run is reported, with its exit code. */
    @Test
    void aWatchedProcessThatExitsIsAFailure() throws Exception {
        Path dir = Files.createDirectory(parent.resolve("nodes"));
        NodeProcesses nodes = new NodeProcesses(dir);
        try {
            Process p = nodes.startProcess(new ProcessBuilder("sh", "-c", "exit 3"));
            assertNull(nodes.failure());
            nodes.watch(2, p);
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (nodes.failure() == null && System.nanoTime() - deadline < 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);   // poll interval; the loop has a deadline
            }
            String failure = nodes.failure();
            assertNotNull(failure, "no failure reported");
            assertTrue(failure.startsWith("node 2 (") && failure.contains("pid " + p.pid() + ") exited with code 3 during the run"),
                    failure);
        } finally {
            nodes.close();
        }
    }
}
