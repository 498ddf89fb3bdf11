package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GRANTED push waits behind the client's watch listeners (they share one serial event
 * executor), so a slow listener can hold it up for longer than the lease. The client must not
 * count a lease from when it got round to the push: it would believe it holds a lock whose lease the
 * server already ended and gave to the next in line. (It asks the leader, and holds only what the
 * leader confirms, counted from when it asked.)
 *
 * <p>A waiting tryLock also asks the leader on its own after a lease with no grant, and that check,
 * which does not wait behind the listener, would find the grant within its lease and hold it before
 * the push is run. So the waiting lock holds its own checks ({@link KvLock#holdOwnChecksForTests}):
 * it can learn of its grant only by the push, and the test asserts that the push is what it heard.
 */
class KvLockGrantBehindSlowListenerTest {

    @Test
    @Timeout(30)
    void aGrantPushHeldUpByASlowWatchListenerIsNotHeldPastItsLease() throws Exception {
        long leaseMillis = 1_000;
        // a's listeners and answers: the stuck listener takes one thread, the answers run on the others
        ExecutorService aCallbacks = Executors.newFixedThreadPool(4);
        try {
            LockTestClients.withThreeClients(new KvClientConfig().callbackExecutor(aCallbacks), (a, b, c) -> {
                KvLock lockA = a.lock("mutex");
                KvLock lockB = b.lock("mutex");
                KvLock lockC = c.lock("mutex");
                lockA.holdOwnChecksForTests();
                assertTrue(lockB.tryLock(30_000, 0));
                CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(leaseMillis, 30_000);
                Await.until("a's tryLock to be queued", lockA::isQueued);
                CompletableFuture<Boolean> cWaits = lockC.tryLockAsync(30_000, 30_000);
                Await.until("c's tryLock to be queued", lockC::isQueued);

                // a's watch listener gets stuck on a change
                CountDownLatch listenerEntered = new CountDownLatch(1);
                CountDownLatch releaseListener = new CountDownLatch(1);
                KvWatch watch = a.watch((key, node) -> {
                    if (node.exists()) {
                        listenerEntered.countDown();
                        try {
                            releaseListener.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }, "flag");
                b.put("flag", "on");
                assertTrue(listenerEntered.await(10, TimeUnit.SECONDS), "a's listener was not called");

                // b's unlock grants a (its push waits behind the listener); a's lease runs out on the
                // server, which hands the lock on to c
                lockB.unlock();
                // a's grant was pushed when b's unlock was applied, with b's answer: by its own clock a's
                // lease ends about leaseMillis after that (give it half a second for transit)
                long unlockedNanos = System.nanoTime();
                assertTrue(cWaits.get(10, TimeUnit.SECONDS), "c was not granted the lock after a's lease");
                Await.until("a's lease to be over by its own clock", () -> System.nanoTime() - unlockedNanos
                        > TimeUnit.MILLISECONDS.toNanos(leaseMillis + 500));
                assertEquals(0, lockA.grantPushesHeardForTests(), "a's grant push ran before its listener returned");
                assertTrue(lockA.isQueued(), "a's wait ended before it heard of its grant");

                // a learns of its grant only now, by the push: it must not take it for a hold of the lock c holds
                AtomicBoolean overlap = new AtomicBoolean();
                aWaits.thenAccept(granted -> overlap.compareAndSet(false, granted && lockA.isHeld() && lockC.isHeld()));
                releaseListener.countDown();
                Await.until("a to hear of its grant by push", () -> lockA.grantPushesHeardForTests() > 0);
                // a asks the leader whether it holds; the answer comes in
                Await.until("the leader's answer to a's question", () -> !lockA.checkOutstandingForTests());
                assertEquals(1, lockA.grantPushesHeardForTests());
                assertTrue(lockC.isHeld());
                assertFalse(lockA.isHeld(), "a holds the lock c holds, on a grant whose lease was over");
                assertFalse(overlap.get(), "a's tryLock returned true while c held the lock");
                assertFalse(aWaits.isDone(), "a's tryLock ended although its wait was not over");

                // the leader queued a again: c's unlock grants it, pushed and confirmed
                watch.close();
                lockC.unlock();
                assertTrue(aWaits.get(10, TimeUnit.SECONDS), "a was not granted the lock after c unlocked");
                assertEquals(2, lockA.grantPushesHeardForTests());
                assertTrue(lockA.isHeld());
                lockA.unlock();
            });
        } finally {
            aCallbacks.shutdownNow();
        }
    }
}
