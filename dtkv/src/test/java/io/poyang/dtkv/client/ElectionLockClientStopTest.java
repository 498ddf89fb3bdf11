package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stopping a client releases the lock its election lock holds, so the next candidate is granted it
 * at once. The leader must stop claiming to lead before that (isLeader() false) and hear onLost;
 * before, it heard nothing and isLeader() stayed true for up to a lease next to the new leader.
 */
class ElectionLockClientStopTest {

    private static final long LEASE_MILLIS = 10_000;

    @Test
    void aLeaderWhoseClientStopsHearsOnLostAndNoLongerLeadsWhenTheNextCandidateIsGranted() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            a.start();
            b.start();
            try {
                List<String> aEvents = new CopyOnWriteArrayList<>();
                CountDownLatch aLost = new CountDownLatch(1);
                ElectionLock ea = a.electionLock("leader", LEASE_MILLIS, new ElectionLock.Listener() {
                    @Override
                    public void onAcquired(long fencingToken) {
                        aEvents.add("acquired");
                    }

                    @Override
                    public void onLost() {
                        aEvents.add("lost");
                        aLost.countDown();
                    }
                });
                ea.start();
                Await.until("a to lead", () -> ea.isLeader() && aEvents.contains("acquired"));

                AtomicReference<Boolean> aLeadingWhenBAcquired = new AtomicReference<>();
                CountDownLatch bAcquired = new CountDownLatch(1);
                ElectionLock eb = b.electionLock("leader", LEASE_MILLIS, new ElectionLock.Listener() {
                    @Override
                    public void onAcquired(long fencingToken) {
                        aLeadingWhenBAcquired.set(ea.isLeader());
                        bAcquired.countDown();
                    }

                    @Override
                    public void onLost() {
                    }
                });
                eb.start();
                Await.until("b to wait in the lock's queue", b.lock("leader")::isQueued);

                a.close();   // not ea.close(): the client goes, and its lock with it
                assertFalse(ea.isLeader(), "a still claims to lead once its client stopped and released the lock");
                assertTrue(bAcquired.await(10, TimeUnit.SECONDS), "b was not granted the lock a's client released");
                assertEquals(Boolean.FALSE, aLeadingWhenBAcquired.get(), "a claimed to lead when b was granted the lock");
                assertTrue(aLost.await(10, TimeUnit.SECONDS), "a never heard onLost after its client stopped");
                assertEquals(2, aEvents.size(), "a heard: " + aEvents);
                eb.close();
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
