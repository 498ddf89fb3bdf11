package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application task that blocks the client's callback executor for several leases must not cost
 * the election lock its leadership: the renewals still go out (timer thread) and succeed on the
 * server, and their success is recorded as the answers arrive. Before, it was recorded only when
 * the blocked executor ran the callbacks, so the lock reported a loss although the server had
 * renewed every lease.
 */
class ElectionLockBlockedExecutorTest {

    @Test
    void aBlockedCallbackExecutorDoesNotMakeTheLeaderLoseALeaseItRenewed() throws Exception {
        long leaseMillis = 600;
        try (LockTestClients.BlockableCallbacks callbacks = new LockTestClients.BlockableCallbacks()) {
            LockTestClients.withTwoClients(callbacks.executor, 5_000, (leaderClient, rivalClient) -> {
                List<String> events = new CopyOnWriteArrayList<>();
                ElectionLock election = leaderClient.electionLock("scheduler", leaseMillis, new ElectionLock.Listener() {
                    @Override
                    public void onAcquired(long fencingToken) {
                        events.add("acquired");
                    }

                    @Override
                    public void onLost() {
                        events.add("lost");
                    }
                });
                election.start();
                Await.until("the candidate to be elected", () -> election.isLeader() && events.contains("acquired"));

                // the application blocks the callback executor for four leases
                callbacks.block();
                long blockedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4 * leaseMillis);
                int samples = 0;
                while (System.nanoTime() - blockedUntil < 0) {
                    assertTrue(election.isLeader(), "the leader stopped claiming to lead after "
                            + samples + " samples while its renewals went through");
                    samples++;
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
                // the server agrees: the lock is still held, so a rival cannot take it
                assertFalse(rivalClient.lock("scheduler").tryLock(leaseMillis, 0),
                        "the server gave the lock to a rival while the leader renewed it");
                callbacks.unblock();

                // once the executor runs again, the listener has heard nothing but the election
                long settleUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * leaseMillis);
                while (System.nanoTime() - settleUntil < 0) {
                    assertTrue(election.isLeader());
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
                assertEquals(List.of("acquired"), events);
                election.close();
            });
        }
    }
}
