package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A slow write (held by the fault seam) must stop written and persisted at the gap, whatever completes after it. */
@ExtendWith(NoImpossibleStates.class)
class OutOfOrderWriteTest {

    @TempDir
    Path dir;

    @Test
    void persistedNeverPassesAGap() {
        FaultyFileIo io = new FaultyFileIo();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean holdNext = new AtomicBoolean();
        AtomicInteger writesAfterHeld = new AtomicInteger();
        try (StoreHarness h = new StoreHarness(dir, 4, c -> c.fileIo(io).segmentBytes(1 << 20))) {
            h.open();
            h.append(items(1, 5, 1, 0, 0, 30));
            h.awaitPersisted(5);
            // Hold the write that starts where index 6 will go, whatever order the I/O threads
            // pick the three writes up in (they race for the executor's queue).
            long heldPosition = h.on(() -> h.store.appender().nextPos());
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) throws IOException {
                    if (!file.getParent().getFileName().toString().equals("log")) {
                        return;
                    }
                    if (position == heldPosition && holdNext.compareAndSet(true, false)) {
                        try {
                            release.await();   // the slow write
                        } catch (InterruptedException e) {
                            throw new InterruptedIOException();
                        }
                    } else {
                        writesAfterHeld.incrementAndGet();
                    }
                }
            };
            holdNext.set(true);
            h.append(items(6, 10, 1, 1, 0, 30));    // held
            h.append(items(11, 20, 1, 1, 0, 30));   // completes
            h.append(items(21, 30, 2, 1, 0, 30));   // completes
            h.waitFor("the two later writes to complete behind the held one",
                    () -> h.store.appender().completedBehindGap() == 2);
            assertEquals(5, (long) h.on(h.store::writtenIndex), "written stops before the gap");
            assertEquals(5, h.persisted(), "persisted stops before the gap");
            assertEquals(30, (long) h.on(h.store::lastIndex));
            assertTrue(writesAfterHeld.get() >= 2);

            release.countDown();
            h.awaitPersisted(30);
            assertEquals(30, (long) h.on(h.store::writtenIndex));
            assertEquals(30, h.loadAll(1, 30).size());
        }
    }

    @Test
    void oneFsyncCoversEverythingWrittenWhileThePreviousRan() {
        FaultyFileIo io = new FaultyFileIo();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch fsyncEntered = new CountDownLatch(1);
        AtomicBoolean holdFsync = new AtomicBoolean();
        try (StoreHarness h = new StoreHarness(dir, 4, c -> c.fileIo(io).segmentBytes(1 << 20))) {
            h.open();
            h.append(items(1, 1, 1, 0, 0, 30));
            h.awaitPersisted(1);
            long before = h.on(h.store::fsyncCount);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeForce(Path file, boolean metadata) throws IOException {
                    if (!metadata && holdFsync.compareAndSet(true, false)) {
                        fsyncEntered.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            throw new InterruptedIOException();
                        }
                    }
                }
            };
            holdFsync.set(true);
            h.append(items(2, 2, 1, 1, 0, 30));
            try {
                fsyncEntered.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            for (int i = 3; i <= 100; i++) {
                h.append(items(i, i, 1, 1, 0, 30));   // 98 writes while the fsync is held
            }
            h.waitFor("writes 3..100 to complete", () -> h.store.writtenIndex() == 100);
            assertEquals(1, h.persisted());
            release.countDown();
            h.awaitPersisted(100);
            long fsyncs = h.on(h.store::fsyncCount) - before;
            assertTrue(fsyncs <= 3, "the held fsync and one or two more cover 99 writes, not " + fsyncs);
        }
    }
}
