package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client has one KvLock object per name, which two parts of an application may share. A tryLock
 * while another of the same object has not ended (on its way, or waiting in the queue) is refused:
 * its answer would replace the first one's wait, and nothing would ever end the first (a blocking
 * tryLock would hang for good).
 */
class KvLockOneTryLockAtATimeTest {

    @Test
    void aSecondTryLockWhileTheFirstIsOnItsWayIsRefusedAndTheFirstStillEnds() throws Exception {
        // a's answers and pushes run on this one thread; the gate holds them back until both tryLocks
        // are sent, so the first is certainly still on its way when the second is made
        ExecutorService aCallbacks = Executors.newSingleThreadExecutor();
        CountDownLatch gate = new CountDownLatch(1);
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000)
                    .callbackExecutor(aCallbacks));
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            a.start();
            b.start();
            try {
                KvLock lockB = b.lock("job");
                assertTrue(lockB.tryLock(30_000, 0));
                KvLock lockA = a.lock("job");
                aCallbacks.execute(() -> awaitQuietly(gate));
                CompletableFuture<Boolean> first = lockA.tryLockAsync(30_000, 30_000);
                CompletableFuture<Boolean> second = lockA.tryLockAsync(30_000, 30_000);
                assertTrue(second.isCompletedExceptionally(),
                        "a second tryLock of one lock object, made while the first is on its way, was accepted");
                ExecutionException refused = assertThrows(ExecutionException.class, () -> second.get(0, TimeUnit.SECONDS));
                assertInstanceOf(IllegalStateException.class, refused.getCause());
                gate.countDown();
                Await.until("a's first tryLock to be queued", lockA::isQueued);
                lockB.unlock();
                assertTrue(first.get(10, TimeUnit.SECONDS), "the first tryLock is granted when b unlocks");
                assertTrue(lockA.isHeld());
                lockA.unlock();
                assertFalse(lockA.isHeld());
            } finally {
                gate.countDown();
                a.close();
                b.close();
            }
        } finally {
            aCallbacks.shutdownNow();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
