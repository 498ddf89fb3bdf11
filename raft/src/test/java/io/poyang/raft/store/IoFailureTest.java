package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Failed writes are retried with back-off; a failed fsync fails the store, loudly and for good. */
@ExtendWith(NoImpossibleStates.class)
class IoFailureTest {

    @TempDir
    Path dir;

    private static boolean isLog(Path file) {
        return file.getParent().getFileName().toString().equals("log");
    }

    @Test
    void failedWritesAreRetried() {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger failures = new AtomicInteger();
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).writeRetry(5, 1, 4))) {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) throws IOException {
                    if (isLog(file) && failures.incrementAndGet() <= 3) {
                        throw new IOException("No space left on device (injected)");
                    }
                }
            };
            h.append(items(11, 20, 1, 1, 0, 20));
            h.awaitPersisted(20);
            assertTrue(failures.get() >= 4, "three failures and a success: " + failures.get());
            assertNull(h.on(h.store::failure));
            assertEquals(20, h.loadAll(1, 20).size());
        }
    }

    @Test
    void writeFailingPastTheRetryLimitFailsTheStore() {
        FaultyFileIo io = new FaultyFileIo();
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).writeRetry(2, 1, 2))) {
            h.open();
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) throws IOException {
                    if (isLog(file)) {
                        throw new IOException("Input/output error (injected)");
                    }
                }
            };
            h.append(items(1, 10, 1, 0, 0, 20));
            assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(10));
            assertEquals(0, h.persisted());
            assertThrows(LogStoreFailedException.class, () -> h.append(items(11, 11, 1, 1, 0, 20)));
            io.hook = new FaultyFileIo.Hook() {
            };
        }
    }

    @Test
    void failedFsyncFailsTheStoreAndIsNotRetried() {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger fsyncs = new AtomicInteger();
        try (StoreHarness h = openWithTenPersisted(io)) {
            io.hook = failingLogFsyncs(fsyncs, Integer.MAX_VALUE, 0);
            h.append(items(11, 20, 1, 1, 0, 20));
            LogStoreFailedException e = assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(20));
            assertTrue(e.getMessage().contains("fsync"), e.getMessage());
            assertEquals(10, h.persisted(), "nothing the failed fsync covered is reported persisted");
            assertEquals(1, fsyncs.get(), "a failed fsync is never retried");
            assertNotNull(h.on(h.store::failure));
            assertThrows(LogStoreFailedException.class, () -> h.append(items(21, 21, 1, 1, 0, 20)));
            io.hook = new FaultyFileIo.Hook() {
            };
        }
        // Restarted on the same boot, the store would read 11..20 back from the page cache, where a
        // failed fsync can leave pages the disk never got: recovery cuts after 10, the last index
        // an fsync covered, which the failure recorded in the status file.
        try (StoreHarness h = new StoreHarness(dir, null)) {
            assertEquals(10, h.open().getLastIndex());
            assertFalse(statusText().contains("fsyncFailedAfter"), "the mark is gone once the cut is saved");
            h.append(items(11, 20, 1, 1, 3, 20));
            h.awaitPersisted(20);
        }
        // and only once: what was appended after the cut stays
        try (StoreHarness h = new StoreHarness(dir, null)) {
            assertEquals(20, h.open().getLastIndex());
            for (LogItem it : h.loadAll(11, 20)) {
                assertArrayEquals(StoreHarness.bodyFor(it.getIndex(), 3, 20), StoreHarness.bodyOf(it));
            }
        }
    }

    /**
     * A chained fsync fails while the next one, covering a segment a deletion waits for, is already
     * published. The runner gave the chain up without taking it and a failed store publishes no
     * more, so nothing took it: the segment kept an fsync due for good, and the deletion (started
     * before the failure, waiting for that segment's I/O to end) never ended. Now the dispatcher
     * drops what is published when it hears of the failure.
     */
    @Test
    void aDeletionWaitingForASegmentInTheFsyncPublishedWhenAChainedOneFailedEnds() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        Path first = dir.resolve("log").resolve(LogSegment.fileName(0));
        AtomicBoolean holdNextFsync = new AtomicBoolean();
        CountDownLatch fsyncHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (file.equals(first) && holdNextFsync.compareAndSet(true, false)) {
                    fsyncHeld.countDown();
                    await(release);
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        // recycledSegments(0): the first segment is deleted, not kept for reuse, so its end is seen on disk
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(0))) {
            try {
                h.open();
                h.append(items(1, 10, 1, 0, 0, 1000));
                h.awaitPersisted(10);
                holdNextFsync.set(true);
                h.append(items(11, 11, 1, 1, 0, 1000));
                assertTrue(fsyncHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "no fsync was held");
                // fill the first segment and go on in the second: both are written behind the held
                // fsync, so the next fsync, published meanwhile, covers the first segment again
                h.append(items(12, 80, 1, 1, 0, 1000));
                h.waitFor("items 12 to 80 written", () -> h.store.writtenIndex() >= 80);
                long second = h.on(() -> h.store.segmentsForTest().get(1).firstIndex);
                assertTrue(second > 11 && second <= 80, "the second segment starts at " + second);
                h.on(() -> {
                    h.store.setCommitIndex(second - 1);
                    return null;
                });
                long saves = h.on(h.store.statusFile()::saveCount);
                CompletableFuture<Void> deleting = h.callAsync(() -> h.store.deleteBelow(second));
                // the status save comes first; the deletion then waits for the first segment's fsyncs
                h.waitFor("the deletion's status save", () -> h.store.statusFile().saveCount() > saves);
                assertFalse(h.on(deleting::isDone), "the first segment was deleted under its fsync");

                release.countDown();
                assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(80));
                StoreHarness.waitFor("the deletion of the first segment to end", deleting::isDone);
                StoreHarness.join(deleting);
                assertFalse(java.nio.file.Files.exists(first), "the first segment is still on disk");
                assertEquals(10, h.persisted(), "nothing after the failed fsync is reported persisted");
            } finally {
                release.countDown();   // before the harness stops the I/O threads
            }
        }
    }

    private static void await(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the held fsync");
            }
        } catch (InterruptedException e) {
            throw new InterruptedIOException();
        }
    }

    private String statusText() {
        try {
            return new String(java.nio.file.Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME)),
                    java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aSuccessfulFsyncAfterAFailedOneReportsNothingPersisted() {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger fsyncs = new AtomicInteger();
        try (StoreHarness h = openWithTenPersisted(io)) {
            // the first fsync from here fails after a while (writes go on meanwhile and queue the next
            // fsync); the ones after it succeed, as they do on Linux once the error was reported
            io.hook = failingLogFsyncs(fsyncs, 1, 50);
            h.append(items(11, 15, 1, 1, 0, 20));
            h.append(items(16, 20, 1, 1, 0, 20));
            assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(20));
            // a pause, not a synchronisation: any fsync started after the failed one has returned by then
            java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
            assertEquals(10, h.persisted(), "nothing after the failed fsync is reported persisted, " + fsyncs.get()
                    + " fsyncs");
            io.hook = new FaultyFileIo.Hook() {
            };
        }
    }

    /**
     * Counts the log's fsyncs in {@code fsyncs}; the first {@code failing} of them fail with an I/O
     * error after {@code delayMillis}, the others go through.
     */
    private static FaultyFileIo.Hook failingLogFsyncs(AtomicInteger fsyncs, int failing, long delayMillis) {
        return new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (isLog(file) && !metadata && fsyncs.incrementAndGet() <= failing) {
                    java.util.concurrent.locks.LockSupport.parkNanos(delayMillis * 1_000_000L);
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
    }

    /** A store on {@code io}, open, with items 1 to 10 written and persisted before any fault. */
    private StoreHarness openWithTenPersisted(FaultyFileIo io) {
        StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io));
        try {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            return h;
        } catch (RuntimeException | Error e) {
            h.close();
            throw e;
        }
    }
    /** The final status save of close fails (a full disk): the files are closed all the same, then the error is reported. */
    @Test
    void aCloseWhoseStatusSaveFailsStillClosesEveryFile() {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files))) {
            h.open();
            h.append(items(1, 1000, 1, 0, 0, 20));   // several segments and index files
            h.awaitPersisted(1000);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeMove(Path from, Path to) throws IOException {
                    throw new IOException("No space left on device (injected)");
                }
            };
            LogStoreException e = assertThrows(LogStoreException.class, () -> h.call(h.store::close));
            assertTrue(e.getMessage().contains("saving"), e.getMessage());
        }
        assertEquals(java.util.List.of(), files.openFiles(), "files left open after the close");
    }

    /** The final index flush of close fails: the files are closed all the same, then the error is reported. */
    @Test
    void aCloseWhoseIndexFlushFailsStillClosesEveryFile() {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files))) {
            h.open();
            h.append(items(1, 1000, 1, 0, 0, 20));
            h.awaitPersisted(1000);
            h.waitFor("the index flushes to end", () -> !h.store.index().isFlushing());
            h.append(items(1001, 1010, 1, 1, 0, 20));   // positions that only close flushes
            h.awaitPersisted(1010);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) throws IOException {
                    if (file.getParent().getFileName().toString().equals("idx")) {
                        throw new IOException("Input/output error (injected)");
                    }
                }
            };
            assertThrows(IOException.class, () -> {
                try {
                    h.call(h.store::close);
                } catch (RuntimeException r) {
                    throw r.getCause() instanceof IOException ? (IOException) r.getCause() : r;
                }
            });
        }
        assertEquals(java.util.List.of(), files.openFiles(), "files left open after the close");
    }
    /**
     * A store that failed (here a log fsync) while an index flush ran on another I/O thread: its
     * close used to go straight to closing the files, so it returned with the flush still running,
     * and the flush then wrote to (and fsynced) an index file already closed. Now the close waits
     * for the flush to end.
     */
    @Test
    void aFailedStoreClosesOnlyAfterTheIndexFlushInFlightEnded() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        CountDownLatch flushHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean holdFlush = new AtomicBoolean(true);
        AtomicBoolean failLogFsyncs = new AtomicBoolean();
        List<String> usedAfterClose = new CopyOnWriteArrayList<>();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (isIndex(file) && holdFlush.compareAndSet(true, false)) {
                    flushHeld.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new InterruptedIOException();
                    }
                }
                checkOpen("write", file);
            }

            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (isLog(file) && failLogFsyncs.get()) {
                    throw new IOException("Input/output error (injected)");
                }
                checkOpen("fsync", file);
            }

            private void checkOpen(String what, Path file) {
                if (isIndex(file) && !files.openFiles().contains(file)) {
                    usedAfterClose.add(what + " of " + file);
                }
            }
        };
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files))) {
            try {
                h.open();
                h.append(items(1, 100, 1, 0, 0, 20));   // past indexFlushEntries: an index flush starts
                h.awaitPersisted(100);
                assertTrue(flushHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "no index flush started");

                failLogFsyncs.set(true);
                h.append(items(101, 110, 1, 1, 0, 20));
                assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(110));
                assertTrue(h.on(h.store.index()::isFlushing), "the index flush is still held");

                CompletableFuture<Void> closing = h.callAsync(h.store::close);
                Thread.sleep(300);   // the thing under test: the close waits for the held flush
                assertFalse(closing.isDone(), "the failed store's close returned while an index flush ran");
                release.countDown();
                StoreHarness.join(closing);
                assertFalse(h.on(h.store.index()::isFlushing), "the close returned before the flush ended");
            } finally {
                release.countDown();   // before the harness stops the I/O threads
            }
        }
        assertEquals(List.of(), usedAfterClose, "index files used after the close closed them");
        assertEquals(List.of(), files.openFiles(), "files left open after the close");
    }

    private static boolean isIndex(Path file) {
        return file.getParent().getFileName().toString().equals("idx");
    }
}
