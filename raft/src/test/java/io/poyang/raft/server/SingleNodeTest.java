package io.poyang.raft.server;

import io.poyang.raft.client.RaftRole;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SingleNodeTest {

    @TempDir
    Path dir;

    @Test
    void aSingleNodeGroupElectsItselfAppliesWritesInOrderAndKeepsThemAcrossARestart() {
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            assertEquals(1, c.waitForLeader(1));
            assertEquals(RaftRole.LEADER, c.group(1, 1).role());
            long last = 0;
            for (int i = 0; i < 200; i++) {
                long idx = c.write(1, 1000 + i);
                assertTrue(idx > last, "indexes grow: " + idx + " after " + last);
                last = idx;
            }
            long[] before = c.checkIdentical(1);
            assertEquals(200, before.length);
            for (int i = 0; i < 200; i++) {
                assertEquals(1000 + i, before[i]);
            }
            int term = c.group(1, 1).term();
            c.restartNode(1);
            c.waitForLeader(1);
            assertTrue(c.group(1, 1).term() > term, "a restarted node stands in a new term");
            c.write(1, 5000);
            long[] after = c.checkIdentical(1);
            assertEquals(201, after.length);
            long[] prefix = java.util.Arrays.copyOf(after, 200);
            assertArrayEquals(before, prefix);
        }
    }

    @Test
    void aWriteLargerThanALogSegmentFailsAloneAndTheGroupGoesOn() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.segmentBytes(64 * 1024)).start()) {
            c.waitForLeader(1);
            c.write(1, 1);
            io.poyang.raft.core.RaftGroup g = c.group(1, 1);
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> g.submit(0, new io.poyang.raft.store.ByteBody(new byte[100 * 1024]), 5_000)
                            .get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof io.poyang.common.FlowControlException, "refused: " + e.getCause());
            assertTrue(e.getCause().getMessage().contains("segment"), e.getCause().getMessage());
            assertEquals(RaftRole.LEADER, g.role(), "the group did not fail");
            c.write(1, 2);
            assertArrayEquals(new long[]{1, 2}, c.checkIdentical(1));
        }
    }
}
