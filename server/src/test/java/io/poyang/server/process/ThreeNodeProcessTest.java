package io.poyang.server.process;

import io.poyang.dtkv.server.DtKvStateMachine;
import io.poyang.raft.core.RaftGroup;
import io.poyang.server.Await;
import io.poyang.server.ServerCommand;
import io.poyang.server.cli.CommandRun;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.ServersConfig;
import io.poyang.server.node.PoyangNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three real node processes from the sample three-node configuration (ports and data directories
 * rewritten): writes through {@code poyang kv}, the leader killed with SIGKILL while a writer thread
 * puts key after key, the leader restarted; then every node holds the same data, and every put
 * answered OK, before, across or after the kill, is in it.
 */
class ThreeNodeProcessTest {

    @TempDir
    Path tmp;

    /** Writes app.k{from..to-1} with the kv command: the first and last as child processes, the rest in this JVM. */
    private static void write(String servers, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            String[] args = {"--servers", servers, "--timeout", "30000", "put", "app.k" + i, "value-" + i};
            CommandRun r = i == from || i == to - 1 ? CommandRun.kv(args) : CommandRun.kvInProcess(args);
            assertEquals(0, r.exitCode, "put app.k" + i + ": " + r);
            assertTrue(r.stdout.startsWith("OK (index "), r.stdout);
        }
    }

    /** The background puts answered OK, filled in by {@link #killAndRestart}. */
    private List<Integer> acknowledgedUnderLoad = Collections.emptyList();

    /**
     * Puts app.w0, app.w1, ... through the kv command in this JVM, one after another, until
     * stopped, and remembers which were answered OK. A put cut by the kill may fail (its outcome is
     * then unknown); only the acknowledged ones must survive.
     */
    private static final class BackgroundWriter implements AutoCloseable {
        private final List<Integer> acknowledged = new CopyOnWriteArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> crash = new AtomicReference<>();
        private final Thread thread;

        BackgroundWriter(String servers) {
            thread = new Thread(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) {
                        CommandRun r = CommandRun.kvInProcess("--servers", servers, "--timeout", "30000",
                                "put", "app.w" + i, "w-" + i);
                        if (r.exitCode == 0) {
                            acknowledged.add(i);
                        }
                    }
                } catch (Throwable t) {
                    crash.set(t);
                }
            }, "background-writer");
            thread.setDaemon(true);
            thread.start();
        }

        int acknowledged() {
            if (crash.get() != null) {
                throw new AssertionError("the background writer failed", crash.get());
            }
            return acknowledged.size();
        }

        List<Integer> stopAndList() throws InterruptedException {
            close();
            acknowledged();
            return new ArrayList<>(acknowledged);
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(60_000);
            assertFalse(thread.isAlive(), "the background writer stops within its put timeout");
        }
    }

    @Test
    void leaderKilledWithSigkillThenRestartedAndAllThreeHoldTheSameData() throws Exception {
        try (Cluster c = new Cluster(tmp, 3, Collections.emptyMap())) {
            c.run(() -> killAndRestart(c));
        }
        // each node's data on its own (loaded in this JVM, one at a time, alone: nothing new is written)
        Map<Integer, String> states = new LinkedHashMap<>();
        for (int id = 1; id <= 3; id++) {
            states.put(id, stateOnDisk(tmp.resolve("conf-" + id)));
        }
        assertTrue(states.get(1).contains("app.k49"), states.get(1));
        assertTrue(acknowledgedUnderLoad.size() >= 10, "puts acknowledged around the kill: " + acknowledgedUnderLoad);
        for (int i : acknowledgedUnderLoad) {
            assertTrue(states.get(1).contains("node app.w" + i + " value="), "app.w" + i + " on disk: " + states.get(1));
        }
        assertEquals(states.get(1), states.get(2), "nodes 1 and 2 hold the same data");
        assertEquals(states.get(1), states.get(3), "nodes 1 and 3 hold the same data");
    }

    private void killAndRestart(Cluster c) throws Exception {
        {
            for (int id = 1; id <= 3; id++) {
                c.start(id);
            }
            for (int id = 1; id <= 3; id++) {
                c.awaitReady(id);
            }
            String all = c.servers(1, 2, 3);
            int leader = c.awaitLeader(60_000, 1, 2, 3);

            CommandRun mkdir = CommandRun.kv("--servers", all, "--timeout", "30000", "mkdir", "app");
            assertEquals(0, mkdir.exitCode, mkdir.toString());
            write(all, 0, 20);

            // the kill lands while a writer puts app.w0, app.w1, ... one after another
            int[] survivors = others(leader);
            try (BackgroundWriter writer = new BackgroundWriter(all)) {
                Await.until("5 background puts before the kill", 60_000, () -> writer.acknowledged() >= 5);
                c.nodes.get(leader).kill9();
                int atKill = writer.acknowledged();
                write(all, 20, 40);   // rides out the election of a new leader
                Await.until("5 more background puts after the kill", 60_000, () -> writer.acknowledged() >= atKill + 5);
                acknowledgedUnderLoad = writer.stopAndList();
            }
            int newLeader = c.awaitLeader(60_000, survivors);
            assertTrue(newLeader != leader, "a survivor leads");

            c.start(leader);
            c.awaitReady(leader);
            write(all, 40, 50);

            // every node applies everything
            long commit = Http.groupField(c.health(newLeader), 1, "commitIndex");
            for (int id = 1; id <= 3; id++) {
                int node = id;
                Await.until("node " + node + " to apply index " + commit, 60_000, () -> {
                    try {
                        return Http.groupField(c.health(node), 1, "appliedIndex") >= commit;
                    } catch (Exception e) {
                        return false;
                    }
                });
            }

            // the cluster answers every key written, through a child kv process and a listing
            CommandRun get = CommandRun.kv("--servers", all, "get", "app.k25");
            assertEquals(0, get.exitCode, get.toString());
            assertEquals("value-25", get.stdout.trim());
            CommandRun list = CommandRun.kvInProcess("--servers", all, "list", "app");
            assertEquals(0, list.exitCode, list.toString());
            for (int i = 0; i < 50; i++) {
                assertTrue(list.stdout.contains("app.k" + i + " = value-" + i + "\n"), "app.k" + i + " in " + list.stdout);
            }
            for (int i : acknowledgedUnderLoad) {   // no put answered OK around the kill is lost
                assertTrue(list.stdout.contains("app.w" + i + " = w-" + i + "\n"), "app.w" + i + " in " + list.stdout);
            }
            CommandRun missing = CommandRun.kv("--servers", all, "get", "app.none");
            assertEquals(1, missing.exitCode, "not found exits 1: " + missing);

            // graceful stops, followers first (so no node takes a new term while the others stop)
            int finalLeader = c.awaitLeader(60_000, 1, 2, 3);
            for (int id : others(finalLeader)) {
                c.nodes.get(id).terminate();
                assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(id).waitForExit(60_000));
            }
            c.nodes.get(finalLeader).terminate();
            assertEquals(ServerCommand.EXIT_STOPPED, c.nodes.get(finalLeader).waitForExit(60_000));
            for (int id = 1; id <= 3; id++) {
                Path pid = c.dir.resolve("data-" + id).resolve("poyang.pid");
                assertEquals(0, Files.size(pid), "a graceful stop empties the PID file of node " + id);
            }
        }
    }

    /** Starts the node of {@code conf} in this JVM alone, waits for its replay, and describes its DtKV state. */
    private static String stateOnDisk(Path conf) throws Exception {
        PoyangNode node = new PoyangNode(NodeConfig.load(conf.resolve("config.properties")),
                ServersConfig.load(conf.resolve("servers.properties")), conf.resolve("servers.properties"));
        node.start();
        try {
            RaftGroup g = node.raftServer().group(1);
            return ((DtKvStateMachine) g.stateMachine()).describeState();
        } finally {
            node.stop();
        }
    }

    private static int[] others(int id) {
        int[] r = new int[2];
        int k = 0;
        for (int i = 1; i <= 3; i++) {
            if (i != id) {
                r[k++] = i;
            }
        }
        return r;
    }
}
