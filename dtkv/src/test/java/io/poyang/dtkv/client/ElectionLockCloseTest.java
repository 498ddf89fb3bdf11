package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.*;

/**
 * An election lock closed while its tryLock waits in the lock's queue must not keep the grant that
 * reaches it afterwards: nobody leads with it, and every other candidate would wait a whole lease.
 */
class ElectionLockCloseTest {

    @Test
    void aGrantReachingAClosedCandidateIsGivenBackAtOnce() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient holder = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            KvClient candidate = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses())
                    .timeoutMillis(10_000));
            KvClient other = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            holder.start();
            candidate.start();
            other.start();
            try {
                KvLock held = holder.lock("leader");
                assertTrue(held.tryLock(60_000, 0));
                ElectionLock election = candidate.electionLock("leader", 60_000, new ElectionLock.Listener() {
                    @Override
                    public void onAcquired(long fencingToken) {
                    }

                    @Override
                    public void onLost() {
                    }
                });
                election.start();
                KvLock queued = candidate.lock("leader");
                Await.until("the candidate to wait in the queue", queued::isQueued);
                election.close();
                held.unlock();   // the lock goes to the queue's head: the closed candidate
                KvLock later = other.lock("leader");
                Await.until("another client to get the lock the closed candidate was granted",
                        () -> later.tryLock(60_000, 0));
                assertFalse(election.isLeader());
                later.unlock();
            } finally {
                holder.close();
                candidate.close();
                other.close();
            }
        }
    }
}
