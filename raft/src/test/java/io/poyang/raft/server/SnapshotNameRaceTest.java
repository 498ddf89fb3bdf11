package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.store.FaultyFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower takes its own snapshot at the same index and term as one its leader sends it: both
 * have the same file names. The I/O thread writing the follower's own is held at chosen renames
 * while the leader's copy (cut into other chunks, so of another size) arrives. At no moment may a
 * meta file on disk name a data file of another size: a node stopped then would not start.
 */
class SnapshotNameRaceTest {

    @TempDir
    Path dir;

    /** Holds the first rename, in one snapshot directory, of a file whose name ends with the armed suffix. */
    static final class RenameGate implements FaultyFileIo.Hook {
        final FaultyFileIo io = new FaultyFileIo();
        private volatile Path snapshotDir;
        private volatile String suffix;
        private volatile CountDownLatch reached = new CountDownLatch(1);
        private volatile CountDownLatch release = new CountDownLatch(1);
        /** What the thread held last waits for. */
        private volatile CountDownLatch holding = new CountDownLatch(1);

        RenameGate() {
            io.hook = this;
        }

        synchronized void arm(Path snapDir, String fromSuffix) {
            snapshotDir = snapDir.toAbsolutePath();
            reached = new CountDownLatch(1);
            release = new CountDownLatch(1);
            suffix = fromSuffix;
        }

        void awaitReached(String what) throws InterruptedException {
            assertTrue(reached.await(20, TimeUnit.SECONDS), what + " was not reached");
        }

        /** Lets the thread held last go on. */
        void release() {
            holding.countDown();
        }

        @Override
        public void beforeMove(Path from, Path to) throws IOException {
            CountDownLatch held;
            synchronized (this) {
                Path d = snapshotDir;
                String s = suffix;
                if (s == null || d == null || !from.toAbsolutePath().startsWith(d) || !from.toString().endsWith(s)) {
                    return;
                }
                suffix = null;   // the first such rename only
                held = release;
                holding = held;
                reached.countDown();
            }
            try {
                if (!held.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("the test never released the rename of " + from);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while held at the rename of " + from, e);
            }
        }
    }

    @Test
    void aFollowersOwnSnapshotAndTheSameOneFromTheLeaderNeverLeaveAMetaFileNamingADataFileOfAnotherSize()
            throws Exception {
        RenameGate gate = new RenameGate();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(gate.io).segmentBytes(64 * 1024)
                .snapshotsToKeep(1)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            RaftGroup lg = c.group(leader, 1);
            RaftGroup fg = c.group(follower, 1);
            SnapshotMeta leaders = leadersSnapshotOfWhatEveryNodeApplied(c, leader);
            assertEquals(leaders.lastIndex(), fg.lastApplied(), "the follower applied what the leader's snapshot covers");
            // the same state in 100-byte chunks: the data file differs in size from the follower's own
            byte[] fromLeader = SnapshotProbe.rechunkedNewest(snapshotDir(leader), 100);
            Path snapDir = snapshotDir(follower);

            gate.arm(snapDir, ".data.tmp");
            CompletableFuture<SnapshotMeta> own = fg.takeSnapshot();
            gate.awaitReached("the rename of the follower's own data file");
            CompletableFuture<Boolean> received = SnapshotProbe.receiveWhole(fg, leaders, fromLeader);
            try {
                // Time for the received copy to be committed, were it not held back while the names are busy.
                received.get(1, TimeUnit.SECONDS);
            } catch (TimeoutException expected) {
                // held back
            }
            gate.arm(snapDir, ".meta.tmp");
            gate.release();
            gate.awaitReached("the rename of the follower's own meta file");
            // the own data file is in place, its meta file not yet: no meta file may name it
            assertEquals(List.of(), SnapshotProbe.mismatchedMetaFiles(snapDir), "files: " + names(snapDir));
            gate.release();

            assertEquals(leaders.lastIndex(), own.get(10, TimeUnit.SECONDS).lastIndex());
            assertTrue(received.get(10, TimeUnit.SECONDS), "the follower answers the leader's snapshot with success");
            assertEquals(List.of(), SnapshotProbe.mismatchedMetaFiles(snapDir), "files: " + names(snapDir));
            List<String> files = names(snapDir);
            assertEquals(2, files.size(), "one snapshot's data and meta files: " + files);
            assertNull(fg.failure());

            c.restartNode(follower);
            for (long v = 301; v <= 320; v++) {
                c.write(1, v);
            }
            c.checkIdentical(1);
        }
    }

    /** Writes 300 values, waits until every node applied them, and takes a snapshot on {@code leader}. */
    static SnapshotMeta leadersSnapshotOfWhatEveryNodeApplied(RaftCluster c, int leader) throws Exception {
        for (long v = 1; v <= 300; v++) {
            c.write(1, v);
        }
        RaftGroup lg = c.group(leader, 1);
        RaftCluster.waitFor("every node to apply every write", () -> c.runningNodes().stream()
                .allMatch(n -> c.group(n, 1).lastApplied() == lg.commitIndex()));
        return lg.takeSnapshot().get(10, TimeUnit.SECONDS);
    }

    private Path snapshotDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1").resolve("snapshot");
    }

    private static List<String> names(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }
}
