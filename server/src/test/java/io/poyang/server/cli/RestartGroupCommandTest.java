package io.poyang.server.cli;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.FullDiskFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code poyang admin restart-group}: without {@code --on} it restarts the group where it failed
 * and nowhere else; with nothing failed it restarts nothing and says so; {@code --on} restarts a
 * healthy replica on request.
 */
class RestartGroupCommandTest {

    @TempDir
    Path dir;

    private static String servers(LocalKvCluster c) {
        StringBuilder servers = new StringBuilder();
        for (int n = 1; n <= c.nodeCount(); n++) {
            servers.append(n > 1 ? "," : "").append(n).append("=127.0.0.1:").append(c.server(n).replicationPort());
        }
        return servers.toString();
    }

    private static CommandRun admin(LocalKvCluster c, String... args) {
        return admin(servers(c), args);
    }

    private static CommandRun admin(String servers, String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--servers", servers, "--timeout", "30000"));
        all.addAll(Arrays.asList(args));
        return CommandRun.adminInProcess(all.toArray(new String[0]));
    }

    /** Writes through {@code kv} until group 1 on {@code node} has failed (its disk is full). */
    private static void writeUntilFailed(LocalKvCluster c, KvClient kv, int node) {
        for (int i = 0; c.group(node, 1).failure() == null; i++) {
            assertTrue(i < 100_000, "the group on node " + node + " did not fail");
            kv.put("k" + i, "v");
        }
    }

    @Test
    void restartsTheGroupWhereItFailedOnlyAndRefusesWhenNothingFailed() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (LocalKvCluster c = new LocalKvCluster(dir, 3, 1, new RaftConfig().logFileIo(io), 1, null, null).start();
             KvClient kv = new KvClient(new KvClientConfig().servers(c.serviceAddresses()))) {
            kv.start();
            int leader = c.waitForLeader(1, 30_000);
            int full = leader % 3 + 1;
            kv.put("before", "1");

            CommandRun nothingFailed = admin(c, "restart-group", "1");
            assertEquals(AdminCommand.EXIT_ERROR, nothingFailed.exitCode, nothingFailed.toString());
            assertTrue(nothingFailed.stderr.startsWith("poyang admin: NOT_FAILED: "), nothingFailed.stderr);
            assertTrue(nothingFailed.stderr.contains("has not failed on any node running it (nodes 1,2,3)")
                    && nothingFailed.stderr.contains("--on"), nothingFailed.stderr);

            // a follower's disk fills: its group fails as it writes what the leader sends
            io.fill(dir.resolve("node-" + full).resolve("group-1"));
            writeUntilFailed(c, kv, full);
            RaftGroup failed = c.group(full, 1);
            RaftGroup healthy = c.group(leader, 1);
            io.free();

            CommandRun restart = admin(c, "restart-group", "1");
            assertEquals(AdminCommand.EXIT_OK, restart.exitCode, restart.toString());
            assertTrue(restart.stdout.startsWith("OK: group 1 restarted on node " + full + " "), restart.stdout);
            RaftGroup fresh = c.group(full, 1);
            assertTrue(fresh != failed, "the failed group was not replaced");
            assertNull(fresh.failure());
            assertSame(healthy, c.group(leader, 1), "a healthy replica was restarted too");

            // named with --on, a healthy replica is restarted on request
            CommandRun onLeader = admin(c, "restart-group", "1", "--on", String.valueOf(leader), "--json");
            assertEquals(AdminCommand.EXIT_OK, onLeader.exitCode, onLeader.toString());
            assertTrue(onLeader.stdout.contains("\"op\":\"restart-group\""), onLeader.stdout);
            assertTrue(c.group(leader, 1) != healthy, "the named replica was not restarted");

            CommandRun deleting = admin(c, "restart-group", "1", "--delete-data");
            assertEquals(AdminCommand.EXIT_ERROR, deleting.exitCode, deleting.toString());
            assertTrue(deleting.stderr.contains("takes no --delete-data"), deleting.stderr);

            CommandRun unknown = admin(c, "restart-group", "77");
            assertEquals(AdminCommand.EXIT_ERROR, unknown.exitCode, unknown.toString());
            assertTrue(unknown.stderr.contains("NO_SUCH_GROUP"), unknown.stderr);

            kv.put("after", "2");
            assertEquals("1", kv.getString("before"));
            assertEquals("2", kv.getString("after"));
            // the restarted follower caught up with everything
            long commit = c.group(c.waitForLeader(1, 30_000), 1).commitIndex();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.group(full, 1).lastApplied() < commit) {
                assertTrue(System.nanoTime() < deadline, "node " + full + " applied " + c.group(full, 1).lastApplied()
                        + " of " + commit);
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
            }
        }
    }

    @Test
    void aNodeThatDoesNotAnswerDoesNotKeepTheFailedReplicasFromARestartAndIsNamed() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (LocalKvCluster c = new LocalKvCluster(dir, 3, 1, new RaftConfig().logFileIo(io), 1, null, null).start();
             KvClient kv = new KvClient(new KvClientConfig().servers(c.serviceAddresses()))) {
            kv.start();
            int leader = c.waitForLeader(1, 30_000);
            int full = leader % 3 + 1;
            int down = full % 3 + 1 == leader ? full % 3 + 2 : full % 3 + 1;
            String servers = servers(c);
            io.fill(dir.resolve("node-" + full).resolve("group-1"));
            writeUntilFailed(c, kv, full);
            RaftGroup failed = c.group(full, 1);
            io.free();
            c.stopNode(down);

            CommandRun restart = admin(servers, "restart-group", "1");
            assertEquals(AdminCommand.EXIT_ERROR, restart.exitCode, restart.toString());
            assertTrue(restart.stderr.startsWith("poyang admin: PARTIAL: restart-group restarted group 1 on node " + full
                    + ", where it had failed, but node " + down + " was not asked"), restart.stderr);
            assertTrue(c.group(full, 1) != failed, "the failed replica was not restarted");
            assertNull(c.group(full, 1).failure());

            // nothing failed where it could ask, but the node it could not ask may hold a failed replica
            CommandRun again = admin(servers, "restart-group", "1");
            assertEquals(AdminCommand.EXIT_ERROR, again.exitCode, again.toString());
            assertTrue(again.stderr.startsWith("poyang admin: UNREACHABLE: restart-group restarted nothing"),
                    again.stderr);
            assertTrue(again.stderr.contains("node " + down + " was not asked"), again.stderr);
        }
    }
}
