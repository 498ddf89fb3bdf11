package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A group stopped while a snapshot waits for its apply fiber: the apply fiber ends with the stop,
 * and what waited on it must be answered, or the group's shutdown (which lets its fibers finish)
 * never completes. Found by RandomFaultTest: a node's stop took its whole 30 s.
 */
class StopDuringSnapshotTest {

    @TempDir
    Path dir;

    @Test
    void aFollowerStoppedWhileItCommitsASnapshotFromTheLeaderStopsAtOnce() throws Exception {
        SnapshotNameRaceTest.RenameGate gate = new SnapshotNameRaceTest.RenameGate();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(gate.io)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            RaftGroup fg = c.group(follower, 1);
            SnapshotMeta leaders = SnapshotNameRaceTest.leadersSnapshotOfWhatEveryNodeApplied(c, leader);
            byte[] fromLeader = SnapshotProbe.rechunkedNewest(snapshotDir(leader), 4096);

            // the received file's rename is held: the follower appender waits there
            gate.arm(snapshotDir(follower), "receiving.tmp");
            CompletableFuture<Boolean> received = SnapshotProbe.receiveWhole(fg, leaders, fromLeader);
            gate.awaitReached("the rename of the received snapshot");
            CompletableFuture<Void> stopped = fg.stop();
            RaftCluster.waitFor("the group's apply fiber to end with the stop",
                    () -> SnapshotProbe.fibers(fg).join().fiber("apply-1") == null);
            // the commit goes on and asks the (ended) apply fiber to install the snapshot
            gate.release();
            // it used to wait for the install forever, and the group's shutdown with it
            stopped.get(15, TimeUnit.SECONDS);
            assertFalse(received.get(5, TimeUnit.SECONDS), "a stopping follower took the snapshot");
        }
    }

    @Test
    void aSnapshotAskedOfAStoppingGroupIsRefusedNotLeftWaiting() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup g = c.group(1, 1);
            CompletableFuture<Void> stopped = g.stop();
            CompletableFuture<SnapshotMeta> snapshot = g.takeSnapshot();
            stopped.get(15, TimeUnit.SECONDS);
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> snapshot.get(5, TimeUnit.SECONDS));
            assertEquals(io.poyang.common.StoppedException.class, e.getCause().getClass(), String.valueOf(e.getCause()));
        }
    }

    private Path snapshotDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1").resolve("snapshot");
    }
}
