package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store closes while the next segment is being preallocated on a log I/O thread, and the
 * dispatcher stops before the preallocation ends (a node stopping, a group removed): the new
 * file is closed all the same, not left open by a completion nobody receives.
 */
@ExtendWith(NoImpossibleStates.class)
class SegmentPreallocationCloseTest {

    @TempDir
    Path dir;

    /** Before, the preallocation's completion went to the stopped dispatcher and was dropped, its file open. */
    @Test
    void aPreallocationThatEndsAfterTheCloseAndTheDispatchersStopClosesItsFile() throws Exception {
        FaultyFileIo faulty = new FaultyFileIo();
        OpenFilesIo files = new OpenFilesIo(faulty);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        long next = 11;
        StoreHarness h = new StoreHarness(dir, c -> c.fileIo(files).segmentBytes(4096));
        try {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            Path logDir = dir.resolve("log");
            java.util.concurrent.atomic.AtomicBoolean holding = new java.util.concurrent.atomic.AtomicBoolean();
            // The segment the roll to the first spare starts preallocating: the third, at twice the
            // segment size. Matched by name, not as "the next preallocation": the first spare's own
            // may still be on its way here (slow fsyncs), and holding that one would keep the store
            // from ever rolling.
            Path third = logDir.resolve(LogSegment.fileName(2 * 4096));
            faulty.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeSetLength(Path file, long length) throws IOException {
                    // its file open: held until the test lets it go
                    if (file.equals(third) && holding.compareAndSet(false, true)) {
                        held.countDown();
                        try {
                            if (!release.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                                throw new IOException("the test never released the held preallocation of " + file);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IOException(e);
                        }
                    }
                }
            };
            // one persisted item at a time until the store rolls to its spare segment: the roll starts
            // the next preallocation. Each item waits for its fsync, so no backlog builds up that would
            // need the held third segment (before, a held first spare let this loop queue items for 30 s,
            // which then filled ~20,000 segments and every file descriptor of the JVM).
            while (h.on(() -> h.store.segments().live().size()) < 2) {
                h.append(items(next, next, 1, 1, 0, 20));
                h.awaitPersisted(next);
                next++;
            }
            assertTrue(held.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "no preallocation started");
            h.awaitPersisted(next - 1);

            h.call(h.store::close);
            h.group.requestShutdown();
            h.group.shutdownFuture().get(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS);
            h.dispatcher.stop();
        } catch (Throwable t) {
            // a failure before the test's own stop: close the store so its files do not stay open
            // in this JVM and fail the tests that run after this one in it
            release.countDown();
            try {
                h.close();
            } catch (Throwable s) {
                t.addSuppressed(s);
            }
            throw t;
        } finally {
            release.countDown();
        }
        h.io.shutdown();
        assertTrue(h.io.awaitTermination(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "the log I/O threads still run");
        assertEquals(List.of(), files.openFiles(), "files left open after the close");

        // the abandoned preallocation's file stays on disk as a spare: the next start takes it as such
        long last = next - 1;
        try (StoreHarness again = new StoreHarness(dir, c -> c.segmentBytes(4096))) {
            RecoveredState r = again.open();
            assertEquals(last, r.getLastIndex());
            assertEquals(last, again.loadAll(1, last).size());
            again.append(items(last + 1, last + 200, 1, 1, 0, 20));   // over the kept spare and beyond
            again.awaitPersisted(last + 200);
            assertEquals(last + 200, again.loadAll(1, last + 200).size());
        }
    }
}
