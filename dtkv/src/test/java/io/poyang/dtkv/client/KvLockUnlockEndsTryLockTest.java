package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code unlock()} releases the lock or leaves its queue, and so ends this object's tryLock that has
 * not ended yet (on its way, or waiting): that tryLock returns false, and a grant that crosses the
 * unlock — given back by it on the server — is not taken as held. Otherwise the client believes it
 * holds a lock the server released or gave to another client.
 */
class KvLockUnlockEndsTryLockTest {

    private static final long LEASE_MILLIS = 30_000;
    /** A wait no test runs into: only the unlock can end it. */
    private static final long LONG_WAIT_MILLIS = 600_000;

    /** The usual pattern: a tryLock that takes too long, then unlock() in a finally. */
    @Test
    void aGrantOfATryLockOnItsWayWhenUnlockIsCalledIsNotHeld() throws Exception {
        // a's answers run on this one thread; the gate holds the tryLock's answer back until unlock() was called
        ExecutorService aCallbacks = Executors.newSingleThreadExecutor();
        CountDownLatch gate = new CountDownLatch(1);
        withClients(aCallbacks, (a, b, c) -> {
            KvLock lockA = a.lock("mutex");
            a.put("warm", "up".getBytes(StandardCharsets.UTF_8));   // a knows the leader: both go out on one connection, in order
            aCallbacks.execute(() -> awaitQuietly(gate));
            CompletableFuture<Boolean> onItsWay = lockA.tryLockAsync(LEASE_MILLIS, 0);   // free: granted when applied
            CompletableFuture<Void> unlocked = lockA.unlockAsync();                        // applied right after it
            gate.countDown();
            unlocked.get(10, TimeUnit.SECONDS);
            boolean granted = onItsWay.get(10, TimeUnit.SECONDS);
            assertTrue(b.lock("mutex").tryLock(LEASE_MILLIS, 0), "the unlock released the grant on the server");
            assertFalse(lockA.isHeld(), "a believes it holds the lock b holds");
            assertFalse(granted, "a tryLock ended by unlock() reported a grant");
            b.lock("mutex").unlock();
        }, gate);
    }

    /** A waiting tryLock whose GRANTED push is still on its way when unlock() is called. */
    @Test
    void aGrantThatCrossesTheUnlockOfAWaitingTryLockIsNotHeld() throws Exception {
        // two threads: the gate blocks a's event executor (pushes), answers still run on the other
        ExecutorService aCallbacks = Executors.newFixedThreadPool(2);
        CountDownLatch gate = new CountDownLatch(1);
        withClients(aCallbacks, (a, b, c) -> {
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            KvLock lockC = c.lock("mutex");
            assertTrue(lockB.tryLock(LEASE_MILLIS, 0));
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(LEASE_MILLIS, LONG_WAIT_MILLIS);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            CompletableFuture<Boolean> cWaits = lockC.tryLockAsync(LEASE_MILLIS, LONG_WAIT_MILLIS);
            Await.until("c's tryLock to be queued", lockC::isQueued);

            // b's unlock grants a; a's GRANTED push waits behind the gate
            a.shared.eventExecutor.execute(() -> awaitQuietly(gate));
            lockB.unlock();
            // a gives up before it hears of the grant: its unlock releases that grant and c gets the lock
            lockA.unlock();
            assertTrue(cWaits.get(10, TimeUnit.SECONDS), "c was not granted the lock a gave back");

            gate.countDown();
            CountDownLatch pushesRun = new CountDownLatch(1);
            a.shared.eventExecutor.execute(pushesRun::countDown);
            assertTrue(pushesRun.await(10, TimeUnit.SECONDS));
            assertFalse(aWaits.get(10, TimeUnit.SECONDS), "the grant a's unlock gave back ended a's tryLock as granted");
            assertFalse(lockA.isHeld(), "a believes it holds the lock c holds");
            assertTrue(lockC.isHeld());
            lockC.unlock();
        }, gate);
    }

    /** With no grant crossing it, unlock() ends the wait too (not the wait timer, a whole wait later). */
    @Test
    void anUnlockEndsAWaitingTryLockWithFalse() throws Exception {
        ExecutorService aCallbacks = Executors.newFixedThreadPool(2);
        CountDownLatch noGate = new CountDownLatch(0);
        withClients(aCallbacks, (a, b, c) -> {
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(LEASE_MILLIS, 0));
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(LEASE_MILLIS, LONG_WAIT_MILLIS);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            lockA.unlock();
            assertFalse(aWaits.get(10, TimeUnit.SECONDS), "the waiting tryLock did not end with false at unlock()");
            assertFalse(lockA.isQueued());
            assertFalse(lockA.tryLock(LEASE_MILLIS, 0), "b still holds it; a may ask again at once");
            lockB.unlock();
            // a left the queue on the server: b's unlock granted nobody
            assertTrue(c.lock("mutex").tryLock(LEASE_MILLIS, 0));
            c.lock("mutex").unlock();
        }, noGate);
    }

    /** Three clients of one single-node cluster; a's callbacks run on {@code aCallbacks}. */
    private static void withClients(ExecutorService aCallbacks, LockTestClients.ThreeClients test, CountDownLatch gate)
            throws Exception {
        try {
            LockTestClients.withThreeClients(new KvClientConfig().callbackExecutor(aCallbacks), (a, b, c) -> {
                try {
                    test.run(a, b, c);
                } finally {
                    gate.countDown();   // a failed assertion must not leave a's executor blocked for the stop
                }
            });
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
