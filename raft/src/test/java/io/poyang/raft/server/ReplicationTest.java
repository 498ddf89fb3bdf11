package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

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
            load.checkApplied(values, "");
            assertTrue(values.length >= 20_000);
        }
    }

    @Test
    void aFollowerFarBehindTheTailCacheIsFedFromTheLeadersLogOnDisk() {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.tailCache(100, 1 << 20)).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int follower = leader % 3 + 1;
            c.faults.isolate(follower);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(3_000);
            load.close();
            long readsBefore = c.group(leader, 1).pipelineCounters()[4];
            c.faults.heal();
            long[] values = c.checkIdentical(1);
            assertTrue(values.length >= 3_001);
            assertTrue(c.group(leader, 1).pipelineCounters()[4] > readsBefore,
                    "the entries the follower missed were no longer in the tail cache: read from disk");
            assertEquals(1, c.group(follower, 1).firstLogIndex(), "caught up by log, not by snapshot");
        }
    }
}
