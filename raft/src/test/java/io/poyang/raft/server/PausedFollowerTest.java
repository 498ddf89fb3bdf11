package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower that stops (its dispatcher thread held, as under SIGSTOP the process would be) while
 * the leader takes writes, then resumes: the leader's memory for it stays within the caps, the
 * other two keep committing, and the follower catches up with no acknowledged write lost.
 */
class PausedFollowerTest {

    private static final long PAUSE_SECONDS = Long.getLong("poyang.pauseSeconds", 8);
    private static final int INFLIGHT_ITEMS_CAP = 4_000;
    private static final long INFLIGHT_BYTES_CAP = 2L << 20;
    private static final int APPEND_ITEMS = 512;
    private static final int APPEND_BYTES = 256 << 10;
    private static final long INFLIGHT_BYTES_BOUND = INFLIGHT_BYTES_CAP + APPEND_BYTES + (64 << 10);
    private static final long TAIL_CACHE_BYTES_CAP = 2L << 20;

    @TempDir
    Path dir;

    @Test
    void followerPausedUnderLoadCatchesUpAndLeaderMemoryStaysBounded() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, 
                // snapshots often enough that the paused follower falls behind the log's start
                rc -> rc.snapshotEvery(50_000, 0).maxInflight(INFLIGHT_ITEMS_CAP, INFLIGHT_BYTES_CAP)
                        .maxAppend(APPEND_ITEMS, APPEND_BYTES).tailCache(4_000, TAIL_CACHE_BYTES_CAP))) {
            c.dispatchers = 1;
            c.start();
            int leader = c.waitForLeader(1);
            int paused = SlowPeerHarness.aFollower(c, 1, leader);
            RaftGroup lg = c.group(leader, 1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            SlowPeerHarness.Ballast ballast = new SlowPeerHarness.Ballast(c, 1, 50, 512);
            load.awaitAcknowledged(1_000);
            double beforePerSecond = SlowPeerHarness.ackRate(load, 1_000);

            CountDownLatch resume = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            // blocks the follower's only dispatcher: none of its fibers runs until resumed
            c.group(paused, 1).callInGroup(() -> {
                held.countDown();
                return resume.await(60, TimeUnit.SECONDS);
            });
            assertTrue(held.await(10, TimeUnit.SECONDS));
            try {
                long before = load.acknowledgedCount();
                long start = System.nanoTime();
                SlowPeerHarness.LeaderSample sample = SlowPeerHarness.LeaderSample.over(c, leader, paused,
                        TimeUnit.SECONDS.toMillis(PAUSE_SECONDS));
                double pausedPerSecond = (load.acknowledgedCount() - before) / ((System.nanoTime() - start) / 1e9);
                System.out.printf("follower %d paused %d s: %.0f writes/s before, %.0f while paused, heap after gc %d MiB,"
                                + " counters %s, leader log %d..%d; %s%n", paused, PAUSE_SECONDS, beforePerSecond,
                        pausedPerSecond, SlowPeerHarness.usedHeapAfterGcBytes() >> 20,
                        java.util.Arrays.toString(lg.pipelineCounters()), lg.firstLogIndex(), lg.lastLogIndex(), sample);
                assertTrue(sample.followerLag > INFLIGHT_ITEMS_CAP, "the paused follower never fell behind: " + sample);
                assertTrue(sample.inflightItems < INFLIGHT_ITEMS_CAP + APPEND_ITEMS, sample.toString());
                assertTrue(sample.inflightBytes < INFLIGHT_BYTES_BOUND, sample.toString());
                assertTrue(sample.clientPendingBytes < 2 * INFLIGHT_BYTES_BOUND, sample.toString());
                assertTrue(sample.tailCacheBytes < 2 * TAIL_CACHE_BYTES_CAP, sample.toString());
                assertTrue(pausedPerSecond > beforePerSecond / 3, "the healthy quorum slowed to under a third, from "
                        + beforePerSecond + " to " + pausedPerSecond + " writes/s");
            } finally {
                resume.countDown();
            }
            long resumed = System.nanoTime();
            ballast.close();
            load.awaitAcknowledged(load.acknowledgedCount() + 200);
            load.close();
            long[] values = c.checkIdentical(1);
            System.out.printf("the follower caught up %d ms after resuming; counters %s%n",
                    (System.nanoTime() - resumed) / 1_000_000, java.util.Arrays.toString(lg.pipelineCounters()));
            load.checkApplied(values, "");
        }
    }
}
