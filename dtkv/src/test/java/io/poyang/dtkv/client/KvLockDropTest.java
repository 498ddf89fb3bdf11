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

    /**
     * A lock in use is kept though the application dropped its reference: held, and waiting. The
     * proof that a collection ran is an unused lock, made before them, being dropped: a collection
     * that takes it takes the younger ones too unless they are kept. A collection alone cannot show
     * that the client keeps the waiting one: the timers of its wait (its end, its next check) refer
     * to it too, and would keep it from a map that let go of it. So the map's own strong reference
     * to each lock in use is checked as well ({@link #keptByTheClient}).
     */
    @Test
    void aLockInUseIsKeptWithoutAReference() throws Exception {
        withTwoClients((a, b) -> {
            WeakReference<KvLock> unused = new WeakReference<>(a.lock("unused"));
            assertTrue(a.lock("held").tryLock(30_000, 0));
            long token = a.lock("held").fencingToken();
            KvLock other = b.lock("waited");
            assertTrue(other.tryLock(30_000, 0));
            CompletableFuture<Boolean> waiting = a.lock("waited").tryLockAsync(30_000, 30_000);
            Await.until("a's tryLock to be queued", () -> a.lock("waited").isQueued());
            assertTrue(keptByTheClient(a.lock("held")), "the client's map does not keep the held lock");
            assertTrue(keptByTheClient(a.lock("waited")), "the client's map does not keep the waiting lock"
                    + " (only the timers of its wait do)");
            assertFalse(keptByTheClient(a.lock("unused")), "the client's map keeps an unused lock");
            // the test's own weak references: cleared by the collection itself, while the client's
            // entries go only once the reference handler has queued them
            WeakReference<KvLock> held = new WeakReference<>(a.lock("held"));
            WeakReference<KvLock> waited = new WeakReference<>(a.lock("waited"));
            collectUntil(a, "the unused lock to be dropped", () -> unused.get() == null && tracked(a) <= 2);
            assertNotNull(held.get(), "the held lock was collected");
            assertNotNull(waited.get(), "the waiting lock was collected");
            assertEquals(2, tracked(a));
            assertTrue(a.lock("held").isHeld());
            assertEquals(token, a.lock("held").fencingToken());
            other.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            assertTrue(a.lock("waited").isHeld());
            assertTrue(keptByTheClient(a.lock("waited")), "the client's map does not keep the lock granted after waiting");
            a.lock("held").unlock();
            a.lock("waited").unlock();
            assertFalse(keptByTheClient(a.lock("held")), "the client's map keeps a released lock");
            assertFalse(keptByTheClient(a.lock("waited")), "the client's map keeps a released lock");
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
            renewedAcrossCollections(a, election, "leader", 4);
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

    /**
     * Runs the garbage collector before each of {@code renewals} renewals of {@code election} (its
     * lock's lease deadline moves at each), checking that it leads throughout. Four renewals a third
     * of a lease apart outlast the lease: the lead is kept by renewals, through the same lock object.
     */
    private static void renewedAcrossCollections(KvClient client, ElectionLock election, String name, int renewals) {
        long renewedTo = client.lock(name).leaseDeadlineNanos();
        for (int i = 0; i < renewals; i++) {
            System.gc();
            long before = renewedTo;
            Await.until("renewal " + (i + 1) + " of the election lock", () -> {
                assertTrue(election.isLeader(), "lost the lead");
                return client.lock(name).leaseDeadlineNanos() != before;
            });
            renewedTo = client.lock(name).leaseDeadlineNanos();
        }
    }

    /**
     * Whether the client's map refers to {@code lock} strongly: its entry's in-use reference, which
     * the lock sets under its monitor. Read after a call of the test's thread that took that monitor
     * (isQueued, isHeld, unlock) since the change, so the read sees it.
     */
    private static boolean keptByTheClient(KvLock lock) {
        return lock.entry.inUse == lock;
    }

    private static int tracked(KvClient client) {
        return client.shared.locks.trackedCount();
    }

    /**
     * Runs the garbage collector until {@code condition} holds; fails after 10 s. Each round reads a
     * key first: a connection's reader keeps the request of the last answer it read (and so its
     * callback, and the lock) until the next answer comes.
     */
    private static void collectUntil(KvClient client, String what, BooleanSupplier condition) {
        Await.until(what, () -> {
            if (condition.getAsBoolean()) {
                return true;
            }
            client.get("warm-up");
            System.gc();
            return false;
        });
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
