package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Logs sharing an fsync gate take turns on the disk; a permit always comes back. */
@ExtendWith(NoImpossibleStates.class)
class FsyncGateTest {

    @TempDir
    Path dir;

    @Test
    void aLogWaitsForTheGateWhileAnotherLogsFsyncRunsAndThenCoversAllItsWrites() throws Exception {
        HeldGate g = new HeldGate();
        try (StoreHarness a = g.store("store-a"); StoreHarness b = g.store("store-b")) {
            a.open();
            b.open();
            b.append(items(1, 1, 1, 0, 0, 30));
            b.awaitPersisted(1);
            long bFsyncs = b.on(b.store::fsyncCount);

            g.holdNext.set(true);
            a.append(items(1, 1, 1, 0, 0, 30));
            g.held.await();                     // a's fsync holds the only permit
            for (int i = 2; i <= 50; i++) {
                b.append(items(i, i, 1, 1, 0, 30));
            }
            b.waitFor("b's writes to complete", () -> b.store.writtenIndex() == 50);
            StoreHarness.waitFor("b to queue at the gate", () -> g.gate.waitingCount() == 1);
            assertEquals(1, b.persisted(), "b cannot fsync while a holds the gate");
            assertEquals(0, g.gate.available());

            g.release.countDown();
            a.awaitPersisted(1);
            b.awaitPersisted(50);
            assertTrue(b.on(b.store::fsyncCount) - bFsyncs <= 2, "one fsync (or two) covers b's 49 writes");
            StoreHarness.waitFor("the permit to come back", () -> g.gate.available() == 1);
        }
        assertEquals(1, g.gate.available(), "closing the stores leaves the permit free");
        assertEquals(0, g.gate.waitingCount());
    }

    @Test
    void aLogWhoseGroupStoppedPassesTheWakeOn() throws Exception {
        FsyncGate gate = new FsyncGate(1);
        FaultyFileIo io = new FaultyFileIo();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        AtomicBoolean holdNext = new AtomicBoolean();
        io.hook = holdingStoreAsNextFsync(holdNext, held, release);
        StoreHarness b = new StoreHarness(dir.resolve("store-b"), 3, c -> c.fileIo(io).fsyncGate(gate).segmentBytes(1 << 20));
        try (StoreHarness a = new StoreHarness(dir.resolve("store-a"), 3, c -> c.fileIo(io).fsyncGate(gate).segmentBytes(1 << 20));
             StoreHarness c = new StoreHarness(dir.resolve("store-c"), 3, x -> x.fileIo(io).fsyncGate(gate).segmentBytes(1 << 20))) {
            a.open();
            b.open();
            c.open();
            holdNext.set(true);
            a.append(items(1, 1, 1, 0, 0, 30));
            held.await();
            b.append(items(1, 1, 1, 0, 0, 30));
            StoreHarness.waitFor("b to queue at the gate", () -> gate.waitingCount() == 1);
            c.append(items(1, 1, 1, 0, 0, 30));
            StoreHarness.waitFor("c to queue at the gate", () -> gate.waitingCount() == 2);
            b.shutdown();                       // b's group is gone (like a crash), still queued first
            release.countDown();
            c.awaitPersisted(1);                // the wake passed b by
            a.awaitPersisted(1);
        }
        StoreHarness.waitFor("the permit to come back", () -> gate.available() == 1);
    }

