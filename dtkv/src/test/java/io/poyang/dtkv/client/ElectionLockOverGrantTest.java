package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A grant the election lock handles only after its lease is over (the application blocked the
 * callback executor) is no leadership: another client may lead by then. It must not be reported
 * with onAcquired (and then onLost); the election lock asks again.
 */
class ElectionLockOverGrantTest {

    @Test
    @Timeout(60)
    void aGrantWhoseLeaseIsOverWhenHandledIsNotReportedAsLeadership() throws Exception {
        long leaseMillis = 500;
        try (LockTestClients.BlockableCallbacks callbacks = new LockTestClients.BlockableCallbacks()) {
            LockTestClients.withTwoClients(callbacks.executor, 5_000, (a, b) -> {
                List<String> events = new CopyOnWriteArrayList<>();
                ElectionLock election = a.electionLock("scheduler", leaseMillis, new ElectionLock.Listener() {
                    @Override
                    public void onAcquired(long fencingToken) {
                        events.add("acquired " + fencingToken);
                    }

                    @Override
                    public void onLost() {
                        events.add("lost");
                    }
                });
                // the application blocks a's callback executor; the grant's answer waits behind it
                callbacks.block();
                election.start();
                // the free lock is granted to a at once; nobody renews it, so its lease runs out and b takes it
                KvLock lockB = b.lock("scheduler");
                Await.until("b to take the lock after a's lease", () -> lockB.tryLock(30_000, 0));
                KvLock lockA = a.lock("scheduler");
                assertFalse(lockA.isHeld());

                callbacks.unblock();
                Await.until("a to ask again (queued behind b)", lockA::isQueued);
                LockPushes.eventsRun(a);
                assertEquals(0, events.size(), "a reported a leadership whose lease was over: " + events);
                assertFalse(election.isLeader());

                // b gives it up: now a leads, and says so once
                lockB.unlock();
                Await.until("a to lead", election::isLeader);
                LockPushes.eventsRun(a);
                assertEquals(1, events.size(), events.toString());
                assertTrue(events.get(0).startsWith("acquired "));
                election.close();
            });
        }
    }
}
