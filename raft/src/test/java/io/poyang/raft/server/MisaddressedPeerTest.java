package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replication address that reaches another node than the one it is for (here: node A's address
 * spelt "localhost:port" and "LOCALHOST:port" given as the addresses of nodes B and D, which gets
 * past the exact-text check of setNodeAddress) must not make A's acknowledgements count for B and D: the handshake names the
 * node meant and A refuses it.
 */
class MisaddressedPeerTest {

    @TempDir
    Path dir;

    @Test
    void anAddressThatReachesAnotherNodeDoesNotCountThatNodesAcknowledgementsTwice() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 5, 1).start()) {
            int leader = c.waitForLeader(1);
            int[] others = IntStream.rangeClosed(1, 5).filter(n -> n != leader).toArray();
            int a = others[0];
            int b = others[1];
            int d = others[2];
            // two more spellings of node a's address (host names are not case-sensitive)
            c.server(leader).setNodeAddress(b, "localhost:" + c.server(a).replicationPort());
            c.server(leader).setNodeAddress(d, "LOCALHOST:" + c.server(a).replicationPort());
            c.stopNode(b);
            c.stopNode(d);
            c.stopNode(others[3]);

            // two of five nodes run: no write may commit, however many times node a answers
            RaftGroup g = c.group(leader, 1);
            CompletableFuture<?> w = g.submit(0, TestStateMachine.body(1), 3_000);
            assertThrows(ExecutionException.class, () -> w.get(20, TimeUnit.SECONDS),
                    "the write committed on two of five nodes");
            assertTrue(g.commitIndex() < g.lastLogIndex(), "commit " + g.commitIndex() + ", log " + g.lastLogIndex());

            // the leader says which addresses are wrong, and why
            RaftCluster.waitFor("the leader to report both wrong addresses",
                    () -> c.server(leader).misaddressedNodes().keySet().equals(java.util.Set.of(b, d)));
            Map<Integer, String> wrong = c.server(leader).misaddressedNodes();
            assertEquals("the address localhost:" + c.server(a).replicationPort() + " of node " + b + " reaches node " + a,
                    wrong.get(b));
            assertEquals("the address LOCALHOST:" + c.server(a).replicationPort() + " of node " + d + " reaches node " + a,
                    wrong.get(d));

            // node b back at its own address: a majority again, the write commits, b is no longer listed
            c.restartNode(b);
            RaftCluster.waitFor("the entry to commit with nodes " + leader + ", " + a + ", " + b,
                    () -> g.commitIndex() >= g.lastLogIndex());
            assertEquals(java.util.Set.of(d), c.server(leader).misaddressedNodes().keySet());
        }
    }
}
