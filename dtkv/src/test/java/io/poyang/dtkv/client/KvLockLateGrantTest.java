package io.poyang.dtkv.client;

import io.poyang.dtkv.KvLockEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every replica pushes the grants it applies, so a replica that applies behind (after a partition,
 * or replaying its log) can push a waiting client the grant of its current wait after that grant's
 * lease ran out and the lock went to the next in line. The client must not take such a push for a
 * grant: it holds only what the leader confirms.
 */
class KvLockLateGrantTest {

    /**
     * a's grant is pushed while a cannot hear it (lost, as over a partition); its short lease runs
     * out and c is granted; then the push comes late, as from a lagging replica.
     */
    @Test
    @Timeout(60)
    void aLateGrantPushWhoseLeaseRanOutDoesNotGrantTheWait() throws Exception {
        withThreeClients((a, lossy, b, c) -> {
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            KvLock lockC = c.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(300, 30_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            CompletableFuture<Boolean> cWaits = lockC.tryLockAsync(30_000, 30_000);
            Await.until("c's tryLock to be queued", lockC::isQueued);

            // b's unlock grants a (a does not hear of it); a's 300 ms lease runs out and c is granted
            lockB.unlock();
            assertTrue(cWaits.get(10, TimeUnit.SECONDS), "c was not granted the lock after a's lease");
            Await.until("a's grant to have been pushed (and lost)", () -> !lossy.lost.isEmpty());
            KvLockEvent late = lossy.lost.get(0);
            assertTrue(late.fencingToken() < lockC.fencingToken());

            // the grant reaches a only now
            AtomicBoolean overlap = new AtomicBoolean();
            aWaits.thenAccept(ok -> overlap.compareAndSet(false, ok && lockA.isHeld() && lockC.isHeld()));
            LockPushes.push(a, late);
            assertFalse(lockA.isHeld(), "a holds a lock c holds, on a grant whose lease ran out");
            Await.until("the leader's answer to a's question", () -> !lockA.checkOutstandingForTests());
            assertFalse(overlap.get(), "a's tryLock returned true while c held the lock");
            assertFalse(aWaits.isDone(), "a's tryLock ended although its wait was not over");
            assertFalse(lockA.isHeld());
            assertTrue(lockC.isHeld());

            // a is in the queue again (its old place was taken by the grant that ran out): c's unlock grants it
            lossy.losing = false;
            lockC.unlock();
            assertTrue(aWaits.get(10, TimeUnit.SECONDS));
            assertTrue(lockA.fencingToken() > late.fencingToken());
            lockA.unlock();
        });
    }

    /**
     * The same, made deterministic: a GRANTED push for the current wait with a token above the entry
     * that queued it, which the leader does not confirm (b still holds), grants nothing, and the
     * wait keeps its place.
     */
    @Test
    @Timeout(60)
    void aGrantPushTheLeaderDoesNotConfirmDoesNotGrantTheWait() throws Exception {
        withThreeClients((a, lossy, b, c) -> {
            lossy.losing = false;
            KvLock lockA = a.lock("mutex");
            KvLock lockB = b.lock("mutex");
            assertTrue(lockB.tryLock(30_000, 0));
            CompletableFuture<Boolean> aWaits = lockA.tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", lockA::isQueued);
            CompletableFuture<Boolean> cWaits = c.lock("mutex").tryLockAsync(30_000, 30_000);
            Await.until("c's tryLock to be queued", c.lock("mutex")::isQueued);
            // an index after a's wait was queued, as a grant of it would have
            long after = b.put("elsewhere", "x".getBytes(StandardCharsets.UTF_8));

            LockPushes.push(a, LockPushes.granted(a, "mutex", after));
            Await.until("the leader's answer to a's question", () -> !lockA.checkOutstandingForTests());
            assertFalse(aWaits.isDone(), "a grant the leader did not confirm granted the wait");
            assertFalse(lockA.isHeld());
            assertEquals(0, lockA.fencingToken());

            // a kept its place ahead of c: b's unlock grants a, not c
            lockB.unlock();
            assertTrue(aWaits.get(10, TimeUnit.SECONDS));
            assertTrue(lockA.isHeld());
            assertTrue(lockA.fencingToken() > after);
            assertFalse(cWaits.isDone());
            lockA.unlock();
            assertTrue(cWaits.get(10, TimeUnit.SECONDS));
            c.lock("mutex").unlock();
        });
    }

    interface ThreeClients {
        void run(KvClient a, LockPushes.LossyGrants aLosesGrants, KvClient b, KvClient c) throws Exception;
    }

    /** Three clients of one single-node cluster; a loses the GRANTED pushes while its {@code losing} is set. */
    static void withThreeClients(ThreeClients test) throws Exception {
        AtomicReference<LockPushes.LossyGrants> lossy = new AtomicReference<>();
        LockTestClients.withThreeClients(new KvClientConfig(), a -> lossy.set(LockPushes.loseGrants(a)),
                (a, b, c) -> test.run(a, lossy.get(), b, c));
    }
}
