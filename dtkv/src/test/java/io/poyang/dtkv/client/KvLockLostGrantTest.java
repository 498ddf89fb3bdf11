package io.poyang.dtkv.client;

import io.poyang.net.ConnectionEvents;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GRANTED push is best effort: lost (a connection blip as the holder unlocks), nothing sends it
 * again. The waiting client must still find out it holds the lock, rather than wait out its whole
 * wait while the lock sits unused.
 */
class KvLockLostGrantTest {

    @Test
    @Timeout(60)
    void aLostGrantPushIsFoundByAskingOnceTheWaitPassedALease() throws Exception {
        KvLockLateGrantTest.withThreeClients((a, lossy, b, c) -> {
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(2_000, 60_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            lockB.unlock();
            Await.until("a's grant to have been pushed (and lost)", () -> !lossy.lost.isEmpty());
            // within about a lease, not after the 60 s wait
            assertTrue(aWaits.get(6, TimeUnit.SECONDS));
            assertTrue(lockA.isHeld());
            assertFalse(c.lock("mutex").tryLock(30_000, 0), "a holds by its view, but the server gave the lock away");
            lockA.unlock();
        });
    }

    @Test
    @Timeout(60)
    void aLostGrantPushIsFoundWhenAConnectionComesBack() throws Exception {
        KvLockLateGrantTest.withThreeClients((a, lossy, b, c) -> {
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            // a lease of 30 s: a's own check after a lease would come only after the test's deadline
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(30_000, 60_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            lockB.unlock();
            Await.until("a's grant to have been pushed (and lost)", () -> !lossy.lost.isEmpty());
            ConnectionEvents.fireReconnected(a.raftClient().network());
            assertTrue(aWaits.get(5, TimeUnit.SECONDS));
            assertTrue(lockA.isHeld());
            assertTrue(lockA.fencingToken() >= lossy.lost.get(0).fencingToken());
            assertFalse(c.lock("mutex").tryLock(30_000, 0), "a holds by its view, but the server gave the lock away");
            lockA.unlock();
        });
    }
}
