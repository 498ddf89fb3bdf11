package io.poyang.dtkv.cluster;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * DtKV reads go through raft's read path: every read kind sees every write acknowledged before it
 * was sent (follower reads served by the followers themselves), reads waiting together share
 * confirmations, a leader cut off by a partition serves no ReadIndex read, and neither it nor a
 * cut-off follower answers a read with the value a newer acknowledged write replaced.
 */
class LinearizableReadTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static long counter(KvNode n) {
        return n.exists() ? Long.parseLong(n.valueAsString()) : 0;
    }

    /**
     * A cluster whose leader stays put on a loaded machine: the read counters checked below belong to
     * the roles the nodes have when the test starts.
     */
    private KvTestCluster steadyCluster() {
        return new KvTestCluster(dir, 3, KvTestCluster.testConfig().electionTimeoutMillis(3_000), null).start();
    }

    @Test
    void everyReadKindSeesEveryWriteAcknowledgedBeforeItWasSent() throws Exception {
        try (KvTestCluster c = steadyCluster()) {
            int leader = c.leader();
            int term = c.group(leader).term();
            int[] followers = Arrays.stream(new int[]{1, 2, 3}).filter(n -> n != leader).toArray();
            KvClient writer = c.client();
            List<KvClient> readers = new ArrayList<>();
            readers.add(c.client());                                              // lease read
            readers.add(c.client().withReadKind(KvReadKind.READ_INDEX));
            for (int f : followers) {                                             // follower reads pinned to each follower
                readers.add(c.clientOf(new KvClientConfig().readKind(KvReadKind.FOLLOWER_READ).readNodeId(f), 1, 2, 3));
            }
            for (KvClient r : readers) {
                r.waitForConnected(KvTestCluster.WAIT_SECONDS * 1000);
            }
            readers.add(c.client().withReadKind(KvReadKind.FOLLOWER_READ));        // follower reads in turn
            long[] followerReadsBefore = new long[4];
            for (int f : followers) {
                followerReadsBefore[f] = c.group(f).readCounters()[3];
            }
            long[] leaderBefore = c.group(leader).readCounters();

            writer.put("reg", b("0"));
            AtomicLong acked = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            for (KvClient r : readers) {
                Thread t = new Thread(() -> {
                    try {
                        while (!done.get() && failure.get() == null) {
                            long before = acked.get();
                            long seen = counter(r.get("reg"));
                            if (seen < before) {
                                throw new AssertionError(r.readKind() + " read returned " + seen + " after write "
                                        + before + " was acknowledged");
                            }
                            List<KvNode> batch = r.batchGet(Arrays.asList("reg", "absent"));
                            if (counter(batch.get(0)) < before || batch.get(1).exists()) {
                                throw new AssertionError(r.readKind() + " batchGet returned " + batch);
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "reader-" + r.readKind());
                t.start();
                threads.add(t);
            }
            // at least 3 s and 30 writes, however slow the machine
            long endNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            long i = 0;
            while ((System.nanoTime() - endNanos < 0 || i < 30) && failure.get() == null) {
                writer.put("reg", b(Long.toString(++i)));
                acked.set(i);
                // a read sent after the acknowledgement sees it, whichever kind and node serves it
                for (KvClient r : readers) {
                    assertTrue(counter(r.get("reg")) >= i, r.readKind() + " read missed acknowledged write " + i);
                }
            }
            done.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(KvTestCluster.WAIT_SECONDS));
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            List<KvNode> listed = readers.get(2).list("");
            assertEquals("reg", listed.get(0).key());
            assertEquals(i, counter(listed.get(0)));

            assertEquals(term, c.group(leader).term(), "the leader changed during the test; the read counters"
                    + " below would not say who served what");
            for (int f : followers) {
                assertTrue(c.group(f).readCounters()[3] > followerReadsBefore[f], "node " + f
                        + " served no follower read itself");
            }
            long[] leaderAfter = c.group(leader).readCounters();
            assertTrue(leaderAfter[0] > leaderBefore[0], "the leader served no read under its lease");
            assertTrue(leaderAfter[1] > leaderBefore[1], "the leader confirmed no read with a heartbeat round");
            assertTrue(leaderAfter[5] > leaderBefore[5], "the leader answered no follower's read-index request");
            c.checkReplicasEqual();
        }
    }

    @Test
    void readsWaitingTogetherShareOneConfirmation() throws Exception {
        try (KvTestCluster c = steadyCluster()) {
            int leader = c.leader();
            int follower = leader == 1 ? 2 : 1;
            KvClient kv = c.client();
            kv.put("k", b("v"));
            int reads = 2_000;

            long[] before = c.group(leader).readCounters();
            List<CompletableFuture<KvNode>> fs = new ArrayList<>();
            KvClient readIndex = kv.withReadKind(KvReadKind.READ_INDEX);
            for (int i = 0; i < reads; i++) {
                fs.add(readIndex.getAsync("k"));
            }
            for (CompletableFuture<KvNode> f : fs) {
                assertEquals("v", f.get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS).valueAsString());
            }
            long[] after = c.group(leader).readCounters();
            long confirmed = after[1] - before[1];
            long rounds = after[2] - before[2];
            assertEquals(reads, confirmed, "every ReadIndex read was confirmed by a heartbeat round");
            assertTrue(rounds < confirmed, rounds + " heartbeat rounds for " + confirmed + " reads: none shared");

            long[] fBefore = c.group(follower).readCounters();
            KvClient followerReads = c.clientOf(new KvClientConfig().readKind(KvReadKind.FOLLOWER_READ)
                    .readNodeId(follower), 1, 2, 3);
            followerReads.waitForConnected(KvTestCluster.WAIT_SECONDS * 1000);   // else reads go to whichever node connects first
            fs.clear();
            for (int i = 0; i < reads; i++) {
                fs.add(followerReads.getAsync("k"));
            }
            for (CompletableFuture<KvNode> f : fs) {
                assertEquals("v", f.get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS).valueAsString());
            }
            long[] fAfter = c.group(follower).readCounters();
            long served = fAfter[3] - fBefore[3];
            long fetches = fAfter[4] - fBefore[4];
            assertEquals(reads, served, "the follower served every follower read itself");
            assertTrue(fetches < served, fetches + " read-index requests for " + served + " follower reads: none shared");
        }
    }

    @Test
    void followerReadsMoveToAnotherNodeWhenTheirNodeStops() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            int leader = c.leader();
            int follower = leader == 1 ? 2 : 1;
            KvClient kv = c.client();
            KvClient pinned = c.clientOf(new KvClientConfig().readKind(KvReadKind.FOLLOWER_READ).readNodeId(follower),
                    1, 2, 3);
            pinned.waitForConnected(KvTestCluster.WAIT_SECONDS * 1000);
            kv.put("k", b("1"));
            assertEquals("1", pinned.getString("k"));
            long servedBefore = c.group(follower).readCounters()[3];
            assertEquals("1", pinned.getString("k"));
            assertTrue(c.group(follower).readCounters()[3] > servedBefore, "the pinned follower served the read");

            c.cluster.stopNode(follower);
            kv.put("k", b("2"));
            for (int i = 0; i < 20; i++) {
                assertEquals("2", pinned.getString("k"), "a follower read after its node stopped");
            }
            c.cluster.startNode(follower);
            KvTestCluster.waitFor("the follower to serve the pinned reads again", () -> {
                try {
                    long before = c.group(follower).readCounters()[3];
                    return "2".equals(pinned.getString("k")) && c.group(follower).readCounters()[3] > before;
                } catch (RuntimeException e) {
                    return false;
                }
            });
            c.checkReplicasEqual();
        }
    }

    @Test
    void aLeaderCutOffByAPartitionServesNoReadIndexReadAndNoStaleRead() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            KvClient kv = c.client();
            kv.put("k", b("old"));
            int oldLeader = c.leader();
            // clients that can reach only the old leader, one per read kind
            KvClient[] stale = new KvClient[3];
            for (KvReadKind kind : KvReadKind.values()) {
                stale[kind.ordinal()] = c.clientOf(new KvClientConfig().readKind(kind).timeoutMillis(2_000), oldLeader);
                assertEquals("old", stale[kind.ordinal()].get("k").valueAsString());
            }

            c.faults.isolate(oldLeader);
            // while it still believes it leads: a ReadIndex read needs a majority to confirm, so it is never served
            try {
                KvNode n = stale[KvReadKind.READ_INDEX.ordinal()].get("k");
                fail("a READ_INDEX read on the cut-off leader was served: " + n);
            } catch (PoyangTimeoutException expected) {
                // not confirmed before the deadline (or the node stepped down and the client knows no other)
            }
            KvTestCluster.waitFor("a new leader on the majority side", () -> {
                for (int n = 1; n <= 3; n++) {
                    if (n != oldLeader && c.group(n).isLeader()) {
                        return true;
                    }
                }
                return false;
            });
            int[] majority = Arrays.stream(new int[]{1, 2, 3}).filter(n -> n != oldLeader).toArray();
            KvClient majorityClient = c.clientOf(new KvClientConfig(), majority);
            majorityClient.put("k", b("new"));      // acknowledged by the majority without the old leader

            for (KvClient s : stale) {
                try {
                    KvNode n = s.get("k");
                    fail(s.readKind() + " read on the cut-off old leader answered " + n + " after 'new' was acknowledged");
                } catch (PoyangTimeoutException expected) {
                    // it could not confirm the read, and the client could reach no other node
                }
            }
            for (KvReadKind kind : KvReadKind.values()) {
                assertEquals("new", majorityClient.withReadKind(kind).get("k").valueAsString(), kind
                        + " on the majority side");
            }

            c.faults.heal();
            KvTestCluster.waitFor("the old leader to serve reads again", () -> {
                try {
                    return "new".equals(stale[KvReadKind.FOLLOWER_READ.ordinal()].get("k").valueAsString());
                } catch (RuntimeException e) {
                    return false;
                }
            });
            c.checkReplicasEqual();
        }
    }

    @Test
    void aFollowerCutOffFromTheLeaderServesNoStaleFollowerRead() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            KvClient kv = c.client();
            kv.put("k", b("old"));
            int leader = c.leader();
            int follower = leader == 3 ? 2 : 3;
            KvClient viaFollower = c.clientOf(new KvClientConfig().readKind(KvReadKind.FOLLOWER_READ)
                    .timeoutMillis(2_000), follower);
            KvTestCluster.waitFor("the follower to apply 'old'", () -> {
                try {
                    return "old".equals(viaFollower.get("k").valueAsString());
                } catch (RuntimeException e) {
                    return false;
                }
            });

            c.faults.isolate(follower);
            kv.put("k", b("new"));
            assertNotEquals(follower, c.leader());
            try {
                KvNode n = viaFollower.get("k");
                fail("the cut-off follower answered " + n + " after 'new' was acknowledged");
            } catch (PoyangTimeoutException expected) {
                // no leader to confirm a read index with
            }

            c.faults.heal();
            KvTestCluster.waitFor("the follower to serve reads again", () -> {
                try {
                    return "new".equals(viaFollower.get("k").valueAsString());
                } catch (RuntimeException e) {
                    return false;
                }
            });
            c.checkReplicasEqual();
        }
    }
}
