package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/**
 * A GRANTED push of a grant a lock object already had (a new leader, or another replica, pushes it
 * again) must not be taken for the grant of a later tryLock waiting in the queue: the lock is then
 * someone else's.
 */
class KvLockStaleGrantTest {

    @Test
    void anOldGrantPushedAgainDoesNotGrantALaterWait() throws Exception {
        LockTestClients.withTwoClients((a, b) -> {
            KvLock lockA = a.lock("mutex");
            assertTrue(lockA.tryLock(30_000, 0));
            long oldToken = lockA.fencingToken();
            lockA.unlock();
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            // a waits in the queue behind b
            CompletableFuture<Boolean> waiting = lockA.tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            // the grant a had before, pushed again
            LockPushes.push(a, LockPushes.granted(a, "mutex", oldToken));
            assertFalse(waiting.isDone(), "an old grant pushed again granted a later wait");
            assertEquals(0, lockA.fencingToken());
            // b's unlock hands it over for real, with a newer token
            lockB.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            assertTrue(lockA.fencingToken() > oldToken);
            lockA.unlock();
        });
    }

    /**
     * A grant this object never took (its wait had ended and its UNLOCK gave it back), pushed late
     * by a replica that applies behind or replays its log, while a later tryLock waits: its token is
     * above every token the object had, but below the entry that queued the wait.
     */
    @Test
    void aGrantFromBeforeTheWaitWasQueuedDoesNotGrantIt() throws Exception {
        LockTestClients.withTwoClients((a, b) -> {
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            // an index before a's wait: where a grant to a, ignored, could have been
            long before = a.put("elsewhere", "x".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            KvLock lockA = a.lock("mutex");
            CompletableFuture<Boolean> waiting = lockA.tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            LockPushes.push(a, LockPushes.granted(a, "mutex", before));
            assertFalse(waiting.isDone(), "a grant from before the wait was queued granted it");
            assertFalse(lockA.isHeld());
            lockB.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            assertTrue(lockA.fencingToken() > before);
            lockA.unlock();
        });
    }
}
