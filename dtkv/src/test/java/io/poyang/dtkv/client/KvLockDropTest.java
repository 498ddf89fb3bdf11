package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.*;

/**
 * The client keeps a lock object only while it is in use or referred to (review finding: one object
 * per name ever used, never freed), and everything still works across an object that was dropped:
 * the same object while referred to, a new one afterwards, no stale grant, election locks.
 */
class KvLockDropTest {

    private static final int NAMES = 10_000;
    private static final int BATCH = 500;

    @Test
    void lockingManyNamesDoesNotMakeTheClientGrow() throws Exception {
        withTwoClients((a, b) -> {
            for (int from = 0; from < NAMES; from += BATCH) {
                List<KvLock> batch = new ArrayList<>(BATCH);
                List<CompletableFuture<Boolean>> granted = new ArrayList<>(BATCH);
                for (int i = from; i < from + BATCH; i++) {
                    KvLock l = a.lock("order." + i);
                    batch.add(l);
                    granted.add(l.tryLockAsync(30_000, 0));
                }
                for (CompletableFuture<Boolean> g : granted) {
                    assertTrue(g.get(30, TimeUnit.SECONDS));
                }
                List<CompletableFuture<Void>> released = new ArrayList<>(BATCH);
                for (KvLock l : batch) {
                    released.add(l.unlockAsync());
                }
                for (CompletableFuture<Void> r : released) {
                    r.get(30, TimeUnit.SECONDS);
                }
            }
            collectUntil(a, "the released locks to be dropped", () -> tracked(a) < 100);
        });
    }

    /** A lock in use is kept though the application dropped its reference: held, and waiting. */
    @Test
    void aLockInUseIsKeptWithoutAReference() throws Exception {
        withTwoClients((a, b) -> {
            assertTrue(a.lock("held").tryLock(30_000, 0));
            long token = a.lock("held").fencingToken();
            KvLock other = b.lock("waited");
            assertTrue(other.tryLock(30_000, 0));
            CompletableFuture<Boolean> waiting = a.lock("waited").tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", () -> a.lock("waited").isQueued());
            for (int i = 0; i < 5; i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertEquals(2, tracked(a));
            assertTrue(a.lock("held").isHeld());
            assertEquals(token, a.lock("held").fencingToken());
            other.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            assertTrue(a.lock("waited").isHeld());
            a.lock("held").unlock();
            a.lock("waited").unlock();
            collectUntil(a, "the released locks to be dropped", () -> tracked(a) == 0);
        });
    }

    @Test
    void aNameLockedReleasedAndDroppedCanBeLockedAgain() throws Exception {
        withTwoClients((a, b) -> {
            KvLock first = a.lock("again");
            assertSame(first, a.lock("again"), "one object per name while referred to");
            assertTrue(first.tryLock(30_000, 0));
            long oldToken = first.fencingToken();
            first.unlock();
            WeakReference<KvLock> dropped = new WeakReference<>(first);
            first = null;
            collectUntil(a, "the released lock to be dropped", () -> dropped.get() == null);
            assertEquals(0, tracked(a));

            KvLock second = a.lock("again");
            assertFalse(second.isHeld());
            assertTrue(second.tryLock(30_000, 0));
            assertTrue(second.fencingToken() > oldToken);
            // and the queue works for the new object: b waits, a's unlock hands it over
            KvLock other = b.lock("again");
            CompletableFuture<Boolean> waiting = other.tryLockAsync(30_000, 30_000);
            Await.until("b's tryLock to be queued", other::isQueued);
            second.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            // and a new object waits for it too
            CompletableFuture<Boolean> aWaits = second.tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", second::isQueued);
            other.unlock();
            assertTrue(aWaits.get(10, TimeUnit.SECONDS));
            second.unlock();
        });
    }

    /**
     * A grant pushed late for a lock object that was dropped grants nothing: the push makes no
     * object, a new object with no tryLock takes nothing, and a new object's wait does not take it.
     */
    @Test
    void aLatePushForADroppedLockGrantsNothing() throws Exception {
        withTwoClients((a, b) -> {
            KvLock first = a.lock("late");
            assertTrue(first.tryLock(30_000, 0));
            long oldToken = first.fencingToken();
            first.unlock();
            WeakReference<KvLock> dropped = new WeakReference<>(first);
            first = null;
            collectUntil(a, "the released lock to be dropped", () -> dropped.get() == null);

            LockPushes.push(a, LockPushes.granted(a, "late", oldToken));
            assertEquals(0, tracked(a), "a push made a lock object");

            KvLock fresh = a.lock("late");
            LockPushes.push(a, LockPushes.granted(a, "late", oldToken));
            assertFalse(fresh.isHeld());
            assertEquals(0, fresh.fencingToken());

            KvLock other = b.lock("late");
            assertTrue(other.tryLock(30_000, 0));
            CompletableFuture<Boolean> waiting = fresh.tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", fresh::isQueued);
            LockPushes.push(a, LockPushes.granted(a, "late", oldToken));
            assertFalse(waiting.isDone(), "a grant of the dropped object granted the new one's wait");
            assertFalse(fresh.isHeld());
            other.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            assertTrue(fresh.fencingToken() > oldToken);
            fresh.unlock();
        });
    }

    @Test
    void anElectionLockKeepsItsLockAndWorks() throws Exception {
        withTwoClients((a, b) -> {
            CompletableFuture<Long> acquired = new CompletableFuture<>();
            ElectionLock election = a.electionLock("leader", 1_500, new ElectionLock.Listener() {
                @Override
                public void onAcquired(long fencingToken) {
                    acquired.complete(fencingToken);
                }

                @Override
                public void onLost() {
                }
            });
            election.start();
            long token = acquired.get(10, TimeUnit.SECONDS);
            // collected and renewed for a few leases: still the leader, with the same lock object
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4_000);
            while (System.nanoTime() - until < 0) {
                System.gc();
                Thread.sleep(100);
                assertTrue(election.isLeader());
            }
            assertEquals(token, election.fencingToken());
            assertEquals(token, a.lock("leader").fencingToken());
            assertEquals(1, tracked(a));
            election.closeAsync().get(10, TimeUnit.SECONDS);   // close() does not wait for the release
            assertFalse(a.lock("leader").isHeld());
            assertTrue(b.lock("leader").tryLock(30_000, 0));
            b.lock("leader").unlock();
            election = null;
            collectUntil(a, "the closed election lock's lock to be dropped", () -> tracked(a) == 0);
        });
    }

    private static int tracked(KvClient client) {
        return client.shared.locks.trackedCount();
    }

    /**
     * Runs the garbage collector until {@code condition} holds; fails after 10 s. Each round reads a
     * key first: a connection's reader keeps the request of the last answer it read (and so its
     * callback, and the lock) until the next answer comes.
     */
    private static void collectUntil(KvClient client, String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after 10 s waiting for " + what);
            }
            client.get("warm-up");
            System.gc();
            Thread.sleep(20);
        }
    }

    /**
     * Two clients of one single-node cluster, each of which found the leader. The first write looks
     * for the leader, and the raft client's timer keeps that write (its callback, and so a lock) until
     * its deadline: not the lock's doing, out of the way.
     */
    private static void withTwoClients(LockTestClients.TwoClients test) throws Exception {
        LockTestClients.withTwoClients((a, b) -> {
            a.put("warm-up", new byte[1]);
            b.put("warm-up", new byte[1]);
            test.run(a, b);
        });
    }
}
