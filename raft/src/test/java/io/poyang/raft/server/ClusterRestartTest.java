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
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(256 * 1024).snapshotEvery(2_000, 0)).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(5_000);
            load.close();
            // periodic snapshots (every 2,000 entries) on every node, and one more on the leader now:
            // restarts start from "snapshot + log"
            RaftCluster.join(c.group(c.waitForLeader(1), 1).takeSnapshot());
            long[] before = c.checkIdentical(1);
            for (int n = 1; n <= 3; n++) {
                Path snaps = dir.resolve("node-" + n).resolve("group-1").resolve("snapshot");
                RaftCluster.waitFor("a periodic snapshot on node " + n, () -> {
                    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(snaps)) {
                        return files.anyMatch(p -> p.toString().endsWith(".meta"));
                    } catch (java.io.IOException e) {
                        return false;
                    }
                });
            }
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
