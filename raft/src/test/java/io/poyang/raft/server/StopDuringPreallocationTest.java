package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node stops while one of its groups preallocates its next log segment on a log I/O thread:
 * the preallocation ends after the group's dispatcher stopped, and its new file is closed all
 * the same.
 */
class StopDuringPreallocationTest {

    @TempDir
    Path dir;

    /**
     * Before, the new file was closed by the preallocation's completion on the group's
     * dispatcher, which the stopped dispatcher dropped: the file stayed open for the life of the
     * process.
     */
    @Test
    void aNodeStoppedWhileASegmentIsPreallocatedLeavesNoFileOfTheGroupOpen() throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        Path groupDir = dir.resolve("node-1").resolve("group-1");
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io).segmentBytes(16 << 10))
                .start()) {
            c.waitForLeader(1);
            Thread stopping = new Thread(() -> c.stopNode(1), "test-stop-node-1");
            try {
                // once running, the only files the group opens under log/ are the segments it preallocates
                io.holdNextOpenUnder(groupDir.resolve("log"));
                long v = 1;
                while (io.reached.getCount() > 0) {
                    c.write(1, v++);   // until the log rolls to its spare and preallocates the next
                }
                stopping.start();
                // the preallocation ends only after the group's dispatcher stopped
                RaftCluster.waitFor("node 1's dispatchers to end", () -> {
                    for (Thread t : Thread.getAllStackTraces().keySet()) {
                        if (t.isAlive() && t.getName().startsWith("raft-1-dispatcher-")) {
                            return false;
                        }
                    }
                    return true;
                });
                assertTrue(stopping.isAlive(), "the node's stop ended without waiting for its log I/O");
            } finally {
                io.release();
            }
            stopping.join(TimeUnit.SECONDS.toMillis(RaftCluster.WAIT_SECONDS));
            assertFalse(stopping.isAlive(), "the node did not stop");
            assertEquals(Collections.emptyList(), io.openUnder(groupDir), "files of the group left open");
        }
    }
}
