package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplicationTest {

    @TempDir
    Path dir;

    @Test
    void writesAreReplicatedAndAppliedInTheSameOrderOnEveryNode() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 200, 1_000_000);
            load.awaitAcknowledged(20_000);
            load.close();
            assertEquals(0, load.unknown.get(), "no write's outcome is unknown in a healthy cluster");
            long[] values = c.checkIdentical(1);
            Set<Long> applied = new HashSet<>();
            for (long v : values) {
                assertTrue(applied.add(v), "value " + v + " applied twice");
            }
            for (long v : load.acknowledged) {
                assertTrue(applied.contains(v), "acknowledged value " + v + " is missing");
            }
            assertTrue(values.length >= 20_000);
        }
    }
}