    @Test
    void aResetWaitsForTheFsyncOfSegmentsStillQueuedAtTheGate() throws Exception {
        HeldGate g = new HeldGate();
        try (StoreHarness a = g.store("store-a"); StoreHarness b = g.store("store-b")) {
            a.open();
            b.open();
            g.holdNext.set(true);
            a.append(items(1, 1, 1, 0, 0, 30));
            g.held.await();                     // a's fsync holds the only permit
            // b fills more than two segments; their fsync waits at the gate
            b.append(items(1, 3000, 1, 0, 0, 1000));
            b.waitFor("b's writes to complete", () -> b.store.writtenIndex() == 3000);
            StoreHarness.waitFor("b to queue at the gate", () -> g.gate.waitingCount() == 1);
            // a snapshot replaces b's log meanwhile: the reset deletes those segments
            CompletableFuture<Void> reset = CompletableFuture.runAsync(() -> b.call(() -> b.store.resetAfterSnapshot(5000, 4)),
                    task -> new Thread(task, "reset").start());   // blocks: not in the common pool
            assertThrows(TimeoutException.class, () -> reset.get(300, TimeUnit.MILLISECONDS),
                    "the reset waits for the fsync queued at the gate");
            g.release.countDown();
            reset.get(30, TimeUnit.SECONDS);
            b.append(items(5001, 5010, 5, 4, 2, 40));
            b.awaitPersisted(5010);
            assertNull(b.on(b.store::failure), "no fsync ran on a segment the reset closed");
            assertEquals(5001, (long) b.on(b.store::firstIndex));
        }
        assertEquals(1, g.gate.available(), "closing the stores leaves the permit free");
    }

    @Test
    void aTruncationWaitsForTheFsyncOfWritesStillQueuedAtTheGate() throws Exception {
        HeldGate g = new HeldGate();
        try (StoreHarness a = g.store("store-a"); StoreHarness b = g.store("store-b")) {
            a.open();
            b.open();
            b.append(items(1, 20, 1, 0, 0, 30));
            b.awaitPersisted(20);
            g.holdNext.set(true);
            a.append(items(1, 1, 1, 0, 0, 30));
            g.held.await();                     // a's fsync holds the only permit
            b.append(items(21, 100, 1, 1, 0, 30));
            b.waitFor("b's writes to complete", () -> b.store.writtenIndex() == 100);
            StoreHarness.waitFor("b to queue at the gate", () -> g.gate.waitingCount() == 1);
            // a new leader's entries conflict from 60 on. Zeroing the tail while the fsync waits at
            // the gate let that fsync, started meanwhile, report 100 as persisted over a log ending at 59
            CompletableFuture<Void> truncate = CompletableFuture.runAsync(() -> b.call(() -> b.store.truncateTail(60)),
                    task -> new Thread(task, "truncate").start());   // blocks: not in the common pool
            assertThrows(TimeoutException.class, () -> truncate.get(300, TimeUnit.MILLISECONDS),
                    "the truncation waits for the fsync queued at the gate");
            g.release.countDown();
            truncate.get(30, TimeUnit.SECONDS);
            assertEquals(59, (long) b.on(b.store::lastIndex));
            assertTrue(b.persisted() <= 59, "persisted " + b.persisted() + " past the log's end");
            b.append(items(60, 80, 2, 1, 3, 40));
            b.awaitPersisted(80);
            assertNull(b.on(b.store::failure));
        }
        assertEquals(1, g.gate.available(), "closing the stores leaves the permit free");
    }

    /**
     * Once {@code holdNext} is set, the next fsync of store-a's files signals {@code held} and waits
     * for {@code release}: that store then keeps the gate's permit as long as the test wants.
     */
    private static FaultyFileIo.Hook holdingStoreAsNextFsync(AtomicBoolean holdNext, CountDownLatch held,
                                                            CountDownLatch release) {
        return new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (!metadata && file.toString().contains("store-a") && holdNext.compareAndSet(true, false)) {
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new InterruptedIOException();
                    }
                }
            }
        };
    }

    /** One fsync permit for the stores it makes, all on one file I/O whose hook can hold store-a's next fsync. */
    private final class HeldGate {
        final FsyncGate gate = new FsyncGate(1);
        final FaultyFileIo io = new FaultyFileIo();
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch held = new CountDownLatch(1);
        final AtomicBoolean holdNext = new AtomicBoolean();

        HeldGate() {
            io.hook = holdingStoreAsNextFsync(holdNext, held, release);
        }

        StoreHarness store(String name) {
            return new StoreHarness(dir.resolve(name), 3, c -> c.fileIo(io).fsyncGate(gate).segmentBytes(1 << 20));
        }
    }
}
