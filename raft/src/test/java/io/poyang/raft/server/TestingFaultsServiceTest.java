package io.poyang.raft.server;

import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The testing switch that partitions a node from outside its process: three servers, each with its
 * own {@link FaultInjector} driven only through TESTING_FAULTS on its service port (as the chaos
 * runner drives node processes).
 */
class TestingFaultsServiceTest {

    private static final int GROUP = 1;

    @TempDir
    Path dir;

    @Test
    void isolatingTheLeaderThroughTheCommandElectsAnotherAndHealingLetsItRejoin() throws Exception {
        RaftServer[] servers = new RaftServer[4];
        NioClient client = null;
        try {
            startAll(servers, true);
            client = new NioClient(new NioClientConfig());
            client.start();
            Peer[] peers = new Peer[4];
            for (int i = 1; i <= 3; i++) {
                peers[i] = client.addPeer("127.0.0.1:" + servers[i].servicePort());
            }
            int oldLeader = waitForLeader(servers, 0);
            long oldTerm = servers[oldLeader].group(GROUP).term();

            // Isolate the leader on both sides: it blocks the others, each other blocks it.
            for (int i = 1; i <= 3; i++) {
                int[] blocked = i == oldLeader ? others(oldLeader) : new int[] {oldLeader};
                TestingFaultsRequest answer = send(client, peers[i], new TestingFaultsRequest(blocked));
                assertArrayEquals(blocked, answer.blockedNodeIds(), "the answer lists the blocked nodes in force");
            }
            int newLeader = waitForLeader(servers, oldLeader);
            assertNotEquals(oldLeader, newLeader);
            assertTrue(servers[newLeader].group(GROUP).term() > oldTerm, "a new term");
            RaftCluster.waitFor("the isolated leader to step down (check-quorum)",
                    () -> servers[oldLeader].group(GROUP).role() != RaftRole.LEADER);
            // Cut off, it hears nothing of the new term.
            assertTrue(servers[oldLeader].group(GROUP).term() < servers[newLeader].group(GROUP).term()
                    || servers[oldLeader].group(GROUP).leaderId() != newLeader);

            for (int i = 1; i <= 3; i++) {
                assertEquals(0, send(client, peers[i], new TestingFaultsRequest()).blockedNodeIds().length);
            }
            RaftCluster.waitFor("the healed node to follow the new leader", () -> {
                RaftGroup g = servers[oldLeader].group(GROUP);
                return g.role() == RaftRole.FOLLOWER && g.leaderId() == servers[newLeader].group(GROUP).leaderId()
                        && g.leaderId() != 0;
            });
        } finally {
            if (client != null) {
                client.stop();
            }
            stopAll(servers);
        }
    }

    @Test
    void withoutTheTestingFlagTheCommandDoesNotExist() throws Exception {
        RaftServer[] servers = new RaftServer[4];
        NioClient client = null;
        try {
            startAll(servers, false);
            client = new NioClient(new NioClientConfig());
            client.start();
            Peer p = client.addPeer("127.0.0.1:" + servers[1].servicePort());
            NioClient c = client;
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> send(c, p, new TestingFaultsRequest(2, 3)));
            assertTrue(e.getCause() instanceof RemoteException, e.getCause().toString());
            assertEquals(ResponseCode.COMMAND_NOT_FOUND, ((RemoteException) e.getCause()).responseCode());
        } finally {
            if (client != null) {
                client.stop();
            }
            stopAll(servers);
        }
    }

    private void startAll(RaftServer[] servers, boolean testingFaults) {
        // Replication ports are picked by the OS, so each node learns the others' once they are bound.
        for (int id = 1; id <= 3; id++) {
            RaftServerConfig.Builder b = RaftServer.builder()
                    .nodeId(id)
                    .servicePort("127.0.0.1", 0)
                    .dataDir(dir.resolve("node-" + id))
                    .dispatchers(1)
                    .raftConfig(RaftCluster.testConfig())
                    .group(GROUP, TestStateMachine::new, 1, 2, 3);
            for (int n = 1; n <= 3; n++) {
                b.node(n, "127.0.0.1:0");
            }
            if (testingFaults) {
                TestingFaultsService.enable(b);
            }
            servers[id] = b.build();
            servers[id].start();
        }
        for (int a = 1; a <= 3; a++) {
            for (int b = 1; b <= 3; b++) {
                if (a != b) {
                    servers[a].setNodeAddress(b, "127.0.0.1:" + servers[b].replicationPort());
                }
            }
        }
    }

    private static void stopAll(RaftServer[] servers) {
        for (RaftServer s : servers) {
            if (s != null) {
                s.stop();
            }
        }
    }

    private static TestingFaultsRequest send(NioClient client, Peer peer, TestingFaultsRequest req) throws Exception {
        return client.sendRequest(peer, WritePacket.request(TestingFaultsService.TESTING_FAULTS, req),
                TestingFaultsRequest.Decoder::new, 10_000).get(30, TimeUnit.SECONDS);
    }

    /** Waits for a leader other than {@code not} (0: any) that the other live nodes follow. */
    private static int waitForLeader(RaftServer[] servers, int not) {
        int[] found = new int[1];
        RaftCluster.waitFor("a leader other than node " + not, () -> {
            for (int i = 1; i <= 3; i++) {
                if (i != not && servers[i].group(GROUP).role() == RaftRole.LEADER) {
                    found[0] = i;
                    return true;
                }
            }
            return false;
        });
        return found[0];
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
