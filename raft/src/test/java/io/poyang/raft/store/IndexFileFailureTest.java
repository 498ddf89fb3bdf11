package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The index files cannot be written (the disk is full) while the log can: flushes are retried at
 * the back-off pace, not once per append; past the retry limit the store fails with an error that
 * names the directory, closes, and a restart recovers.
 */
@ExtendWith(NoImpossibleStates.class)
class IndexFileFailureTest {

    private static final long BACKOFF_MILLIS = 50;

    @TempDir
    Path dir;

    private static FaultyFileIo.Hook failingIndexWrites(AtomicInteger attempts) {
        return new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.getParent().getFileName().toString().equals("idx")) {
                    attempts.incrementAndGet();
                    throw new IOException("No space left on device (injected)");
                }
            }
        };
    }

    @Test
    void failingIndexFlushesAreRetriedAtTheBackOffPaceNotOncePerAppend() {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger attempts = new AtomicInteger();
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).writeRetry(400, BACKOFF_MILLIS, BACKOFF_MILLIS))) {
            h.open();
            io.hook = failingIndexWrites(attempts);
            long next = 1;
            long start = System.nanoTime();
            // one small batch at a time, as a busy leader appends: each is past the flush threshold
            for (int i = 0; i < 200; i++) {
                h.append(items(next, next + 4, 1, next == 1 ? 0 : 1, 0, 20));
                next += 5;
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);   // pacing the load, not a synchronisation
            }
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            h.awaitPersisted(next - 1);
            long allowed = elapsedMillis / BACKOFF_MILLIS + 5;
            assertTrue(attempts.get() <= allowed, attempts.get() + " index flush attempts in " + elapsedMillis
                    + " ms; the back-off of " + BACKOFF_MILLIS + " ms allows about " + allowed);
            assertNull(h.on(h.store::failure), "the log goes on while the index is retried");
            io.hook = new FaultyFileIo.Hook() {
            };
            long last = next - 1;
            h.waitFor("the index to be flushed once the disk has room", () -> h.store.index().flushedIndex() == last);
            assertNull(h.on(h.store::failure));
            assertEquals(next - 1, h.loadAll(1, next - 1).size());
        }
    }

    @Test
    void anIndexFileWhoseSizingFailedIsSizedOnceTheDiskHasRoom() throws IOException {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger refused = new AtomicInteger();
        // the writes below fill a fraction of the first index file: flushes alone would not grow it to its size
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).writeRetry(400, BACKOFF_MILLIS, BACKOFF_MILLIS)
                .indexEntriesPerFile(4096))) {
            h.open();
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeSetLength(Path file, long length) throws IOException {
                    if (file.getParent().getFileName().toString().equals("idx")) {
                        refused.incrementAndGet();
                        throw new IOException("No space left on device (injected)");
                    }
                }
            };
            long next = 1;
            while (refused.get() < 1) {
                h.append(items(next, next + 99, 1, next == 1 ? 0 : 1, 0, 20));
                next += 100;
                h.awaitPersisted(next - 1);
            }
            io.hook = new FaultyFileIo.Hook() {
            };
            long last = next - 1;
            h.waitFor("the index to be flushed once the disk has room", () -> h.store.index().flushedIndex() == last);
            long fullBytes = (long) h.store.index().entriesPerFile() * IndexFiles.ENTRY_BYTES;
            try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir.resolve("idx"))) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    assertEquals(fullBytes, java.nio.file.Files.size(p), p + " is sized like every index file");
                }
            }
            assertNull(h.on(h.store::failure));
            assertEquals(last, h.loadAll(1, last).size());
        }
    }

    @Test
    void indexWritesFailingPastTheRetryLimitFailTheStoreWhichClosesAndRestarts() {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger attempts = new AtomicInteger();
        long persisted;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).writeRetry(3, 1, 4))) {
            h.open();
            io.hook = failingIndexWrites(attempts);
            // batches until the store gives up on the index (it retries 3 times, 1-4 ms apart)
            assertThrows(LogStoreFailedException.class, () -> {
                for (long next = 1; next < 100_000; next += 100) {
                    h.append(items(next, next + 99, 1, next == 1 ? 0 : 1, 0, 20));
                    h.awaitPersisted(next + 99);
                }
            });
            LogStoreFailedException f = h.on(h.store::failure);
            assertTrue(f.getMessage().contains("index entries") && f.getMessage().contains(dir.resolve("idx").toString())
                    && f.getMessage().contains("No space left on device") && f.getMessage().contains("Free space"),
                    f.getMessage());
            long nextIndex = h.on(h.store::lastIndex) + 1;
            assertThrows(LogStoreFailedException.class, () -> h.append(items(nextIndex, nextIndex, 1, 1, 0, 20)));
            persisted = h.persisted();
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState r = h.open();
            assertTrue(r.getLastIndex() >= persisted, "a restart recovers the log the index lacked: " + r.getLastIndex()
                    + " < " + persisted);
            assertEquals(r.getLastIndex(), h.loadAll(1, r.getLastIndex()).size());
        }
    }
}
