package io.poyang.raft.server;

import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.poyang.raft.store.FaultyFileIo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /**
     * Holds the first read of a log segment made for {@code LogStore.load} once {@code when} says
     * so, until released.
     */
    static final class LoadGate implements FaultyFileIo.Hook {
        final FaultyFileIo io = new FaultyFileIo();
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile BooleanSupplier when = () -> false;
        private final AtomicBoolean held = new AtomicBoolean();

        LoadGate() {
            io.hook = this;
        }

        @Override
        public void beforeRead(Path file, long position) throws IOException {
            if (!file.getParent().getFileName().toString().equals("log") || !inLogReader() || !when.getAsBoolean()
                    || !held.compareAndSet(false, true)) {
                return;
            }
            reached.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("the test never released the read of " + file);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }

        private static boolean inLogReader() {
            for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
                if (e.getClassName().startsWith("io.poyang.raft.store.LogReader")) {
                    return true;
                }
            }
            return false;
        }
    }

    @Test
    void aGroupStoppedWhileItsApplyFiberReadsTheLogAndASnapshotWaitsForItStopsAtOnce() throws Exception {
        LoadGate gate = new LoadGate();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(gate.io)).start()) {
            c.waitForLeader(1);
            for (long v = 1; v <= 50; v++) {
                c.write(1, v);
            }
            RaftServer server = c.server(1);
            server.removeGroup(1, false).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            // added back, the group applies its log again from disk once it has started (its start
            // reads the log too, for configuration entries): that first read of the apply fiber is held
            gate.when = () -> {
                RaftGroup g = server.group(1);
                return g != null && g.startedFuture().isDone();
            };
            server.addGroup(1, TestStateMachine::new, new Members(new int[]{1}, new int[0]));
            assertTrue(gate.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the apply fiber read no entries");
            RaftGroup g = server.group(1);
            CompletableFuture<SnapshotMeta> snapshot = g.takeSnapshot();
            RaftCluster.waitFor("the snapshot to ask for a capture",
                    () -> SnapshotProbe.fibers(g).join().fiber("snapshot-1") != null);
            CompletableFuture<Void> stopped = g.stop();
            gate.release.countDown();
            // the apply fiber, back from its read, ends with the stop: it used to leave the capture
            // waiting, and the group's shutdown with it
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
