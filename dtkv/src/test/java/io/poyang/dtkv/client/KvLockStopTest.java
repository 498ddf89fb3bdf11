package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.server.FaultInjector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that stops gives up its locks: the one it holds is released and a queue it waits in is
 * left, so the next client does not wait out a 60 s lease for a client that is gone.
 */
class KvLockStopTest {

    private static final long LEASE_MILLIS = 60_000;
    /** How long every replication message waits: under the election timeout, so the leader stays. */
    private static final long REPLICATION_DELAY_MILLIS = 300;

    @TempDir
    Path dir;

    @Test
    void aStoppedClientLeavesTheQueueItWaitedIn() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient holder = client(cluster);
            KvClient waiter = client(cluster);
            KvClient other = client(cluster);
            try {
                KvLock held = holder.lock("job");
                assertTrue(held.tryLock(LEASE_MILLIS, 0));
                KvLock queued = waiter.lock("job");
                CompletableFuture<Boolean> waiting = queued.tryLockAsync(LEASE_MILLIS, LEASE_MILLIS);
                Await.until("the waiter to be queued", queued::isQueued);
                waiter.stop();
                assertFalse(waiting.get(10, TimeUnit.SECONDS), "the stopped client's tryLock ends with false");
                held.unlock();   // the next in line would be the stopped client, had it stayed queued
                KvLock later = other.lock("job");
                Await.until("another client to get the lock", () -> later.tryLock(LEASE_MILLIS, 0));
                later.unlock();
            } finally {
                holder.close();
                waiter.close();
                other.close();
            }
        }
    }

    @Test
    void aStoppedClientReleasesTheLockItHeld() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient holder = client(cluster);
            KvClient other = client(cluster);
            try {
                assertTrue(holder.lock("job").tryLock(LEASE_MILLIS, 0));
                KvLock later = other.lock("job");
                assertFalse(later.tryLock(LEASE_MILLIS, 0), "held by the first client");
                holder.stop();
                Await.until("another client to get the lock", () -> later.tryLock(LEASE_MILLIS, 0));
                later.unlock();
            } finally {
                holder.close();
                other.close();
            }
        }
    }

    @Test
    void aTryLockStillOnItsWayAtStopIsGivenBack() throws Exception {
        FaultInjector faults = new FaultInjector();
        RaftConfig raft = new RaftConfig().electionTimeoutMillis(2_000).heartbeatIntervalMillis(50)
                .snapshotEvery(0, 0);
        try (LocalKvCluster cluster = new LocalKvCluster(dir, 3, 1, raft, 1, faults, null).start()) {
            int leader = cluster.waitForLeader(1, 30_000);
            KvClient stopping = client(cluster);
            KvClient other = client(cluster);
            try {
                stopping.put("warm", "up".getBytes(StandardCharsets.UTF_8));   // it knows the leader now
                // Every entry now takes at least the delay to commit, so the tryLock is still unanswered
                // when the client stops; on the server it is granted after that, to a client that is gone.
                for (int n = 1; n <= 3; n++) {
                    if (n != leader) {
                        faults.delay(leader, n, REPLICATION_DELAY_MILLIS);
                    }
                }
                CompletableFuture<Boolean> inFlight = stopping.lock("job").tryLockAsync(LEASE_MILLIS, 0);
                stopping.stop();
                assertFalse(inFlight.get(10, TimeUnit.SECONDS), "a tryLock answered after stop holds nothing");
                KvLock later = other.lock("job");
                Await.until("another client to get the lock", () -> later.tryLock(LEASE_MILLIS, 0));
                later.unlock();
            } finally {
                faults.heal();
                stopping.close();
                other.close();
            }
        }
    }

    private static KvClient client(LocalKvCluster cluster) {
        KvClient c = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
        c.start();
        return c;
    }
}
