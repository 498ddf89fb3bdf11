package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.client.KvWatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads and watch registrations sent to a leader whose group stopped serving while its process and
 * I/O threads go on — its group's dispatcher held by a task of the test, as in
 * {@link WritesOnAStuckLeaderTest}. The leader still answers the client's pings (the connection
 * stays open) and still takes requests into its queue; its peers elect a new leader. Reads to the
 * leader (lease reads, ReadIndex reads) and watch registrations change nothing when sent twice, so
 * once an attempt has gone unanswered for {@code readAttemptMillis} they are sent again to the leader
 * that a search hearing every node finds. Before, they went through the raft client's plain leader
 * call: a read waited out its whole deadline on the stuck leader and failed, and a watch
 * registration waited out the client's whole timeout before it was sent again. Follower reads have
 * the same attempt limit on each node they are sent to.
 */
class ReadsOnAStuckLeaderTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Makes node 1 lead (the client asks it first where the leader is, so its "I lead" tends to come
     * first and a search that ended at the first node claiming to lead would go back to it), writes
     * {@code keys} keys through {@code kv} so that the client knows node 1 as the leader.
     */
    private static void leadFromNode1(KvTestCluster c, KvClient kv, int keys) throws Exception {
        int first = c.leader();
        if (first != 1) {
            c.group(first).transferLeadership(1, 10_000).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            KvTestCluster.waitFor("node 1 to lead", () -> c.cluster.waitForLeader(1, 0) == 1);
        }
        for (int i = 0; i < keys; i++) {
            kv.put("k" + i, b("v" + i));
        }
        assertEquals(1, kv.raftClient().knownLeader(1), "the client goes to the leader");
    }

    /** Holds node {@code node}'s group dispatcher until {@code release} counts down. */
    private static void holdDispatcher(KvTestCluster c, int node, CountDownLatch release) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        c.group(node).callInGroup(() -> {
            held.countDown();
            return release.await(60, TimeUnit.SECONDS);
        });
        assertTrue(held.await(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the dispatcher was not held");
    }

    @Test
    void readsPendingOnALeaderWhoseGroupStoppedAnsweringAreServedByTheNewLeaderBeforeTheirDeadline() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            // The default attempt limit (3 s): one attempt on the stuck leader, then one to the new leader
            // within the deadline.
            long deadlineMillis = 6_000;
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(deadlineMillis), 1, 2, 3);
            int keys = 4;
            leadFromNode1(c, kv, keys);
            KvClient readIndex = kv.withReadKind(KvReadKind.READ_INDEX);

            CountDownLatch release = new CountDownLatch(1);
            try {
                holdDispatcher(c, 1, release);
                List<CompletableFuture<KvNode>> leaseReads = new ArrayList<>();
                List<CompletableFuture<KvNode>> indexReads = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    leaseReads.add(kv.getAsync("k" + i));
                    indexReads.add(readIndex.getAsync("k" + i));
                }
                CompletableFuture<List<KvNode>> listed = kv.listAsync("");
                // the new leader is not awaited first: the reads above went to the stuck one
                for (int i = 0; i < keys; i++) {
                    assertEquals("v" + i, leaseReads.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS)
                            .valueAsString(), "lease read of k" + i);
                    assertEquals("v" + i, indexReads.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS)
                            .valueAsString(), "ReadIndex read of k" + i);
                }
                assertEquals(keys, listed.get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS).size(), "the root's children");
                assertNotEquals(1, kv.raftClient().knownLeader(1), "the client reads from the new leader");
                assertTrue(c.group(1).isLeader(), "the stuck leader never learned it was replaced");
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void aWatchRegisteredWithALeaderWhoseGroupStoppedAnsweringIsRegisteredWithTheNewLeaderWithinOneAttempt()
            throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            // A registration waits up to timeoutMillis (20 s) for its answer, an attempt 2 s: the watch
            // must be served well before a first attempt as long as the timeout could have ended.
            long timeoutMillis = 20_000;
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(timeoutMillis).readAttemptMillis(2_000), 1, 2, 3);
            leadFromNode1(c, kv, 1);

            CountDownLatch release = new CountDownLatch(1);
            try {
                holdDispatcher(c, 1, release);
                LinkedBlockingQueue<KvNode> seen = new LinkedBlockingQueue<>();
                KvWatch w = kv.watch((key, node) -> seen.add(node), "k0");
                // the node that registers it first sends the key's current state
                KvNode initial = seen.poll(timeoutMillis - 5_000, TimeUnit.MILLISECONDS);
                assertNotNull(initial, "the watch was not registered with a serving leader within "
                        + (timeoutMillis - 5_000) + " ms");
                assertEquals("v0", initial.valueAsString());
                assertNotEquals(1, kv.raftClient().knownLeader(1), "the watch went to the new leader");
                // and changes made through the new leader reach it
                kv.put("k0", b("changed"));
                KvNode changed = seen.poll(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                assertNotNull(changed, "the change was not pushed");
                assertEquals("changed", changed.valueAsString());
                assertFalse(seen.stream().anyMatch(n -> !n.exists()), "the key never showed as absent: " + seen);
                assertTrue(c.group(1).isLeader(), "the stuck leader never learned it was replaced");
                w.close();
            } finally {
                release.countDown();
            }
        }
    }

    /**
     * A watch closed while its group's leader is stuck: the remove waits there unanswered. The key is
     * watched again through the new leader before the remove's attempt runs out. The remove must not
     * be sent again after it (on the old code its second copy, sent to the new leader, unregistered
     * the new watch, which then heard nothing for good).
     */
    @Test
    void aKeyWatchedAgainWhileItsUnwatchWaitsOnTheStuckLeaderStaysWatchedAfterTheUnwatchsAttemptRanOut()
            throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            long readAttemptMillis = 2_000;
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(20_000).readAttemptMillis(readAttemptMillis),
                    1, 2, 3);
            leadFromNode1(c, kv, 1);
            LinkedBlockingQueue<KvNode> first = new LinkedBlockingQueue<>();
            KvWatch w1 = kv.watch((key, node) -> first.add(node), "k0");
            assertNotNull(first.poll(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS), "registered with node 1");

            CountDownLatch release = new CountDownLatch(1);
            try {
                holdDispatcher(c, 1, release);
                KvTestCluster.waitFor("a new leader", () -> c.group(2).isLeader() || c.group(3).isLeader());
                int newLeader = c.group(2).isLeader() ? 2 : 3;
                w1.close();   // its remove goes to node 1, still the leader the client knows, and waits there
                kv.raftClient().updateLeader(1, newLeader);
                LinkedBlockingQueue<KvNode> second = new LinkedBlockingQueue<>();
                KvWatch w2 = kv.watch((key, node) -> second.add(node), "k0");
                KvNode initial = second.poll(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                assertNotNull(initial, "the new watch was not registered with the new leader");
                assertEquals("v0", initial.valueAsString());

                // The behaviour under test: what happens once the remove's attempt on node 1 has run out
                // (a second copy of it would reach the new leader a back-off pause later).
                Thread.sleep(readAttemptMillis + 1_000);

                kv.put("k0", b("changed"));
                KvNode changed = second.poll(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                assertNotNull(changed, "the change was not pushed: the watch of k0 was unregistered by the unwatch"
                        + " sent before it");
                assertEquals("changed", changed.valueAsString());
                w2.close();
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void followerReadsPendingOnANodeWhoseGroupStoppedAnsweringAreServedByAnotherNodeBeforeTheirDeadline()
            throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            long deadlineMillis = 6_000;
            int leader = c.leader();
            int stuck = leader == 3 ? 2 : 3;
            // follower reads go to the stuck node first (readNodeId), one attempt of the default 3 s there
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(deadlineMillis).readKind(KvReadKind.FOLLOWER_READ)
                    .readNodeId(stuck), 1, 2, 3);
            int keys = 4;
            for (int i = 0; i < keys; i++) {
                kv.put("k" + i, b("v" + i));
            }
            CountDownLatch release = new CountDownLatch(1);
            try {
                holdDispatcher(c, stuck, release);
                List<CompletableFuture<KvNode>> reads = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    reads.add(kv.getAsync("k" + i));
                }
                for (int i = 0; i < keys; i++) {
                    assertEquals("v" + i, reads.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS).valueAsString(),
                            "follower read of k" + i);
                }
            } finally {
                release.countDown();
            }
        }
    }
}
