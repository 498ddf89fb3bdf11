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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three real node processes from the sample three-node configuration (ports and data directories
 * rewritten): writes through {@code poyang kv}, the leader killed with SIGKILL while writes go on,
 * the leader restarted; then every node holds the same data.
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

            c.nodes.get(leader).kill9();
            int[] survivors = others(leader);
            write(all, 20, 40);   // rides out the election of a new leader
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
