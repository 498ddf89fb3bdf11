package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.common.FlowControlException;
import io.poyang.net.NioServerConfig;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.ByteBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Entries at and over {@link RaftCommands#MAX_WRITE_BODY_BYTES}: an entry travels to a follower in one
 * AppendEntries frame (8 MiB), so the largest allowed body reaches every node, and a larger one is
 * refused when it is proposed instead of being resent forever while the group's later writes wait.
 */
class LargeEntryTest {

    @TempDir
    Path dir;

    /** The test clusters' 1 MiB segments would refuse these entries first: room for two of the largest. */
    private static void segmentsForLargeEntries(RaftConfig rc) {
        rc.segmentBytes(17 << 20);
    }

    @Test
    void anEntryTooLargeForOneFrameIsRefusedWhenProposedAndLaterWritesCommit() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, LargeEntryTest::segmentsForLargeEntries).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup g = c.group(leader, 1);
            // A body of the frame's size fits a log segment, but no AppendEntries request can carry it;
            // the documented limit leaves room for the headers, so one byte over it is refused too.
            for (int bytes : new int[]{new NioServerConfig().maxFrameBytes, RaftCommands.MAX_WRITE_BODY_BYTES + 1}) {
                CompletableFuture<Encodable> tooLarge = g.submit(0, new ByteBody(new byte[bytes]), 5_000);
                ExecutionException e = assertThrows(ExecutionException.class, () -> tooLarge.get(10, TimeUnit.SECONDS));
                assertInstanceOf(FlowControlException.class, e.getCause(), bytes + " bytes: " + e.getCause());
                assertTrue(e.getCause().getMessage().contains("frame"), e.getCause().getMessage());
            }

            long before = System.nanoTime();
            c.write(1, 2);
            assertTrue(System.nanoTime() - before < TimeUnit.SECONDS.toNanos(5),
                    "the next write commits at once: nothing is stuck behind the refused entry");
            assertEquals(leader, c.waitForLeader(1), "the leader kept its followers");
            long[] values = c.checkIdentical(1);
            assertEquals(2, values.length);
        }
    }

    @Test
    void anEntryOfTheLargestAllowedBodyReachesEveryNode() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, LargeEntryTest::segmentsForLargeEntries).start()) {
            int leader = c.waitForLeader(1);
            CompletableFuture<Encodable> atLimit = c.group(leader, 1).submit(0,
                    new ByteBody(new byte[RaftCommands.MAX_WRITE_BODY_BYTES]), 5_000);
            // the test machine answers any body but an 8-byte value with its own error 42, once applied
            ExecutionException e = assertThrows(ExecutionException.class, () -> atLimit.get(10, TimeUnit.SECONDS));
            assertInstanceOf(RemoteException.class, e.getCause(), String.valueOf(e.getCause()));
            assertEquals(ResponseCode.BIZ_ERROR, ((RemoteException) e.getCause()).responseCode());
            assertEquals(42, ((RemoteException) e.getCause()).bizCode());
            c.write(1, 1);
            for (int n : c.allNodes()) {
                RaftCluster.waitFor("node " + n + " to apply the large entry",
                        () -> c.call(n, 1, () -> c.machine(n, 1).odd()) == 1);
            }
            c.checkIdentical(1);
        }
    }
}
