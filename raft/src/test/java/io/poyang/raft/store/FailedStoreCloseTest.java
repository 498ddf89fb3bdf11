package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The close of a store that failed (a failed fsync, a write failing past its retries) while other
 * log writes or fsyncs were still on the I/O threads. It used to close the files at once: those
 * operations then met a closed file, their errors were swallowed (the store had failed already),
 * and the close returned while they still ran, so a caller deleting or reopening the directory
 * raced with them. Now the close waits for them, up to a bound.
 */
@ExtendWith(NoImpossibleStates.class)
class FailedStoreCloseTest {

    @TempDir
    Path dir;

    /** The outcome a held operation records when its real file operation returned on an open file. */
    private static final String DONE = "done";

    @Test
    void aFailedStoreClosesOnlyAfterTheLogWriteInFlightEnded() throws Exception {
        HeldWriteThenFailedFsync hook = new HeldWriteThenFailedFsync();
        OpenFilesIo files = new OpenFilesIo(hook.io);
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files))) {
            try {
                hook.failWithAWriteHeld(h);

                CompletableFuture<Void> closing = closeStillWaiting(h, "the failed store's close returned while a log write ran");
                assertTrue(files.openFiles().contains(hook.segment.get()), "the segment was closed under the write");
                hook.release.countDown();
                StoreHarness.join(closing);
            } finally {
                hook.release.countDown();   // before the harness stops the I/O threads
            }
        }
        assertEquals(List.of(DONE), hook.heldOutcome, "the held write ended on an open file before the close");
        assertEquals(List.of(), files.openFiles(), "files left open after the close");
    }

    @Test
    void aFailedStoreClosesOnlyAfterTheChainedFsyncInFlightEnded() throws Exception {
        closesOnlyAfterTheHeldFsyncEnded(c -> { });
    }

    @Test
    void aFailedStoreClosesOnlyAfterTheGatedFsyncInFlightEnded() throws Exception {
        closesOnlyAfterTheHeldFsyncEnded(c -> c.fsyncGate(new FsyncGate(1)));
    }

    /**
     * An fsync of the segment is held; the next write fails past its (zero) retries, which fails the
     * store; the close must wait for the held fsync (on the chain, or started through a gate).
     */
    private void closesOnlyAfterTheHeldFsyncEnded(Consumer<LogStoreConfig> fsyncMode) throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        AtomicReference<Path> segment = new AtomicReference<>();
        AtomicBoolean holdNextFsync = new AtomicBoolean();
        AtomicBoolean failWrites = new AtomicBoolean();
        CountDownLatch fsyncHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> heldOutcome = new CopyOnWriteArrayList<>();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (file.equals(segment.get()) && holdNextFsync.compareAndSet(true, false)) {
                    fsyncHeld.countDown();
                    await(release);
                }
            }

            @Override
            public void afterForce(Path file, IOException error) {
                if (file.equals(segment.get()) && fsyncHeld.getCount() == 0) {
                    heldOutcome.add(outcome(error));
                }
            }

            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.equals(segment.get()) && failWrites.get()) {
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        try (StoreHarness h = new StoreHarness(dir, c -> fsyncMode.accept(c.fileIo(files).writeRetry(0, 1, 1)))) {
            try {
                h.open();
                h.append(items(1, 10, 1, 0, 0, 20));
                h.awaitPersisted(10);
                segment.set(h.on(() -> h.store.segments().current().path()));
                holdNextFsync.set(true);
                h.append(items(11, 20, 1, 1, 0, 20));
                assertTrue(fsyncHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "no fsync was held");
                failWrites.set(true);
                h.append(items(21, 30, 1, 1, 0, 20));
                assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(30));

                CompletableFuture<Void> closing = closeStillWaiting(h, "the failed store's close returned while an fsync ran");
                assertTrue(files.openFiles().contains(segment.get()), "the segment was closed under the fsync");
                release.countDown();
                StoreHarness.join(closing);
            } finally {
                release.countDown();
            }
        }
        assertEquals(List.of(DONE), heldOutcome, "the held fsync ended on an open file before the close");
        assertEquals(List.of(), files.openFiles(), "files left open after the close");
    }

    /**
     * A failed fsync starts a status save that records it (so a restart cuts the log after the last
     * index an fsync covered). Held at its rename while the store closes, the close waits for it:
     * before, the close returned at once, and a reopen right after read the status from before the
     * failure, which cuts nothing.
     */
    @Test
    void aFailedStoreClosesOnlyAfterTheStatusSaveRecordingTheFailedFsyncEnded() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(io);
        AtomicReference<Path> segment = new AtomicReference<>();
        AtomicBoolean holdNextStatusMove = new AtomicBoolean();
        CountDownLatch moveHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (file.equals(segment.get())) {
                    throw new IOException("Input/output error (injected)");
                }
            }

            @Override
            public void beforeMove(Path from, Path to) throws IOException {
                if (to.getFileName().toString().equals(StatusFile.FILE_NAME)
                        && holdNextStatusMove.compareAndSet(true, false)) {
                    moveHeld.countDown();
                    await(release);
                }
            }
        };
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files))) {
            try {
                h.open();
                h.append(items(1, 10, 1, 0, 0, 20));
                h.awaitPersisted(10);
                holdNextStatusMove.set(true);
                segment.set(h.on(() -> h.store.segments().current().path()));
                h.append(items(11, 20, 1, 1, 0, 20));
                assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(20));
                assertTrue(moveHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "no status save was held");

                CompletableFuture<Void> closing = closeStillWaiting(h, "the failed store's close returned while a status save ran");
                release.countDown();
                StoreHarness.join(closing);
                assertTrue(statusText().contains("fsyncFailedAfter=10"), "the close returned before the status"
                        + " recording the failed fsync was saved:\n" + statusText());
            } finally {
                release.countDown();
            }
        }
        assertEquals(List.of(), files.openFiles(), "files left open after the close");
    }

    private String statusText() throws IOException {
        return new String(java.nio.file.Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME)),
                java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * On a hung disk the close does not wait forever: past its bound it closes the files under the
     * held write, says so, and returns; the write then fails on the closed file.
     */
    @Test
    void aFailedStoreCloseGivesUpOnAHungWriteAfterItsBound() throws Exception {
        HeldWriteThenFailedFsync hook = new HeldWriteThenFailedFsync();
        OpenFilesIo files = new OpenFilesIo(hook.io);
        try (LogCounter warnings = new LogCounter();
             StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files).failedCloseIoWaitMillis(50))) {
            try {
                hook.failWithAWriteHeld(h);
                h.call(h.store::close);   // returns although the write is still held
                assertEquals(List.of(), hook.heldOutcome, "the write was released");
                assertTrue(warnings.messages.stream().anyMatch(m -> m.startsWith("test-log:")
                        && m.contains("with 1 log writes or fsyncs")), "no warning naming the store and the writes left running: "
                        + warnings.messages);
            } finally {
                hook.release.countDown();
            }
            StoreHarness.waitFor("the released write to end", () -> !hook.heldOutcome.isEmpty());
        }
        assertEquals(ClosedChannelException.class.getName(), hook.heldOutcome.get(0),
                "the write held past the bound met the closed file");
    }

    /**
     * Holds a log write in flight, then fails the fsync of the writes before it: the store fails
     * with that write still running on an I/O thread.
     */
    private static final class HeldWriteThenFailedFsync implements FaultyFileIo.Hook {
        final FaultyFileIo io = new FaultyFileIo();
        /** The segment written to; set once the first items are persisted, which arms the faults. */
        final AtomicReference<Path> segment = new AtomicReference<>();
        final AtomicBoolean holdNextWrite = new AtomicBoolean();
        final CountDownLatch writeHeld = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        /** Where the held write goes (-1: none held yet). */
        volatile long heldPosition = -1;
        /** What the held write's real file operation did, once it returned. */
        final List<String> heldOutcome = new CopyOnWriteArrayList<>();

        HeldWriteThenFailedFsync() {
            io.hook = this;
        }

        @Override
        public void beforeWrite(Path file, long position, int length) throws IOException {
            if (file.equals(segment.get()) && holdNextWrite.compareAndSet(true, false)) {
                heldPosition = position;
                writeHeld.countDown();
                await(release);
            }
        }

        @Override
        public void afterWrite(Path file, long position, IOException error) {
            if (file.equals(segment.get()) && position == heldPosition) {
                heldOutcome.add(outcome(error));
            }
        }

        @Override
        public void beforeForce(Path file, boolean metadata) throws IOException {
            if (file.equals(segment.get())) {
                await(writeHeld);   // fails once the next write is held in flight
                throw new IOException("Input/output error (injected)");
            }
        }

        /** Items 1..10 persisted, 11..20 written (their fsync fails), the write of 21..30 held. */
        void failWithAWriteHeld(StoreHarness h) throws InterruptedException {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            segment.set(h.on(() -> h.store.segments().current().path()));
            h.append(items(11, 20, 1, 1, 0, 20));
            // written before the hold is armed, so the held write is the next one; their fsync
            // waits in beforeForce meanwhile
            h.waitFor("items 11 to 20 written", () -> h.store.writtenIndex() >= 20);
            holdNextWrite.set(true);
            h.append(items(21, 30, 1, 1, 0, 20));
            assertTrue(writeHeld.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "the write of 21..30 was not held");
            assertThrows(LogStoreFailedException.class, () -> h.awaitPersisted(30));
        }
    }

    private static String outcome(IOException error) {
        return error == null ? DONE : error.getClass().getName();
    }

    private static void await(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the held operation");
            }
        } catch (InterruptedException e) {
            throw new InterruptedIOException();
        }
    }

    /**
     * Starts the store's close and checks it is still waiting 300 ms later (a held operation keeps
     * it: nothing to wait for but time, the waiting itself being the behaviour under test).
     */
    private static CompletableFuture<Void> closeStillWaiting(StoreHarness h, String whatItMustNotDo) throws Exception {
        CompletableFuture<Void> closing = h.callAsync(h.store::close);
        h.waitFor("the close to start", () -> !h.store.isOpen());
        Thread.sleep(300);   // the behaviour under test: the close waits while an operation is held
        assertFalse(closing.isDone(), whatItMustNotDo);
        return closing;
    }
}
