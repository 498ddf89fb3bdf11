package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower stops answering with its in-flight window full, and the leader compacts its log past
 * everything sent to it: the leader's replicator must turn to the snapshot, not build a heartbeat
 * whose previous entry is gone (which threw from {@code LogStore.termOf}, failing the replicator's
 * session with a warning and restarting it at the end of the log).
 */
class CompactionPastInflightWindowTest {

    @TempDir
    Path dir;

    @Test
    void logCompactedPastAStalledFollowersWindowSendsTheSnapshotWithoutFailingTheReplicator() throws Exception {
        List<LogRecord> failures = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue() && r.getThrown() != null) {
                    failures.add(r);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger replicatorLog = Logger.getLogger("io.poyang.raft.core.Replicator");
        replicatorLog.addHandler(capture);
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                // a small window fills at once; snapshots every 500 entries compact the log past it quickly;
                // a long timeout keeps the window's requests in flight all the while
                rc -> rc.maxInflight(64, 1L << 20).maxAppend(16, 64 << 10).snapshotEvery(500, 0)
                        .replicationTimeoutMillis(10_000))) {
            c.dispatchers = 1;
            c.start();
            int leader = c.waitForLeader(1);
            int stalled = SlowPeerHarness.aFollower(c, 1, leader);
            RaftGroup lg = c.group(leader, 1);
            c.write(1, 1);
            CountDownLatch resume = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            // holds the follower's only dispatcher: it reads requests but answers none
            c.group(stalled, 1).callInGroup(() -> {
                held.countDown();
                return resume.await(30, TimeUnit.SECONDS);
            });
            assertTrue(held.await(10, TimeUnit.SECONDS));
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            try {
                long sentUpTo = lg.lastLogIndex();
                RaftCluster.waitFor("the leader to compact its log past what the stalled follower was sent",
                        () -> lg.firstLogIndex() > sentUpTo + 1_000);
                RaftCluster.waitFor("the leader to start sending the stalled follower its snapshot",
                        () -> lg.pipelineCounters()[6] >= 1);
            } finally {
                resume.countDown();
            }
            load.awaitAcknowledged(load.acknowledgedCount() + 500);
            load.close();
            long[] values = c.checkIdentical(1);
            load.checkApplied(values, "");
        } finally {
            replicatorLog.removeHandler(capture);
        }
        assertTrue(failures.isEmpty(), "the replicator failed: " + (failures.isEmpty() ? ""
                : failures.get(0).getMessage() + ": " + failures.get(0).getThrown()));
    }
}
