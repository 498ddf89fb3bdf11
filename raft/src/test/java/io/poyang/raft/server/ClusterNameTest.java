package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Node ids repeat across clusters, so the node id check cannot tell node 3 of this cluster from
 * node 3 of another one at the same address. Named clusters refuse each other's nodes: here node 3
 * names another cluster than nodes 1 and 2, as a node of a second cluster reached by a wrong
 * address would, and its answers never count.
 */
class ClusterNameTest {

    @TempDir
    Path dir;

    @Test
    void aNodeThatNamesAnotherClusterIsRefusedAndItsAnswersNeverCount() throws Exception {
        AtomicInteger started = new AtomicInteger();
        try (RaftCluster c = new RaftCluster(dir, 3, 1)) {
            // nodes start in order 1, 2, 3
            c.serverTweak = b -> b.clusterName(started.incrementAndGet() == 3 ? "staging" : "prod");
            c.start();
            int leader = c.waitForLeader(1);
            assertTrue(leader == 1 || leader == 2, "node 3 cannot reach a voter, so cannot lead: " + leader);
            RaftCluster.waitFor("the leader to report node 3", () -> c.server(leader).misaddressedNodes().containsKey(3));
            Map<Integer, String> wrong = c.server(leader).misaddressedNodes();
            assertEquals(Set.of(3), wrong.keySet());
            assertEquals("the address 127.0.0.1:" + c.server(3).replicationPort() + " of node 3 reaches a node of"
                    + " another cluster, which says: this is node 3 of cluster 'staging', not a node of cluster"
                    + " 'prod'", wrong.get(3));
            RaftCluster.waitFor("node 3 to report both others",
                    () -> c.server(3).misaddressedNodes().keySet().equals(Set.of(1, 2)));

            // writes commit on nodes 1 and 2; with the other of them stopped, nothing commits, node 3 or not
            RaftGroup g = c.group(leader, 1);
            g.submit(0, TestStateMachine.body(1), 5_000).get(10, TimeUnit.SECONDS);
            c.stopNode(leader == 1 ? 2 : 1);
            long before = g.commitIndex();
            assertThrows(Exception.class, () -> g.submit(0, TestStateMachine.body(2), 2_000).get(10, TimeUnit.SECONDS),
                    "a write committed with the leader and a node of another cluster");
            assertEquals(before, g.commitIndex());
        }
    }

    @Test
    void aBadClusterNameIsRefusedAtBuild() {
        for (String bad : new String[]{"has space", "ümlaut", "x".repeat(65)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaftServer.builder()
                    .nodeId(1).node(1, "127.0.0.1:0").dataDir(dir).clusterName(bad).buildConfig());
            assertTrue(e.getMessage().startsWith("clusterName: a cluster name"), e.getMessage());
        }
    }
}
