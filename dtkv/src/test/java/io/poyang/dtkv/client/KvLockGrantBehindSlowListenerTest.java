package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GRANTED push waits behind the client's watch listeners (they share one serial event
 * executor), so a slow listener can hold it up for longer than the lease. The client must not
 * count a lease from when it got round to the push: it would believe it holds a lock whose lease the
 * server already ended and gave to the next in line. (It asks the leader, and holds only what the
 * leader confirms, counted from when it asked.)
 */
class KvLockGrantBehindSlowListenerTest {

    @Test
    @Timeout(30)
    void aGrantHeldUpByASlowWatchListenerIsNotHeldPastItsLease() throws Exception {
        long leaseMillis = 1_000;
        ExecutorService callbacks = Executors.newFixedThreadPool(4);
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()));
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).callbackExecutor(callbacks));
            KvClient c = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()));
            a.start();
            b.start();
            c.start();
            try {
                KvLock lockA = a.lock("mutex");
                KvLock lockB = b.lock("mutex");
                KvLock lockC = c.lock("mutex");
                assertTrue(lockA.tryLock(30_000, 0));
                CompletableFuture<Boolean> bWaits = lockB.tryLockAsync(leaseMillis, 30_000);
                Await.until("b's tryLock to be queued", lockB::isQueued);
                CompletableFuture<Boolean> cWaits = lockC.tryLockAsync(30_000, 30_000);
                Await.until("c's tryLock to be queued", lockC::isQueued);

                // b's watch listener gets stuck on a change
                CountDownLatch listenerEntered = new CountDownLatch(1);
                CountDownLatch releaseListener = new CountDownLatch(1);
                KvWatch watch = b.watch((key, node) -> {
                    if (node.exists()) {
                        listenerEntered.countDown();
                        try {
                            releaseListener.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }, "flag");
                a.put("flag", "on");
                assertTrue(listenerEntered.await(10, TimeUnit.SECONDS), "b's listener was not called");

                // a's unlock grants b (its push waits behind the listener); b's lease runs out on the
                // server, which hands the lock on to c
                lockA.unlock();
                // b's grant was pushed when a's unlock was applied, with a's answer: by its own clock b's
                // lease ends about leaseMillis after that (give it half a second for transit)
                long unlockedNanos = System.nanoTime();
                assertTrue(cWaits.get(10, TimeUnit.SECONDS), "c was not granted the lock after b's lease");
                Await.until("b's lease to be over by its own clock", () -> System.nanoTime() - unlockedNanos
                        > TimeUnit.MILLISECONDS.toNanos(leaseMillis + 500));

                // b learns of its grant only now: it must not take it for a hold of the lock c holds
                AtomicBoolean overlap = new AtomicBoolean();
                bWaits.thenAccept(granted -> overlap.compareAndSet(false, granted && lockB.isHeld() && lockC.isHeld()));
                releaseListener.countDown();
                LockPushes.eventsRun(b);
                // b asks the leader whether it holds (unless it had this grant already); the answer comes in
                Await.until("the leader's answer to b's question", () -> !lockB.checkOutstandingForTests());
                assertTrue(lockC.isHeld());
                assertFalse(lockB.isHeld(), "b holds the lock c holds, on a grant whose lease was over");
                assertFalse(overlap.get(), "b's tryLock returned true while c held the lock");
                watch.close();
                lockC.unlock();
            } finally {
                a.close();
                b.close();
                c.close();
            }
        } finally {
            callbacks.shutdownNow();
        }
    }
}
