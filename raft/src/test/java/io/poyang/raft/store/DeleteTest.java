package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Deletion of compacted segments (with recycling off: SegmentRecyclingTest covers the files kept to be reused). */
@ExtendWith(NoImpossibleStates.class)
class DeleteTest {

    @TempDir
    Path dir;

    /**
     * A roll writes the end marker of the segment it leaves as a write of its own; a deletion of
     * that segment right after (a snapshot at the new segment's first item) used to close it under
     * the marker write (or an fsync of it), which then failed and failed the store.
     */
    @Test
    void aSegmentJustRolledFromIsClosedOnlyAfterItsEndMarkerIsWritten() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        Path seg0 = dir.resolve("log").resolve(LogSegment.fileName(0));
        CountDownLatch markerHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean holdMarker = new AtomicBoolean(true);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.equals(seg0) && length == LogItemCodec.HEADER_BYTES && holdMarker.compareAndSet(true, false)) {
                    markerHeld.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new InterruptedIOException();
                    }
                }
            }
        };
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(0))) {
            h.open();
            long k = 0;
            // one item at a time, each persisted and committed, until one does not fit the first segment
            for (long i = 1; markerHeld.getCount() > 0; i++) {
                assertTrue(i < 5_000, "the first segment never filled");
                h.append(items(i, i, 1, i == 1 ? 0 : 1, 1, 40));
                long item = i;
                StoreHarness.waitFor("item " + i + " to be persisted, or the first segment's end marker to be held",
                        () -> markerHeld.getCount() == 0 || h.persisted() >= item);
                if (markerHeld.getCount() == 0) {
                    k = i;   // went to the second segment, behind the held marker
                    break;
                }
                long commit = i;
                h.on(() -> {
                    h.store.setCommitIndex(commit);
                    return null;
                });
            }
            long first = k;
            CompletableFuture<Void> deleting = h.callAsync(() -> h.store.deleteBelow(first));
            Thread.sleep(300);   // the thing under test: the deletion waits for the held write
            assertFalse(deleting.isDone(), "the segment was deleted under its end marker's write");
            release.countDown();
            StoreHarness.join(deleting);
            h.awaitPersisted(k);
            assertEquals(null, h.on(h.store::failure), "the store failed");
            assertEquals(k, (long) h.on(h.store::firstIndex));
            assertFalse(Files.exists(seg0));
        }
    }

    /**
     * A deletion waiting for the end marker of the segment it deletes (as above) when the store
     * fails: the marker's write then completes on a failed store, which marks the segment for an
     * fsync that never comes, and the deletion used to wait for that fsync forever. Now it gives the
     * segment to the close and fails; the next start deletes it.
     */
    @Test
    void aDeletionWaitingForASegmentsWritesEndsWhenTheStoreFails() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        Path seg0 = dir.resolve("log").resolve(LogSegment.fileName(0));
        Path seg1 = dir.resolve("log").resolve(LogSegment.fileName(64 * 1024));
        CountDownLatch markerHeld = new CountDownLatch(1);
        CountDownLatch releaseMarker = new CountDownLatch(1);
        CountDownLatch secondHeld = new CountDownLatch(1);
        CountDownLatch failSecond = new CountDownLatch(1);
        AtomicBoolean holdMarker = new AtomicBoolean(true);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.equals(seg0) && length == LogItemCodec.HEADER_BYTES && holdMarker.compareAndSet(true, false)) {
                    markerHeld.countDown();
                    awaitHeld(releaseMarker);
                } else if (file.equals(seg1)) {
                    // the first item of the second segment: held, then failed past the (zero) retries
                    secondHeld.countDown();
                    awaitHeld(failSecond);
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        long k = 0;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files).recycledSegments(0).writeRetry(0, 1, 1))) {
            try {
                h.open();
                // one item at a time, each persisted and committed, until one does not fit the first segment
                for (long i = 1; markerHeld.getCount() > 0; i++) {
                    assertTrue(i < 5_000, "the first segment never filled");
                    h.append(items(i, i, 1, i == 1 ? 0 : 1, 1, 40));
                    long item = i;
                    StoreHarness.waitFor("item " + i + " to be persisted, or the first segment's end marker to be held",
                            () -> markerHeld.getCount() == 0 || h.persisted() >= item);
                    if (markerHeld.getCount() == 0) {
                        k = i;
                        break;
                    }
                    long commit = i;
                    h.on(() -> {
                        h.store.setCommitIndex(commit);
                        return null;
                    });
                }
                assertTrue(secondHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "item " + k + " was not written");
                long first = k;
                long saves = h.on(h.store.statusFile()::saveCount);
                CompletableFuture<Void> deleting = h.callAsync(() -> h.store.deleteBelow(first));
                h.waitFor("the deletion's status save", () -> h.store.statusFile().saveCount() > saves);
                assertFalse(h.on(deleting::isDone), "the segment was deleted under its end marker's write");

                failSecond.countDown();   // the store fails
                h.waitFor("the store to fail", () -> h.store.failure() != null);
                releaseMarker.countDown();   // completes on the failed store
                StoreHarness.waitFor("the deletion to end", deleting::isDone);
                ExecutionException e = assertThrows(ExecutionException.class, deleting::get);
                assertTrue(e.getCause() instanceof LogStoreFailedException, "not the store's failure: " + e.getCause());
            } finally {
                releaseMarker.countDown();
                failSecond.countDown();
            }
        }
        assertEquals(List.of(), files.openFiles(), "files left open after the close");
        assertTrue(Files.exists(seg0), "the close deletes nothing");
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            assertEquals(k, (long) h.on(h.store::firstIndex));
            assertFalse(Files.exists(seg0), "the start did not delete the segment below the first index");
        }
    }

    /** For a hook on an I/O thread: a latch not released in time fails the held operation. */
    private static void awaitHeld(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the held write");
            }
        } catch (InterruptedException e) {
            throw new InterruptedIOException();
        }
    }

    /** Log files below the position {@code startPos}. */
    private List<Path> segmentsBelow(long startPos) {
        try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("log"))) {
            return files.filter(p -> Long.parseLong(p.getFileName().toString()) < startPos)
                    .collect(java.util.stream.Collectors.toList());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A hook that fails the next rename of the status file while {@code failing} is set. */
    private static FaultyFileIo.Hook failStatusRename(AtomicBoolean failing) {
        return new FaultyFileIo.Hook() {
            @Override
            public void beforeMove(Path from, Path to) throws IOException {
                if (from.getFileName().toString().equals(StatusFile.TEMP_NAME) && failing.get()) {
                    throw new IOException("No space left on device (injected)");
                }
            }
        };
    }

    /**
     * A deleteBelow whose status save fails has already taken its segments out of the log; they
     * used to stay open and on disk until the process ended. Now the next status save that
     * records the new first index deletes them.
     */
    /**
     * Opens the store, appends and commits 2,000 items, and has deleteBelow(1500) fail at its status
     * save ({@code failing} is the status-rename fault's switch). Returns where the first kept
     * segment starts: every segment file below it is one the failed deletion took out.
     */
    private static long failADeleteBelow(StoreHarness h, AtomicBoolean failing) throws Exception {
        h.open();
        h.append(items(1, 2000, 1, 0, 1, 40));
        h.awaitPersisted(2000);
        h.on(() -> {
            h.store.setCommitIndex(2000);
            return null;
        });
        failing.set(true);
        assertThrows(LogStoreException.class, () -> h.call(() -> h.store.deleteBelow(1500)));
        failing.set(false);
        return h.on(() -> h.store.segmentsForTest().get(0).startPos);
    }

    @Test
    void segmentsOfADeleteWhoseStatusSaveFailedAreDeletedByTheNextSave() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        AtomicBoolean failing = new AtomicBoolean();
        io.hook = failStatusRename(failing);
        OpenFilesIo files = new OpenFilesIo(io);
        long newFirst;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files).recycledSegments(0))) {
            long keptFrom = failADeleteBelow(h, failing);
            newFirst = h.on(h.store::firstIndex);
            List<Path> below = segmentsBelow(keptFrom);
            assertTrue(below.size() >= 2, "the deletion took segments out: " + below);

            h.call(() -> h.store.saveStatus(1, 0, 2000));
            StoreHarness.waitFor("the next save to close and delete the segments the failed deletion took out: " + below,
                    () -> segmentsBelow(keptFrom).isEmpty() && files.openFiles().stream().noneMatch(below::contains));
            assertEquals(501, h.loadAll(1500, 2000).size());
        }
        assertEquals(List.of(), files.openFiles());
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(newFirst, s.getFirstIndex());
            assertEquals(2000, s.getLastIndex());
        }
    }

    /**
     * Segments a failed deleteBelow took out are closed by close when no save came between (before:
     * never; close knew only the live segments); the next start deletes them.
     */
    @Test
    void segmentsOfADeleteWhoseStatusSaveFailedAreClosedByClose() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        AtomicBoolean failing = new AtomicBoolean();
        io.hook = failStatusRename(failing);
        OpenFilesIo files = new OpenFilesIo(io);
        long newFirst;
        List<Path> below;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files).recycledSegments(0))) {
            long keptFrom = failADeleteBelow(h, failing);
            newFirst = h.on(h.store::firstIndex);
            below = segmentsBelow(keptFrom);
            assertTrue(below.size() >= 2, "the deletion took segments out: " + below);
        }
        assertEquals(List.of(), files.openFiles(), "files left open");
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(newFirst, s.getFirstIndex());
            for (Path p : below) {
                assertFalse(Files.exists(p), p + " is deleted by the start");
            }
            assertEquals(2000 - newFirst + 1, h.loadAll(newFirst, 2000).size());
        }
    }

    @Test
    void deletesBelowButNotUnderAnActiveReader() {
        FaultyFileIo io = new FaultyFileIo();
        Path seg0 = dir.resolve("log").resolve(LogSegment.fileName(0));
        Path seg1 = dir.resolve("log").resolve(LogSegment.fileName(64 * 1024));
        long newFirst;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(0))) {
            h.open();
            h.append(items(1, 3000, 1, 0, 1, 40));
            h.awaitPersisted(3000);
            h.on(() -> {
                h.store.setCommitIndex(3000);
                return null;
            });
            assertThrows(IllegalArgumentException.class, () -> h.call(() -> h.store.deleteBelow(3002)));

            CountDownLatch readEntered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            io.hook = FaultyFileIo.holdingFirstRead(seg0, readEntered, release);
            CompletableFuture<List<LogItem>> reading = h.callAsync(() -> h.store.load(1, 100, 1 << 20));
            await(readEntered);

            h.call(() -> h.store.deleteBelow(2000));
            newFirst = h.on(h.store::firstIndex);
            assertTrue(newFirst > 1 && newFirst <= 2000, "first index moved to a segment start: " + newFirst);
            assertTrue(Files.exists(seg0), "the segment being read is kept");
            assertFalse(Files.exists(seg1), "an unread segment below the index is deleted");
            assertThrows(IllegalArgumentException.class, () -> h.load(1, 10, 1 << 20));

            release.countDown();
            List<LogItem> got = StoreHarness.join(reading);
            assertEquals(100, got.size());
            for (LogItem it : got) {
                assertArrayEquals(bodyFor(it.getIndex(), 1, 40), bodyOf(it));
            }
            StoreHarness.waitFor("the read segment to be deleted after its reader left", () -> !Files.exists(seg0));
            assertEquals(3000 - newFirst + 1, h.loadAll(newFirst, 3000).size());
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(newFirst, s.getFirstIndex());
            assertEquals(3000, s.getLastIndex());
            List<LogItem> all = h.loadAll(newFirst, 3000);
            assertEquals(newFirst, all.get(0).getIndex());
            assertArrayEquals(bodyFor(3000, 1, 40), bodyOf(all.get(all.size() - 1)));
            assertEquals(1, (int) h.on(() -> h.store.termOf(newFirst - 1)));
        }
    }

    /**
     * Regression (found by restarting a raft cluster while writes went on): recovery starts its scan
     * at the trusted point, which may lie inside a segment; it took the first item it scanned there
     * for the segment's first item. A later deleteBelow then moved the first index to that item while
     * recording the segment's start as its position, and the next start refused the log as corrupt
     * ("index chain broken … below the commit index").
     */
    @Test
    void aSegmentWhoseStartRecoveryDidNotScanKeepsItsRealFirstIndex() {
        long segmentTwoFirst;
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            h.open();
            h.append(items(1, 3000, 1, 0, 1, 40));
            h.awaitPersisted(3000);
            segmentTwoFirst = firstIndexOfSegment(h, 1);
            // the trusted point goes to the commit index at close: well inside the second segment
            long commit = segmentTwoFirst + 100;
            h.on(() -> {
                h.store.setCommitIndex(commit);
                return null;
            });
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(3000, s.getLastIndex());
            assertEquals(segmentTwoFirst, firstIndexOfSegment(h, 1), "the second segment's first index after recovery");
            h.on(() -> {
                h.store.setCommitIndex(3000);
                return null;
            });
            h.call(() -> h.store.deleteBelow(segmentTwoFirst + 200));
            assertEquals(segmentTwoFirst, (long) h.on(h.store::firstIndex));
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(segmentTwoFirst, s.getFirstIndex());
            assertEquals(3000, s.getLastIndex());
            List<LogItem> all = h.loadAll(segmentTwoFirst, 3000);
            assertEquals(3000 - segmentTwoFirst + 1, all.size());
            assertArrayEquals(bodyFor(segmentTwoFirst, 1, 40), bodyOf(all.get(0)));
        }
    }

    /**
     * After a reset the log starts in the middle of a segment whose beginning holds older items;
     * recovery (its scan starting at a trusted point later on) must take the log's first index as
     * that segment's, not the stale item at the segment's start.
     */
    @Test
    void aLogThatStartsInsideASegmentAfterAResetKeepsItsFirstIndexAcrossRestarts() {
        long first;
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            h.open();
            h.append(items(1, 300, 1, 0, 1, 40));
            h.awaitPersisted(300);
            h.on(() -> {
                h.store.setCommitIndex(200);
                return null;
            });
            // a snapshot at 5000 that this log does not match: it restarts at 5001, inside segment 0
            h.call(() -> h.store.resetAfterSnapshot(5000, 2));
            first = h.on(h.store::firstIndex);
            assertEquals(5001, first);
            h.append(items(5001, 8000, 2, 2, 2, 40));
            h.awaitPersisted(8000);
            h.on(() -> {
                h.store.setCommitIndex(7000);
                return null;
            });
        }
        long secondSegmentFirst;
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(5001, s.getFirstIndex());
            assertEquals(8000, s.getLastIndex());
            assertEquals(5001, firstIndexOfSegment(h, 0), "the segment the log starts in");
            secondSegmentFirst = firstIndexOfSegment(h, 1);
            assertTrue(secondSegmentFirst > 5001, "second segment starts at " + secondSegmentFirst);
            h.on(() -> {
                h.store.setCommitIndex(8000);
                return null;
            });
            h.call(() -> h.store.deleteBelow(secondSegmentFirst + 10));
            assertEquals(secondSegmentFirst, (long) h.on(h.store::firstIndex));
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.recycledSegments(0))) {
            RecoveredState s = h.open();
            assertEquals(secondSegmentFirst, s.getFirstIndex());
            List<LogItem> all = h.loadAll(secondSegmentFirst, 8000);
            assertArrayEquals(bodyFor(secondSegmentFirst, 2, 40), bodyOf(all.get(0)));
            assertArrayEquals(bodyFor(8000, 2, 40), bodyOf(all.get(all.size() - 1)));
        }
    }

    /** The first index the store holds for its {@code n}-th live segment. */
    private static long firstIndexOfSegment(StoreHarness h, int n) {
        return h.on(() -> h.store.segmentsForTest().get(n).firstIndex);
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(StoreHarness.TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new AssertionError("timed out");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
