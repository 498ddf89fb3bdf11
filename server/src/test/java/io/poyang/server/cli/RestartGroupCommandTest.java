package io.poyang.server.cli;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.AdminError;
import io.poyang.raft.client.AdminMessages;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.FreezableProxy;
import io.poyang.raft.server.FullDiskFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code poyang admin restart-group}: without {@code --on} it restarts the group where it failed
 * and nowhere else; with nothing failed it restarts nothing and says so; {@code --on} restarts a
 * healthy replica on request. A restart not done everywhere (PARTIAL) says what is known of each node
 * and when running it again is safe.
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
        return CommandRun.adminAt(servers, args);
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

    /**
     * A loopback server standing in for a node that answers ADMIN_RESTART_GROUP with {@code answer}
     * (null: it does not answer, and {@code onRestart} runs), counting the restarts it got.
     */
    private static NioServer fakeNode(AtomicInteger restarts, WritePacket answer, Runnable onRestart) {
        NioServerConfig sc = new NioServerConfig();
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.ioThreads = 1;
        sc.stopTimeoutMillis = 1000;
        NioServer server = new NioServer(sc);
        server.register(RaftCommands.ADMIN_RESTART_GROUP, new ReqProcessor<Object>() {
            @Override
            public PbCallback<Object> createDecoder() {
                return IgnoreBodyDecoder.<Object>factory().create();
            }

            @Override
            public WritePacket process(ReqContext context, Object body) {
                restarts.incrementAndGet();
                if (answer == null) {
                    onRestart.run();
                }
                return answer;
            }
        });
        server.start();
        return server;
    }

    /**
     * A restart-group done on some nodes and not others says, per node, what is known and what to
     * do: a node whose connection was lost after the restart was sent (outcome unknown: the admin
     * client does not send it again) may have restarted the group, so the message sends the user to
     * the status and says when running it again is safe, instead of telling them to run it again
     * there; a node that refused it is named as such.
     */
    @Test
    void aRestartNotDoneEverywhereSaysWhatIsKnownOfEachNodeAndWhenRunningItAgainIsSafe() throws Exception {
        AtomicInteger restartsOn1 = new AtomicInteger();
        AtomicInteger restartsOn2 = new AtomicInteger();
        AtomicInteger restartsOn3 = new AtomicInteger();
        FreezableProxy[] relayTo2 = new FreezableProxy[1];
        NioServer node1 = fakeNode(restartsOn1, WritePacket.response(AdminMessages.ACK.builder().build()), null);
        NioServer node2 = fakeNode(restartsOn2, null, () -> relayTo2[0].dropConnections());
        NioServer node3 = fakeNode(restartsOn3, WritePacket.bizError(AdminError.NO_SUCH_GROUP.code(),
                "node 3 does not host raft group 7"), null);
        try {
            relayTo2[0] = new FreezableProxy(node2.port(), 64 * 1024);
            String servers = "1=127.0.0.1:" + node1.port() + ",2=" + relayTo2[0].address() + ",3=127.0.0.1:" + node3.port();
            CommandRun restart = admin(servers, "restart-group", "7", "--on", "1,2,3");
            assertEquals(AdminCommand.EXIT_ERROR, restart.exitCode, restart.toString());
            String m = restart.stderr;
            assertTrue(m.startsWith("poyang admin: PARTIAL: restart-group was done on node 1 and not on node 2: outcome"
                    + " unknown"), m);
            assertTrue(m.contains("node 3: node 3 does not host raft group 7"), m);
            assertTrue(m.contains("Node 1 restarted the group and needs no second restart."), m);
            assertTrue(m.contains("Node 2 was sent the restart and did not answer: the group may have restarted there")
                    && m.contains("Check `poyang admin status --group 7`: ROLE FAILED on a node means the group is"
                    + " still failed there"), m);
            assertTrue(m.contains("Node 3 refused it, for the reason given"), m);
            assertTrue(m.contains("`restart-group 7` without --on is safe to run again"), m);
            assertFalse(m.contains("--on with those nodes") || m.contains("--on 2"),
                    "a node that may have restarted the group is not to be named with --on again: " + m);
            assertEquals(1, restartsOn2.get(), "the restart whose connection was lost was sent again");
            assertEquals(1, restartsOn1.get());
            assertEquals(1, restartsOn3.get());
        } finally {
            if (relayTo2[0] != null) {
                relayTo2[0].close();
            }
            node1.stop();
            node2.stop();
            node3.stop();
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
            // running it again is safe, and the message says why: it restarts only what is still FAILED
            assertTrue(restart.stderr.contains("`restart-group 1` without --on is safe to run again: it restarts only"
                    + " replicas that are still FAILED (`poyang admin status --group 1` shows them)")
                    && restart.stderr.contains("once that node can be reached"), restart.stderr);
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
