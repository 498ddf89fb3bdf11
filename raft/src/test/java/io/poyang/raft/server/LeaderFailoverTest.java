package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeaderFailoverTest {

    @TempDir
    Path dir;

    @Test
    void aLeaderKilledUnderLoadIsReplacedAndNoAcknowledgedWriteIsLost() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int first = c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(3_000);
            c.stopNode(first);
            int second = c.waitForLeader(1);
            assertNotEquals(first, second);
            long before = load.acknowledgedCount();
            load.awaitAcknowledged(before + 3_000);
            c.startNode(first);   // it comes back as a follower and catches up
            load.awaitAcknowledged(load.acknowledgedCount() + 2_000);
            load.close();
            long[] values = c.checkIdentical(1);
            Set<Long> applied = new HashSet<>();
            for (long v : values) {
                assertTrue(applied.add(v), "value " + v + " applied twice");
            }
            for (long v : load.acknowledged) {
                assertTrue(applied.contains(v), "acknowledged value " + v + " was lost");
            }
            for (long v : load.notApplied) {
                assertTrue(!applied.contains(v), "value " + v + " was reported not applied but is in the state machine");
            }
        }
    }
}
