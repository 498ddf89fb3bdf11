package io.poyang.raft.server;

import io.poyang.raft.client.RaftRole;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member whose replication connection is accepted but never read — from the start (it never
 * answers the handshake), or from the middle of a flood (a real node behind a proxy that stops
 * reading): the leader's memory for it stays bounded, the other two nodes keep committing, and
 * once the connection goes the peer (when it is a real node) catches up.
 */
class NonReadingPeerTest {

    private static final long FREEZE_MILLIS = Long.getLong("poyang.freezeMillis", 6_000);
    private static final int INFLIGHT_ITEMS_CAP = 4_000;
    private static final long INFLIGHT_BYTES_CAP = 2L << 20;
    private static final int APPEND_ITEMS = 512;
    private static final int APPEND_BYTES = 256 << 10;
    /** One request over a cap at most (it may start just under it), and some room for its framing. */
    private static final long INFLIGHT_BYTES_BOUND = INFLIGHT_BYTES_CAP + APPEND_BYTES + (64 << 10);

    @TempDir
    Path dir;

    @Test
    void memberThatNeverReadsDoesNotStallCommitsOrGrowLeaderMemory() throws Exception {
        try (FreezableProxy sink = new FreezableProxy(0, 4096);
             RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                     rc -> rc.maxInflight(INFLIGHT_ITEMS_CAP, INFLIGHT_BYTES_CAP).maxAppend(APPEND_ITEMS, APPEND_BYTES))) {
            c.startNode(1);
            c.startNode(2);
            c.server(1).setNodeAddress(3, sink.address());
            c.server(2).setNodeAddress(3, sink.address());
            int leader = c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            SlowPeerHarness.Ballast ballast = new SlowPeerHarness.Ballast(c, 1, 50, 512);
            load.awaitAcknowledged(1_000);
            long before = load.acknowledgedCount();
            SlowPeerHarness.LeaderSample sample = SlowPeerHarness.LeaderSample.over(c, leader, 3, 6_000);
            long acked = load.acknowledgedCount() - before;
            System.out.printf("never-reading member: %d writes acknowledged in 6 s, %d connections accepted, heap after"
                    + " gc %d MiB; %s%n", acked, sink.accepted, SlowPeerHarness.usedHeapAfterGcBytes() >> 20, sample);
            assertTrue(sink.accepted >= 1, "the leader never connected to the silent member");
            assertTrue(acked >= 1_000, "the two live nodes committed only " + acked + " writes in 6 s");
            // without a handshake nothing is sent: the replicator probes, one request at a time
            assertTrue(sample.inflightRequests <= 1, sample.toString());
            assertTrue(sample.clientPendingBytes < INFLIGHT_BYTES_BOUND, sample.toString());
            assertEquals(RaftRole.LEADER, c.group(leader, 1).role(), "the leader lost its leadership");

            // the silent peer's connections close: nothing changes for the other two
            sink.dropConnections();
            long afterDrop = load.acknowledgedCount();
            load.awaitAcknowledged(afterDrop + 1_000);
            ballast.close();
            load.close();
            long[] values = c.checkIdentical(1);
            load.checkApplied(values, "");

            // nothing waits on the silent peer when a node stops (its threads end within the stop timeout)
            long stopStart = System.nanoTime();
            c.stopNode(leader);
            long stopMillis = (System.nanoTime() - stopStart) / 1_000_000;
            System.out.println("the leader stopped in " + stopMillis + " ms");
            assertTrue(stopMillis < 3_000, "stopping took " + stopMillis + " ms (the stop timeout is 5,000)");
        }
    }

    @Test
    void peerFrozenAfterHandshakeKeepsLeaderMemoryBoundedAndCatchesUpWhenDropped() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.maxInflight(INFLIGHT_ITEMS_CAP, INFLIGHT_BYTES_CAP).maxAppend(APPEND_ITEMS, APPEND_BYTES))
                .start()) {
            int leader = c.waitForLeader(1);
            if (leader == 3) {
                RaftCluster.join(c.group(3, 1).transferLeadership(1, 5_000));
                leader = c.waitForLeader(1);
            }
            int other = leader == 1 ? 2 : 1;
            try (FreezableProxy proxy = new FreezableProxy(c.server(3).replicationPort(), 4096)) {
                c.server(leader).setNodeAddress(3, proxy.address());
                c.server(other).setNodeAddress(3, proxy.address());
                LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
                SlowPeerHarness.Ballast ballast = new SlowPeerHarness.Ballast(c, 1, 50, 512);
                load.awaitAcknowledged(1_000);
                RaftCluster.waitFor("node 3 to take entries through the proxy",
                        () -> proxy.accepted >= 1 && c.group(3, 1).lastApplied() > 500);
                double beforePerSecond = SlowPeerHarness.ackRate(load, 1_000);
                proxy.freeze();
                long before = load.acknowledgedCount();
                long start = System.nanoTime();
                SlowPeerHarness.LeaderSample sample = SlowPeerHarness.LeaderSample.over(c, leader, 3, FREEZE_MILLIS);
                double frozenPerSecond = (load.acknowledgedCount() - before) / ((System.nanoTime() - start) / 1e9);
                System.out.printf("frozen peer: %.0f writes/s before, %.0f while frozen, heap after gc %d MiB; %s%n",
                        beforePerSecond, frozenPerSecond, SlowPeerHarness.usedHeapAfterGcBytes() >> 20, sample);
                assertTrue(sample.followerLag > INFLIGHT_ITEMS_CAP, "node 3 never fell behind: " + sample);
                assertTrue(sample.inflightItems < INFLIGHT_ITEMS_CAP + APPEND_ITEMS, sample.toString());
                assertTrue(sample.inflightBytes < INFLIGHT_BYTES_BOUND, sample.toString());
                // node 3's requests plus the healthy follower's
                assertTrue(sample.clientPendingBytes < 2 * INFLIGHT_BYTES_BOUND, sample.toString());
                assertTrue(frozenPerSecond > beforePerSecond / 3, "the healthy quorum slowed to under a third, from "
                        + beforePerSecond + " to " + frozenPerSecond + " writes/s");

                proxy.dropConnections();
                proxy.thaw();
                long dropped = System.nanoTime();
                ballast.close();
                load.awaitAcknowledged(load.acknowledgedCount() + 200);
                load.close();
                long[] values = c.checkIdentical(1);
                System.out.printf("node 3 caught up %d ms after its connections were dropped%n",
                        (System.nanoTime() - dropped) / 1_000_000);
                load.checkApplied(values, "");
            }
        }
    }
}
