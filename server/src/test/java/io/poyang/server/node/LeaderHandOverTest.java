package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.server.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader stopped gracefully hands its group to another voter first: with an election timeout of
 * 4 s, the group has a new leader well before any follower would have timed out and stood; and
 * when the group has a preferred leader, straight to that one.
 */
class LeaderHandOverTest {

    private static final long ELECTION_TIMEOUT_MILLIS = 4_000;

    @TempDir
    Path tmp;
    private InProcessNodes cluster;

    @AfterEach
    void stopAll() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aStoppingLeaderHandsOverBeforeAnElectionTimeout() throws Exception {
        cluster = new InProcessNodes(tmp, 3,
                Collections.singletonMap("electionTimeoutMillis", String.valueOf(ELECTION_TIMEOUT_MILLIS)));
        PoyangNode leader = cluster.awaitLeader(null, 60_000);
        KvClientConfig cfg = cluster.clientConfig().timeoutMillis(30_000);
        try (KvClient kv = new KvClient(cfg)) {
            kv.start();
            kv.put("before", "1");
            long start = System.nanoTime();
            CompletableFuture<Void> stopping = CompletableFuture.runAsync(leader::stop,
                    task -> new Thread(task, "stop").start());   // blocks: the client's callbacks use the common pool
            PoyangNode next = cluster.awaitLeader(leader, 30_000);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < ELECTION_TIMEOUT_MILLIS - 1_000, "a new leader after " + tookMillis
                    + " ms: handed over, not elected after a timeout");
            stopping.get(60, TimeUnit.SECONDS);
            assertTrue(next != leader);
            kv.put("after", "2");   // the client follows the new leader
            assertEquals("1", kv.getString("before"));
        }
    }

    @Test
    void aStoppingLeaderHandsOverToThePreferredLeaderDirectly() throws Exception {
        cluster = new InProcessNodes(tmp, 3,
                Collections.singletonMap("electionTimeoutMillis", String.valueOf(ELECTION_TIMEOUT_MILLIS)));
        PoyangNode first = cluster.nodes().get(0);
        PoyangNode third = cluster.nodes().get(2);
        PoyangNode leader = cluster.awaitLeader(null, 60_000);
        if (leader == first) {
            // node 1 may have led for a while already: its leadership must be fresh (below)
            first.raftServer().group(1).transferLeadership(2, 30_000).get(60, TimeUnit.SECONDS);
            leader = cluster.awaitLeader(first, 30_000);
        }
        leader.raftServer().group(1).transferLeadership(1, 30_000).get(60, TimeUnit.SECONDS);
        RaftGroup g = first.raftServer().group(1);
        Await.until("node 1 to lead group 1 with both followers caught up", 30_000, () -> g.isLeader()
                && g.detailedStatus().get().followers().stream().allMatch(f -> f.lag() == 0));
        // node 3 preferred while node 1 has led for less than an election timeout: its keeper has not
        // moved the leadership yet, so it is the stop that hands it over. Nodes 2 and 3 are equally
        // caught up; without the preference the first of them, node 2, would be chosen.
        for (PoyangNode n : cluster.nodes()) {
            n.raftServer().group(1).setPreferredLeader(3);
        }
        int termBefore = g.term();
        first.stop();
        PoyangNode next = cluster.awaitLeader(first, 30_000);
        assertEquals(3, next.config().nodeId, "the group was handed to node " + next.config().nodeId
                + ", not to its preferred leader");
        assertEquals(termBefore + 1, third.raftServer().group(1).term(),
                "node 3 took over one term after node 1's: no other leader came between");
    }
}
