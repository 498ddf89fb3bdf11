package io.poyang.dtkv.cluster;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader whose group stops answering writes while its process and I/O threads go on — its group's
 * dispatcher stuck (here held by a task of the test), as with a disk that hangs the sync or a leader
 * that lost its group but not its process. Its I/O thread still answers the client's pings, so the
 * heartbeat never closes the connection, and it still takes writes into its queue; its peers, hearing
 * no heartbeats, elect a new leader. KvClient's writes (all exactly-once: its session and seq) are
 * sent again to the new leader once an attempt has gone unanswered for {@code writeAttemptMillis},
 * and applied once within their deadline. Before, they went through the raft client's plain leader
 * call, waited out their whole deadline on the stuck leader and ended outcome-unknown.
 */
class WritesOnAStuckLeaderTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void writesPendingOnALeaderWhoseGroupStoppedAnsweringAreAppliedOnceByTheNewLeaderBeforeTheirDeadline()
            throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            // The default attempt limit (3 s): one attempt on the stuck leader, then one to the new leader
            // within the deadline. There is no time for a third: the leader search after the unanswered
            // attempt must take the new leader, though the stuck one still says it leads (in its old term).
            long deadlineMillis = 6_000;
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(deadlineMillis), 1, 2, 3);
            // Node 1 leads: the client asks it first where the leader is, so its answer ("I lead") tends to
            // come first, and a search that ended at the first node claiming to lead would go back to it.
            int first = c.leader();
            if (first != 1) {
                c.group(first).transferLeadership(1, 10_000).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                KvTestCluster.waitFor("node 1 to lead", () -> c.cluster.waitForLeader(1, 0) == 1);
            }
            int keys = 8;
            for (int i = 0; i < keys; i++) {
                kv.put("k" + i, b("0"));
            }
            int oldLeader = 1;
            assertEquals(oldLeader, kv.raftClient().knownLeader(1), "the client writes to the leader");

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try {
                c.group(oldLeader).callInGroup(() -> {
                    held.countDown();
                    return release.await(60, TimeUnit.SECONDS);
                });
                assertTrue(held.await(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the dispatcher was not held");
                // Compare-and-sets: a second application of one would fail (CAS_MISMATCH) and answer
                // false, so every answer true and every value as set means each was applied once.
                List<CompletableFuture<Boolean>> pending = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    pending.add(kv.compareAndSetAsync("k" + i, b("0"), b("1")));
                }
                // the new leader is not awaited first: the writes above went to the stuck one
                for (int i = 0; i < keys; i++) {
                    assertTrue(pending.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS),
                            "compare-and-set of k" + i);
                }
                assertNotEquals(oldLeader, kv.raftClient().knownLeader(1), "the client writes to the new leader");
                assertTrue(c.group(oldLeader).isLeader(), "the stuck leader never learned it was replaced");
            } finally {
                release.countDown();
            }
            for (int i = 0; i < keys; i++) {
                assertEquals("1", kv.get("k" + i).valueAsString(), "k" + i);
            }
            c.checkReplicasEqual();
        }
    }
}
