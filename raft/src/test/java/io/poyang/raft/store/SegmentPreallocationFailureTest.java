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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A new segment cannot be created (the disk is full) while appends keep arriving: the store
 * retries with its back-off, not once per append, and goes on once space is free.
 */
@ExtendWith(NoImpossibleStates.class)
class SegmentPreallocationFailureTest {

    private static final long BACKOFF_MILLIS = 50;

    @TempDir
    Path dir;

    @Test
    void aFailingPreallocationIsRetriedAtTheBackOffPaceAndWarnedOnceWhileAppendsArrive() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        AtomicInteger allocations = new AtomicInteger();
        try (LogCounter logs = new LogCounter();
             StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).segmentBytes(4096)
                .writeRetry(400, BACKOFF_MILLIS, BACKOFF_MILLIS))) {
            // 400 retries at 50 ms: the store keeps retrying (and does not give up) for the 1.2 s measured
            // here, and for ten times that on a loaded machine
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeSetLength(Path file, long length) throws IOException {
                    if (file.getParent().getFileName().toString().equals("log")) {
                        allocations.incrementAndGet();
                        throw new IOException("No space left on device (injected)");
                    }
                }
            };
            // Enough to use up the current segment and the ready spare: from then on every append finds no spare.
            long next = 11;
            h.append(items(next, next + 199, 1, 1, 0, 20));
            next += 200;
            StoreHarness.waitFor("a preallocation to fail", () -> allocations.get() > 0);
            int before = allocations.get();
            long start = System.nanoTime();
            // One append at a time, as a leader under load appends: each one finds no spare segment.
            for (int i = 0; i < 200; i++) {
                h.append(items(next, next, 1, 1, 0, 20));
                next++;
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);   // pacing the load, not a synchronisation
            }
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            int attempts = allocations.get() - before;
            long allowed = elapsedMillis / BACKOFF_MILLIS + 5;
            assertTrue(attempts <= allowed, attempts + " preallocation attempts in " + elapsedMillis
                    + " ms; the back-off of " + BACKOFF_MILLIS + " ms allows about " + allowed);
            assertNull(h.on(h.store::failure), "a failing preallocation does not fail the store");
            // one warning for the run of failures (then one per 10 s), not one per attempt
            assertTrue(attempts >= 5, attempts + " attempts");
            assertTrue(logs.warnings.get() <= 2, logs.warnings.get() + " warnings for " + attempts + " attempts: "
                    + logs.byMessage);

            io.hook = new FaultyFileIo.Hook() {
            };
            h.awaitPersisted(next - 1);
            assertEquals(next - 1, h.loadAll(1, next - 1).size());
        }
        // No half-made segment breaks a restart.
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(4096))) {
            RecoveredState r = h.open();
            assertTrue(r.getLastIndex() >= 210, "last index after restart: " + r.getLastIndex());
        }
    }

    @Test
    void aSegmentThatCannotBeCreatedFailsTheStoreWithAClearErrorAndARestartRecovers() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        long persisted;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).segmentBytes(4096).writeRetry(5, 1, 4))) {
            h.open();
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeSetLength(Path file, long length) throws IOException {
                    if (file.getParent().getFileName().toString().equals("log")) {
                        throw new IOException("No space left on device (injected)");
                    }
                }
            };
            // more than the first segment and its spare hold: the appends then wait for a segment that cannot be made
            h.append(items(1, 150, 1, 0, 0, 20));
            LogStoreFailedException e = org.junit.jupiter.api.Assertions.assertThrows(LogStoreFailedException.class,
                    () -> h.awaitPersisted(150));
            assertTrue(e.getMessage().contains("No space left on device") && e.getMessage().contains("Free space")
                    && e.getMessage().contains(dir.resolve("log").toString()), e.getMessage());
            persisted = h.persisted();
            assertTrue(persisted < 150, "persisted " + persisted);
            // closing the failed store ends (it used to wait for the segment forever)
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(4096))) {
            RecoveredState r = h.open();
            assertTrue(r.getLastIndex() >= persisted, "recovery keeps what was persisted: " + r.getLastIndex());
            long last = r.getLastIndex();
            // the first segment itself may have met the full disk: then nothing was persisted
            h.append(items(last + 1, last + 100, 1, last == 0 ? 0 : 1, 0, 20));
            h.awaitPersisted(last + 100);
            assertEquals(last + 100, h.loadAll(1, last + 100).size());
        }
    }
}
