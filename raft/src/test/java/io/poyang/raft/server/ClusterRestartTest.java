package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterRestartTest {

    @TempDir
    Path dir;

    @Test
    void aWholeClusterRestartKeepsEveryCommittedEntry() {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.segmentBytes(256 * 1024)).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(5_000);
            load.close();
            // a snapshot on one node only: restarts mix "snapshot + log" and "log only"
            RaftCluster.join(c.group(c.waitForLeader(1), 1).takeSnapshot());
            long[] before = c.checkIdentical(1);
            for (int n = 1; n <= 3; n++) {
                c.stopNode(n);
            }
            for (int n = 1; n <= 3; n++) {
                c.startNode(n);
            }
            c.write(1, 42);
            long[] after = c.checkIdentical(1);
            Set<Long> applied = new HashSet<>();
            for (long v : after) {
                applied.add(v);
            }
            for (long v : before) {
                assertTrue(applied.contains(v), "committed value " + v + " was lost in the restart");
            }
            for (long v : load.acknowledged) {
                assertTrue(applied.contains(v), "acknowledged value " + v + " was lost in the restart");
            }
            assertTrue(applied.contains(42L));
        }
    }
}
