package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Torn tails are cut; damage at or below the commit index stops the store with the file and offset. */
@ExtendWith(NoImpossibleStates.class)
class RecoveryTest {

    private static final int N = 100;

    @TempDir
    Path dir;
    /** Log positions of item N and of the byte after it, recorded while writing. */
    private long posOfLast;
    private long endOfLast;

    /** Writes items 1..N in one segment (0), declares {@code commit} and stops without closing (as a crash would). */
    private void writeLog(long commit) {
        StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20).indexFlushEntries(1 << 20));
        h.open();
        h.append(items(1, N, 1, 0, 1, 30));
        h.awaitPersisted(N);
        if (commit > 0) {
            h.call(() -> h.store.saveStatus(1, 2, commit));
        }
        posOfLast = h.on(() -> h.store.index().positionInMemory(N));
        endOfLast = h.on(() -> h.store.appender().nextPos());
        h.shutdown();
    }

    private Path segment0() {
        return dir.resolve("log").resolve(LogSegment.fileName(0));
    }

    private void overwrite(long offset, byte[] bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(segment0().toFile(), "rw")) {
            f.seek(offset);
            f.write(bytes);
            f.getFD().sync();
        }
    }

    private RecoveredState reopenAndCheck(long expectLast) {
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            RecoveredState s = h.open();
            assertEquals(expectLast, s.getLastIndex());
            for (LogItem it : h.loadAll(1, expectLast)) {
                assertArrayEquals(bodyFor(it.getIndex(), 1, 30), bodyOf(it));
            }
            // The log goes on after the cut.
            h.append(items(expectLast + 1, expectLast + 5, 2, 1, 9, 30));
            h.awaitPersisted(expectLast + 5);
            return s;
        }
    }

    @Test
    void cleanZeroedTailIsTheEnd() {
        writeLog(0);
        RecoveredState s = reopenAndCheck(N);
        assertFalse(s.hadTornTail());
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            assertEquals(N + 5, h.open().getLastIndex());
        }
    }

    @Test
    void partialLastItemIsCut() throws IOException {
        writeLog(0);
        long half = (endOfLast - posOfLast) / 2;
        overwrite(posOfLast + half, new byte[(int) (endOfLast - posOfLast - half)]);
        assertTrue(reopenAndCheck(N - 1).hadTornTail());
    }

    @Test
    void garbageAfterTheLastItemIsCut() throws IOException {
        writeLog(0);
        byte[] garbage = new byte[300];
        new Random(5).nextBytes(garbage);
        overwrite(endOfLast, garbage);
        assertTrue(reopenAndCheck(N).hadTornTail());
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            RecoveredState s = h.open();
            assertEquals(N + 5, s.getLastIndex());
            assertFalse(s.hadTornTail(), "the cut was made durable");
        }
    }

    @Test
    void zeroedLastItemIsACleanEnd() throws IOException {
        writeLog(0);
        overwrite(posOfLast, new byte[(int) (endOfLast - posOfLast)]);
        assertFalse(reopenAndCheck(N - 1).hadTornTail());
    }

    @Test
    void corruptionBelowCommitRefusesToStartAndTouchesNothing() throws IOException {
        writeLog(80);
        long pos60;
        // Flip one body byte of index 60 (above the trusted point, at or below the commit index).
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            h.open();
            pos60 = h.on(() -> h.store.index().positionInMemory(60));
            h.shutdown();
        }
        overwrite(pos60 + LogItemCodec.HEADER_BYTES + 2, new byte[]{(byte) 0x5A});
        byte[] before = Files.readAllBytes(segment0());
        byte[] statusBefore = Files.readAllBytes(dir.resolve("status"));
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            LogCorruptedException e = assertThrows(LogCorruptedException.class, h::open);
            assertEquals(segment0(), e.file());
            assertEquals(pos60, e.fileOffset());
            assertTrue(e.getMessage().contains("commit index"), e.getMessage());
            assertTrue(e.getMessage().contains(segment0().toString()), e.getMessage());
            h.shutdown();
        }
        assertArrayEquals(before, Files.readAllBytes(segment0()), "the damaged segment is left as it was");
        assertArrayEquals(statusBefore, Files.readAllBytes(dir.resolve("status")));
    }

    @Test
    void logEndingBelowCommitRefusesToStart() throws IOException {
        writeLog(80);
        long pos70;
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            h.open();
            pos70 = h.on(() -> h.store.index().positionInMemory(70));
            h.shutdown();
        }
        overwrite(pos70, new byte[(int) (endOfLast - pos70)]);
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(1 << 20))) {
            LogCorruptedException e = assertThrows(LogCorruptedException.class, h::open);
            assertEquals(pos70, e.fileOffset());
            assertTrue(e.getMessage().contains("ends at index 69"), e.getMessage());
            h.shutdown();
        }
    }

    @Test
    void segmentsWithoutTheirStatusFileAreRefusedNotDeleted() throws IOException {
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(64 * 1024))) {
            h.open();
            h.append(items(1, 3000, 1, 0, 1, 30));
            h.awaitPersisted(3000);
            h.on(() -> {
                h.store.setCommitIndex(3000);
                return null;
            });
            h.call(() -> h.store.deleteBelow(2500));
        }
        Files.delete(dir.resolve("status"));   // an operator's mistake
        try (StoreHarness h = new StoreHarness(dir, null)) {
            LogCorruptedException e = assertThrows(LogCorruptedException.class, h::open);
            assertTrue(e.getMessage().contains("status file"), e.getMessage());
            assertTrue(Files.exists(e.file()), "nothing deleted");
            h.shutdown();
        }
    }

    @Test
    void anEmptyFirstSegmentLeftByACrashIsDroppedNotUsed() throws IOException {
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(64 * 1024))) {
            h.open();   // a new group: its status file says the log starts at position 0
        }
        // a crash during the group's first preallocation: the first segment's file exists, empty
        try (Stream<Path> files = Files.list(dir.resolve("log"))) {
            for (Path p : files.collect(Collectors.toList())) {
                Files.delete(p);
            }
        }
        Files.write(dir.resolve("log").resolve(LogSegment.fileName(0)), new byte[0]);
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(64 * 1024))) {
            h.open();
            h.append(items(1, 3000, 1, 0, 1, 30));
            h.awaitPersisted(3000);
            h.on(() -> {
                h.store.setCommitIndex(3000);
                return null;
            });
            h.call(() -> h.store.deleteBelow(10));
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(64 * 1024))) {
            RecoveredState s = h.open();
            assertEquals(3000, s.getLastIndex());
            assertEquals(3000, h.loadAll(s.getFirstIndex(), 3000).size() + s.getFirstIndex() - 1);
        }
    }

    @Test
    void recoveryFromTheTrustedPointAfterClose() {
        try (StoreHarness h = new StoreHarness(dir, c -> c.indexFlushEntries(16))) {
            h.open();
            h.append(items(1, 2000, 1, 0, 1, 30));
            h.awaitPersisted(2000);
            h.append(items(2001, 2100, 3, 1, 1, 30));
            h.awaitPersisted(2100);
            h.call(() -> h.store.saveStatus(3, 1, 2050));
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(2100, s.getLastIndex());
            assertEquals(3, s.getLastTerm());
            assertEquals(2050, s.getCommitIndex());
            assertEquals(3, s.getCurrentTerm());
            assertEquals(1, s.getVotedFor());
            assertEquals(1, (int) h.on(() -> h.store.termOf(2000)));
            assertEquals(3, (int) h.on(() -> h.store.termOf(2001)));
            assertEquals(new IndexTerm(2000, 1), h.on(() -> h.store.findLastMatch(2, 2100)));
            for (LogItem it : h.loadAll(1, 2100)) {
                assertArrayEquals(bodyFor(it.getIndex(), 1, 30), bodyOf(it));
            }
        }
    }
    /** Opening one segment fails at start (too many open files): the ones opened before it are closed. */
    @Test
    void aRecoveryThatCannotOpenASegmentClosesTheOnesItOpened() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 1000, 1, 0, 1, 30));   // 64 KiB segments: several of them
            h.awaitPersisted(1000);
        }
        Path third = dir.resolve("log").resolve(LogSegment.fileName(2 * 64 * 1024));
        assertTrue(Files.exists(third));
        OpenFilesIo files = new OpenFilesIo(new FileIo() {
            @Override
            public LogFile open(Path path) throws IOException {
                if (path.equals(third)) {
                    throw new IOException("Too many open files (injected)");
                }
                return FileIo.DEFAULT.open(path);
            }

            @Override
            public void syncDirectory(Path d) throws IOException {
                FileIo.DEFAULT.syncDirectory(d);
            }

            @Override
            public void atomicMove(Path from, Path to) throws IOException {
                FileIo.DEFAULT.atomicMove(from, to);
            }

            @Override
            public void delete(Path path) throws IOException {
                FileIo.DEFAULT.delete(path);
            }
        });
        StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files));
        try {
            RuntimeException e = assertThrows(RuntimeException.class, h::open);
            assertTrue(String.valueOf(e.getCause()).contains("Too many open files"), String.valueOf(e.getCause()));
        } finally {
            h.shutdown();
        }
        assertEquals(java.util.List.of(), files.openFiles(), "segments left open by the failed recovery");
    }
    /**
     * A status save whose directory fsync failed (or that a kill cut between the rename and that
     * fsync) left the new status visible but its directory entry maybe not durable; recovery reads it
     * and acts on it (a vote read back counts as saved), so it makes the directory entries durable
     * before anything else: the group directory, log/ (spare segments) and idx/.
     */
    @Test
    void recoveryMakesTheDirectoryEntriesAKilledProcessLeftDurableFirst() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        java.util.concurrent.atomic.AtomicBoolean failDirSync = new java.util.concurrent.atomic.AtomicBoolean();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeSyncDirectory(Path d) throws IOException {
                if (failDirSync.get() && d.equals(dir)) {
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        StoreHarness a = new StoreHarness(dir, c -> c.fileIo(io));
        a.open();
        a.append(items(1, 20, 1, 0, 1, 30));
        a.awaitPersisted(20);
        failDirSync.set(true);
        assertThrows(RuntimeException.class, () -> a.call(() -> a.store.saveStatus(2, 3, 0)));
        a.shutdown();   // "killed": the renamed status is visible, its directory entry not synced

        java.util.List<Path> synced = new java.util.concurrent.CopyOnWriteArrayList<>();
        FaultyFileIo recording = new FaultyFileIo();
        recording.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeSyncDirectory(Path d) {
                synced.add(d);
            }
        };
        StoreHarness b = new StoreHarness(dir, c -> c.fileIo(recording));
        try {
            RecoveredState s = b.open();
            assertEquals(2, s.getCurrentTerm(), "the status the failed save renamed in is the one read");
            assertTrue(synced.containsAll(java.util.List.of(dir, dir.resolve("log"), dir.resolve("idx"))),
                    "directories synced during the start: " + synced);
        } finally {
            b.close();
        }
    }
}
