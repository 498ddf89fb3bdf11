package io.poyang.raft.server;

import io.poyang.raft.store.FaultyFileIo;
import io.poyang.raft.store.LogJournal;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower whose disk stalls for 50–500 ms at a time while the leader takes a flood of writes:
 * the leader's memory for it stays within the replication caps, the two healthy nodes keep
 * committing at their speed, and once the disk is well again the slow follower catches up with
 * every acknowledged write. With and without the nodes' log journals: with them, the slow
 * follower's journal fsyncs stall as well (they, not the log I/O threads, make its writes durable).
 */
class SlowFollowerDiskTest {

    private static final int INFLIGHT_ITEMS_CAP = 4_000;
    private static final long INFLIGHT_BYTES_CAP = 2L << 20;
    private static final int APPEND_ITEMS = 512;
    private static final int APPEND_BYTES = 256 << 10;
    private static final long TAIL_CACHE_BYTES_CAP = 2L << 20;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "journal {0}")
    @ValueSource(booleans = {false, true})
    void slowFollowerDiskKeepsLeaderMemoryBoundedAndQuorumCommitting(boolean journal) {
        FaultyFileIo io = new FaultyFileIo();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.logFileIo(io).maxInflight(INFLIGHT_ITEMS_CAP, INFLIGHT_BYTES_CAP)
                        .maxAppend(APPEND_ITEMS, APPEND_BYTES).tailCache(4_000, TAIL_CACHE_BYTES_CAP))) {
            if (journal) {
                c.serverTweak = b -> b.logJournal(true).logJournalFiles(3, LogJournal.MIN_FILE_BYTES);
            }
            c.start();
            int leader = c.waitForLeader(1);
            int slow = SlowPeerHarness.aFollower(c, 1, leader);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            SlowPeerHarness.Ballast ballast = new SlowPeerHarness.Ballast(c, 1, 50, 512);
            load.awaitAcknowledged(1_000);
            double baselinePerSecond = SlowPeerHarness.ackRate(load, 2_000);

            SlowPeerHarness.LeaderSample sample;
            double slowPerSecond;
            try (SlowPeerHarness.DiskStaller staller = new SlowPeerHarness.DiskStaller(
                    SlowPeerHarness.logIo(c.server(slow)), 50, 500, 42);
                 SlowPeerHarness.JournalFsyncStaller journalStaller = journal
                         ? new SlowPeerHarness.JournalFsyncStaller(io, dir.resolve("node-" + slow), 50, 500, 43) : null) {
                long before = load.acknowledgedCount();
                long start = System.nanoTime();
                sample = SlowPeerHarness.LeaderSample.over(c, leader, slow, 4_000);
                slowPerSecond = (load.acknowledgedCount() - before) / ((System.nanoTime() - start) / 1e9);
                System.out.printf("slow disk on node %d (%d stalls, %d ms stalled): %.0f writes/s before, %.0f with;"
                                + " heap after gc %d MiB; %s%n", slow, staller.stalls.get(), staller.stalledMillis.get(),
                        baselinePerSecond, slowPerSecond, SlowPeerHarness.usedHeapAfterGcBytes() >> 20, sample);
                if (journal) {
                    System.out.printf("journal fsyncs of node %d stalled %d times, %d ms%n", slow,
                            journalStaller.stalls.get(), journalStaller.stalledMillis.get());
                    assertTrue(journalStaller.stalls.get() > 0, "the slow follower's journal was never fsynced");
                    assertTrue(c.server(leader).logJournalFsyncCount() > 0, "the leader wrote no journal");
                }
            }
            // the stalls made the follower fall behind what the caps let the leader send it
            assertTrue(sample.followerLag > INFLIGHT_ITEMS_CAP, "the slow follower never fell behind: " + sample);
            // a request may start while just under a cap, so one request's worth over it at most
            assertTrue(sample.inflightItems < INFLIGHT_ITEMS_CAP + APPEND_ITEMS, sample.toString());
            assertTrue(sample.inflightBytes < INFLIGHT_BYTES_CAP + APPEND_BYTES + (64 << 10), sample.toString());
            // evicted past the bound once applied; what is not applied yet is a few batches on the leader
            assertTrue(sample.tailCacheBytes < 2 * TAIL_CACHE_BYTES_CAP, sample.toString());
            // both followers' requests: bounded by the caps, not by the flood
            assertTrue(sample.clientPendingBytes < 2 * (INFLIGHT_BYTES_CAP + APPEND_BYTES + (64 << 10)),
                    sample.toString());
            assertTrue(slowPerSecond > baselinePerSecond / 3, "the healthy quorum slowed to under a third, from "
                    + baselinePerSecond + " to " + slowPerSecond + " writes/s");

            long healed = System.nanoTime();
            ballast.close();
            load.awaitAcknowledged(load.acknowledgedCount() + 200);
            load.close();
            long[] values = c.checkIdentical(1);
            System.out.printf("the slow follower caught up %d ms after its disk healed%n",
                    (System.nanoTime() - healed) / 1_000_000);
            load.checkApplied(values, "");
        }
    }
}
