package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.server.FaultInjector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tryLock whose answer does not come within the client's timeout fails with
 * RaftOutcomeUnknownException, but the server may still apply it: grant the lock, or queue the
 * client. The client must give that back (an UNLOCK) rather than forget it: otherwise the grant
 * sits unused for its lease, or the queue place is later granted to a client that no longer waits,
 * and every other client waits a lease for nothing.
 */
class KvLockOutcomeUnknownTest {

    private static final long LEASE_MILLIS = 60_000;
    /** The tryLock's timeout: shorter than the delay below, so its answer comes too late. */
    private static final long SHORT_TIMEOUT_MILLIS = 500;
    /** How long every replication message waits: longer than that timeout, under the election timeout. */
    private static final long REPLICATION_DELAY_MILLIS = 900;

    @TempDir
    Path dir;

    @Test
    @Timeout(60)
    void aGrantWhoseAnswerCameTooLateIsGivenBack() throws Exception {
        withCluster((faults, leader, a, other) -> {
            KvLock lockA = a.lock("job");
            slowReplication(faults, leader);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> lockA.tryLockAsync(LEASE_MILLIS, 0).get(10, TimeUnit.SECONDS));
            assertInstanceOf(RaftOutcomeUnknownException.class, failed.getCause());
            faults.heal();
            assertFalse(lockA.isHeld());
            // the server granted the free lock to a (the answer was lost): a gives it back
            KvLock lockOther = other.lock("job");
            Await.until("another client to get the lock a's lost answer granted",
                    () -> lockOther.tryLock(LEASE_MILLIS, 0));
            lockOther.unlock();
            // and a can take it again as usual
            assertTrue(lockA.tryLock(LEASE_MILLIS, 0));
            lockA.unlock();
        });
    }

    @Test
    @Timeout(60)
    void aQueuePlaceWhoseAnswerCameTooLateIsLeft() throws Exception {
        withCluster((faults, leader, a, other) -> {
            KvLock lockOther = other.lock("job");
            assertTrue(lockOther.tryLock(LEASE_MILLIS, 0));
            KvLock lockA = a.lock("job");
            slowReplication(faults, leader);
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> lockA.tryLockAsync(LEASE_MILLIS, LEASE_MILLIS).get(10, TimeUnit.SECONDS));
            assertInstanceOf(RaftOutcomeUnknownException.class, failed.getCause());
            faults.heal();
            assertFalse(lockA.isQueued());
            // the server queued a (the answer was lost); once the holder unlocks, the lock must not go
            // to a, which no longer waits, but be free for the holder to take again
            lockOther.unlock();
            Await.until("the lock to be free once its holder unlocked", () -> lockOther.tryLock(LEASE_MILLIS, 0));
            assertFalse(lockA.isHeld());
            lockOther.unlock();
        });
    }

    private static void slowReplication(FaultInjector faults, int leader) {
        for (int n = 1; n <= 3; n++) {
            if (n != leader) {
                faults.delay(leader, n, REPLICATION_DELAY_MILLIS);
            }
        }
    }

    private interface ClusterTest {
        void run(FaultInjector faults, int leader, KvClient a, KvClient other) throws Exception;
    }

    /**
     * Three nodes whose replication the test can slow down; a has a short timeout, the other client a
     * long one. Both found the leader before the test runs.
     */
    private void withCluster(ClusterTest test) throws Exception {
        FaultInjector faults = new FaultInjector();
        RaftConfig raft = new RaftConfig().electionTimeoutMillis(3_000).heartbeatIntervalMillis(50)
                .snapshotEvery(0, 0);
        try (LocalKvCluster cluster = new LocalKvCluster(dir, 3, 1, raft, 1, faults, null).start()) {
            int leader = cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses())
                    .timeoutMillis(SHORT_TIMEOUT_MILLIS));
            KvClient other = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            a.start();
            other.start();
            try {
                a.put("warm", "up".getBytes(StandardCharsets.UTF_8));   // both know the leader now
                other.put("warm", "up".getBytes(StandardCharsets.UTF_8));
                test.run(faults, leader, a, other);
            } finally {
                faults.heal();
                a.close();
                other.close();
            }
        }
    }
}
