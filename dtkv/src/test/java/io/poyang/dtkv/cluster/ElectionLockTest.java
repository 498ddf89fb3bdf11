package io.poyang.dtkv.cluster;

import io.poyang.dtkv.client.ElectionLock;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The auto-renewing election lock: the leader keeps its lease by renewing, the other candidate
 * waits; a leader whose client can no longer reach the cluster hears onLost and stops claiming to
 * lead before the other candidate is granted the lock, with a higher fencing token; closing the
 * leader hands the leadership to the next candidate at once, without reporting a loss.
 */
class ElectionLockTest {

    @TempDir
    Path dir;

    /** What a candidate's listener heard, in order: "acquired <token>" and "lost". */
    private static final class Events implements ElectionLock.Listener {
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile long token;
        /** Runs inside onAcquired (before the event is recorded). */
        volatile Runnable onAcquiredCheck;

        @Override
        public void onAcquired(long fencingToken) {
            Runnable check = onAcquiredCheck;
            if (check != null) {
                check.run();
            }
            token = fencingToken;
            events.add("acquired " + fencingToken);
        }

        @Override
        public void onLost() {
            events.add("lost");
        }
    }

    @Test
    void theLeaderRenewsLosesItHonestlyWhenCutOffAndTheNextCandidateTakesOver() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            int raftLeader = c.leader();
            long leaseMillis = 1_500;
            // A reaches only the raft leader's node, so stopping that node cuts A off from the cluster
            KvClient aClient = c.clientOf(new KvClientConfig().timeoutMillis(2_000), raftLeader);
            KvClient bClient = c.client();
            Events aEvents = new Events();
            Events bEvents = new Events();
            ElectionLock a = aClient.electionLock("scheduler", leaseMillis, aEvents);
            ElectionLock b = bClient.electionLock("scheduler", leaseMillis, bEvents);
            a.start();
            KvTestCluster.waitFor("A to be elected", () -> a.isLeader() && aEvents.token != 0);
            b.start();

            // never two leaders by their own view, sampled throughout
            List<ElectionLock> candidates = new CopyOnWriteArrayList<>(java.util.Arrays.asList(a, b));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<String> both = new AtomicReference<>();
            Thread sampler = new Thread(() -> {
                while (!stop.get()) {
                    int leading = 0;
                    for (ElectionLock e : candidates) {
                        leading += e.isLeader() ? 1 : 0;
                    }
                    if (leading > 1) {
                        both.compareAndSet(null, leading + " candidates claimed to lead at once");
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                }
            }, "election-sampler");
            sampler.start();

            // renewals keep A's leadership for several leases while B waits in the queue
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * leaseMillis);
            while (System.nanoTime() - until < 0) {
                assertTrue(a.isLeader(), "A lost its leadership while renewing: " + aEvents.events);
                assertFalse(b.isLeader());
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
            }
            assertEquals(1, aEvents.events.size(), "A heard only its election: " + aEvents.events);
            assertTrue(bEvents.events.isEmpty(), "B heard " + bEvents.events);
            long aToken = a.fencingToken();
            assertEquals(aToken, aEvents.token);

            // A is cut off: it cannot renew, the cluster frees the lock when A's lease has run out
            AtomicReference<String> bGrantedWhileALed = new AtomicReference<>();
            bEvents.onAcquiredCheck = () -> {
                if (a.isLeader()) {
                    bGrantedWhileALed.set("B was granted the lock while A still claimed to lead");
                }
            };
            c.cluster.stopNode(raftLeader);
            KvTestCluster.waitFor("A to report the loss", () -> aEvents.events.contains("lost"));
            assertFalse(a.isLeader());
            // (the listener runs on the event executor, a moment after isLeader turns true)
            KvTestCluster.waitFor("B to be elected", () -> b.isLeader() && bEvents.token != 0);
            assertNull(bGrantedWhileALed.get());
            assertTrue(bEvents.token > aToken, "B's fencing token " + bEvents.token + " is above A's " + aToken);
            assertEquals(java.util.Arrays.asList("acquired " + aToken, "lost"), aEvents.events.subList(0, 2));

            // A knows only its node, which no longer leads once restarted: A stops competing. A third
            // candidate queues behind B; closing B hands the leadership over at once.
            a.close();
            c.cluster.startNode(raftLeader);
            Events cEvents = new Events();
            ElectionLock third = c.client().electionLock("scheduler", leaseMillis, cEvents);
            candidates.add(third);
            third.start();
            long bToken = bEvents.token;
            b.close();
            assertFalse(b.isLeader());
            KvTestCluster.waitFor("the third candidate to be elected", () -> third.isLeader() && cEvents.token != 0);
            assertTrue(cEvents.token > bToken, "its fencing token " + cEvents.token + " is above B's " + bToken);
            assertFalse(bEvents.events.contains("lost"), "close does not report a loss: " + bEvents.events);
            third.close();

            stop.set(true);
            sampler.join();
            assertNull(both.get());
            c.checkReplicasEqual();
        }
    }
}
