package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.store.FaultyFileIo;
import io.poyang.raft.store.LogCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The disk fills up (ENOSPC injected through the group's {@code FileIo}) at one chosen step of
 * writing a snapshot's files: on a leader taking one, and on a follower receiving one from the
 * leader. Nothing acknowledged is lost, the previous snapshot stays, no partial file stays, the
 * node retries and says where to free space, and it recovers once space is free.
 */
class SnapshotDiskFullTest {

    @TempDir
    Path dir;

    /** The steps of writing a snapshot's files, each of which the disk can refuse. */
    enum Step {
        DATA_WRITE, DATA_FSYNC, DATA_RENAME, DIR_SYNC, META_WRITE, META_FSYNC, META_RENAME,
        /** The directory sync after the meta file's rename: the snapshot looks complete, but is it durable? */
        DIR_SYNC_AFTER_META
    }

    /**
     * Fails one {@link Step} with ENOSPC in one snapshot directory until freed; the rest passes. The
     * hook of a {@link FaultyFileIo} shared by the cluster's nodes ({@link #io}). Any thread.
     */
    static final class SnapshotStepFaults implements FaultyFileIo.Hook {
        final FaultyFileIo io = new FaultyFileIo();
        private volatile Path dir;
        private volatile Step failing;
        /** Set by a meta file's rename, cleared by the next directory sync (a snapshot is written on one thread). */
        private volatile boolean metaRenamed;
        /** Operations refused so far. */
        final AtomicLong refused = new AtomicLong();

        SnapshotStepFaults() {
            io.hook = this;
        }

        void fail(Path snapshotDir, Step step) {
            dir = snapshotDir.toAbsolutePath();
            failing = step;
        }

        void free() {
            failing = null;
        }

        private void check(Step step, Path file) throws IOException {
            Path d = dir;
            if (step != null && step == failing && d != null && file.toAbsolutePath().startsWith(d)) {
                refused.incrementAndGet();
                throw new IOException(FullDiskFileIo.ENOSPC + " (injected, " + step + " of " + file + ")");
            }
        }

        /** A data file being written (taken here or received from the leader), or a meta file. */
        private static Step kind(Path file, Step data, Step meta) {
            String n = file.getFileName().toString();
            if (n.endsWith(".data.tmp") || n.equals("receiving.tmp")) {
                return data;
            }
            return n.endsWith(".meta.tmp") ? meta : null;
        }

        @Override
        public void beforeWrite(Path file, long position, int length) throws IOException {
            check(kind(file, Step.DATA_WRITE, Step.META_WRITE), file);
        }

        @Override
        public void beforeForce(Path file, boolean metadata) throws IOException {
            check(kind(file, Step.DATA_FSYNC, Step.META_FSYNC), file);
        }

        @Override
        public void beforeSyncDirectory(Path d) throws IOException {
            boolean afterMeta = metaRenamed;
            metaRenamed = false;
            check(afterMeta ? Step.DIR_SYNC_AFTER_META : Step.DIR_SYNC, d);
        }

        @Override
        public void beforeMove(Path from, Path to) throws IOException {
            Step step = kind(from, Step.DATA_RENAME, Step.META_RENAME);
            check(step, from);
            metaRenamed = step == Step.META_RENAME;   // the move itself follows and does not fail here
        }
    }

    private static List<String> names(Path d) {
        try (Stream<Path> files = Files.list(d)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path snapshotDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1").resolve("snapshot");
    }

    /** Writes values from..from+count-1 through the leader, 200 at a time; returns the next value. */
    private static long writeMany(RaftCluster c, long from, int count, Set<Long> acknowledged) throws Exception {
        long v = from;
        while (v < from + count) {
            RaftGroup leader = c.group(c.waitForLeader(1), 1);
            List<CompletableFuture<?>> batch = new ArrayList<>();
            for (int i = 0; i < 200 && v < from + count; i++, v++) {
                long value = v;
                batch.add(leader.submit(0, TestStateMachine.body(value), 10_000).thenRun(() -> acknowledged.add(value)));
            }
            CompletableFuture.allOf(batch.toArray(new CompletableFuture[0])).get(20, TimeUnit.SECONDS);
        }
        return v;
    }

    private static void checkAcknowledgedApplied(RaftCluster c, Set<Long> acknowledged) {
        Set<Long> applied = new HashSet<>();
        for (long v : c.checkIdentical(1)) {
            assertTrue(applied.add(v), "value " + v + " applied twice");
        }
        for (long v : acknowledged) {
            assertTrue(applied.contains(v), "acknowledged value " + v + " is lost");
        }
    }

    private static long warningsAbout(LogCounter logs, String what) {
        long n = 0;
        for (Map.Entry<String, AtomicLong> e : logs.byMessage.entrySet()) {
            if (e.getKey().contains(what)) {
                n += e.getValue().get();
            }
        }
        return n;
    }

    @Test
    void aLeaderSnapshotFailingAtAnyFileStepLeavesOnlyThePreviousSnapshotNamesTheDirectoryAndARestartRecoversFromIt()
            throws Exception {
        SnapshotStepFaults faults = new SnapshotStepFaults();
        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1},
                rc -> rc.logFileIo(faults.io).segmentBytes(64 * 1024))
                .start()) {
            c.waitForLeader(1);
            long next = writeMany(c, 1, 2_000, acknowledged);
            SnapshotMeta first = c.group(1, 1).takeSnapshot().get(10, TimeUnit.SECONDS);
            assertNotNull(first);
            RaftCluster.waitFor("the log below the first snapshot to be deleted", () -> c.group(1, 1).firstLogIndex() > 1);
            Path snapDir = snapshotDir(1);
            List<String> previous = names(snapDir);
            assertEquals(2, previous.size(), "the first snapshot's data and meta files: " + previous);
            for (Step step : Step.values()) {
                next = writeMany(c, next, 50, acknowledged);   // something new to snapshot
                long refusedBefore = faults.refused.get();
                faults.fail(snapDir, step);
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> c.group(1, 1).takeSnapshot().get(10, TimeUnit.SECONDS));
                String m = String.valueOf(e.getCause().getMessage());
                assertTrue(faults.refused.get() > refusedBefore, step + " was not reached through the FileIo: " + m);
                assertTrue(m.contains(FullDiskFileIo.ENOSPC) && m.contains(snapDir.toString()) && m.contains("free space"),
                        step + ": " + m);
                assertEquals(previous, names(snapDir), step + ": only the previous snapshot's files remain");
                assertNull(c.group(1, 1).failure(), step + ": a failed snapshot does not fail the group");
                faults.free();
            }
            next = writeMany(c, next, 50, acknowledged);
            // starts from the first snapshot (the log below it is gone) plus the log
            c.restartNode(1);
            c.waitForLeader(1);
            checkAcknowledgedApplied(c, acknowledged);
            SnapshotMeta later = c.group(1, 1).takeSnapshot().get(10, TimeUnit.SECONDS);
            assertTrue(later.lastIndex() > first.lastIndex());
            assertTrue(names(snapDir).stream().noneMatch(n -> n.endsWith(".tmp")), String.valueOf(names(snapDir)));
            writeMany(c, next, 10, acknowledged);
            checkAcknowledgedApplied(c, acknowledged);
        }
    }

    @Test
    void snapshotsFailingOnAFullDiskAreRetriedAtEachTriggerWithoutAWarningEachAndSucceedOnceSpaceIsFree()
            throws Exception {
        SnapshotStepFaults faults = new SnapshotStepFaults();
        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        try (LogCounter logs = new LogCounter();
             RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(faults.io).snapshotEvery(100, 0))
                     .start()) {
            c.waitForLeader(1);
            Path snapDir = snapshotDir(1);
            faults.fail(snapDir, Step.META_WRITE);
            // writes until a few attempts were refused (a fixed count could all be applied while the
            // first attempt runs, on a fast run)
            long next = 1;
            while (faults.refused.get() < 5) {
                assertTrue(next < 30_000, "only " + faults.refused.get() + " attempts after " + next + " writes");
                next = writeMany(c, next, 200, acknowledged);
            }
            // the writes are done, so no attempt starts any more; the last one may still be running
            RaftCluster.waitFor("the failed attempts' files to be removed", () -> names(snapDir).isEmpty());
            long warnings = warningsAbout(logs, "taking a snapshot failed");
            System.out.println("SNAPSHOT-DISKFULL " + faults.refused.get() + " attempts refused, " + warnings
                    + " warnings; " + logs.byMessage);
            assertTrue(warnings <= 2, faults.refused.get() + " failed attempts logged " + warnings + " warnings");
            assertNull(c.group(1, 1).failure());
            faults.free();
            writeMany(c, next, 200, acknowledged);
            RaftCluster.waitFor("a snapshot taken by its trigger once space is free",
                    () -> names(snapDir).stream().anyMatch(n -> n.endsWith(".meta")));
            checkAcknowledgedApplied(c, acknowledged);
        }
    }

    @Test
    void aFollowerFailingAtAnyFileStepOfASnapshotFromTheLeaderLeavesOnlyItsOwnSnapshotAndInstallsItOnceSpaceIsFree()
            throws Exception {
        SnapshotStepFaults faults = new SnapshotStepFaults();
        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        try (LogCounter logs = new LogCounter();
             RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(faults.io).segmentBytes(64 * 1024)
                     .snapshotsToKeep(1).snapshotChunkBytes(16 * 1024)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            long next = writeMany(c, 1, 200, acknowledged);
            RaftGroup fg = c.group(follower, 1);
            RaftCluster.waitFor("the follower to apply the first writes",
                    () -> fg.lastApplied() >= c.group(leader, 1).commitIndex());
            assertNotNull(fg.takeSnapshot().get(10, TimeUnit.SECONDS));
            Path snapDir = snapshotDir(follower);
            List<String> own = names(snapDir);
            assertEquals(2, own.size(), String.valueOf(own));
            c.faults.isolate(follower);
            next = writeMany(c, next, 3_000, acknowledged);
            long missedFrom = fg.lastLogIndex() + 1;
            for (int n : c.runningMembers(1)) {
                if (n != follower) {
                    assertNotNull(c.group(n, 1).takeSnapshot().get(10, TimeUnit.SECONDS));
                }
            }
            RaftGroup lg = c.group(leader, 1);
            RaftCluster.waitFor("the leader's log to start after the follower's", () -> lg.firstLogIndex() > missedFrom);
            c.faults.heal();
            for (Step step : Step.values()) {
                long refusedBefore = faults.refused.get();
                faults.fail(snapDir, step);
                RaftCluster.waitFor(step + " to be reached on the follower", () -> faults.refused.get() > refusedBefore);
                // between the leader's attempts nothing but the follower's own snapshot is there
                RaftCluster.waitFor(step + ": the partial files to be removed (" + names(snapDir) + ")",
                        () -> names(snapDir).equals(own));
                assertNull(fg.failure(), step + ": the follower retries, its group does not fail");
            }
            long warnings = warningsAbout(logs, "receiving a snapshot");
            System.out.println("SNAPSHOT-DISKFULL follower refused " + faults.refused.get() + " operations, "
                    + warnings + " warnings; " + logs.byMessage);
            assertTrue(warnings <= 2, warnings + " warnings for " + faults.refused.get() + " failed transfers");
            // the leader says why the follower refused, and not at every attempt
            List<String> refusals = logs.messages.stream().filter(m -> m.contains("refused the chunk"))
                    .collect(Collectors.toList());
            assertTrue(!refusals.isEmpty() && refusals.size() <= 2, "the leader's warnings: " + refusals);
            for (String m : refusals) {
                assertTrue(m.contains(FullDiskFileIo.ENOSPC) && m.contains(snapDir.toString()), m);
            }
            faults.free();
            RaftCluster.waitFor("the follower to install the leader's snapshot once space is free",
                    () -> fg.firstLogIndex() > missedFrom && fg.lastApplied() >= lg.commitIndex());
            RaftCluster.waitFor("the received snapshot to replace the follower's own (one kept): " + names(snapDir),
                    () -> names(snapDir).stream().noneMatch(n -> n.endsWith(".tmp") || own.contains(n)));
            next = writeMany(c, next, 50, acknowledged);
            c.restartNode(follower);
            writeMany(c, next, 10, acknowledged);
            checkAcknowledgedApplied(c, acknowledged);
        }
    }
}
