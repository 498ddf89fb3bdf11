package io.poyang.raft.store;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An entry that cannot be encoded (a state machine's {@code Encodable} whose {@code encodedSize()}
 * is not what {@code encode()} writes) fails the store once, with the log cut back to what was
 * written, and leaves nothing for a close to wait for.
 */
@ExtendWith(NoImpossibleStates.class)
class EncodeFailureTest {

    @TempDir
    Path dir;

    /** Says 10 bytes, writes 11. */
    private static final Encodable LIAR = new Encodable() {
        @Override
        public int encodedSize() {
            return 10;
        }

        @Override
        public boolean encode(EncodeContext context, ByteBuffer dest) {
            dest.put(new byte[11]);
            return true;
        }
    };

    private static LogItem liar(long index, int term, int prevTerm) {
        return new LogItem(LogItem.TYPE_NORMAL, 7, term, prevTerm, index, 0, null, LIAR);
    }

    @Test
    void anAppendWhoseEntryFailsToEncodeFailsTheStoreKeepsWhatWasWrittenAndCloseReturns() throws Exception {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 20));
            h.awaitPersisted(10);
            List<LogItem> batch = new ArrayList<>(items(11, 12, 1, 1, 0, 20));
            batch.add(liar(13, 1, 1));
            batch.addAll(items(14, 15, 1, 1, 0, 20));

            LogStoreFailedException e = assertThrows(LogStoreFailedException.class, () -> h.append(batch));
            LogStoreFailedException failure = h.on(h.store::failure);
            assertNotNull(failure, "the store is failed");
            assertTrue(failure.getMessage().contains("from index 11")
                    && failure.getMessage().contains(LogSegment.fileName(0))
                    && failure.getMessage().contains("encodedSize"), failure.getMessage());
            assertTrue(e.getMessage().contains(failure.getMessage()), e.getMessage());
            // 11 and 12 shared the liar's write: none of the batch was issued
            assertEquals(10, (long) h.on(h.store::lastIndex));
            // before: 14 and 15 stayed pending and the close waited for them forever
            h.callAsync(h.store::close).get(10, TimeUnit.SECONDS);
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(10, s.getLastIndex());
            assertTrue(!s.hadTornTail());
            assertEquals(10, h.loadAll(1, 10).size());
        }
    }

    @Test
    void anEntryThatFailsToEncodeOnceASpareSegmentIsReadyFailsTheStore() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        CountDownLatch allocating = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        String second = LogSegment.fileName(64 * 1024);
        // the second segment's preallocation waits: items that do not fit in the first wait for it
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeSetLength(Path file, long length) throws IOException {
                if (file.getFileName().toString().equals(second)) {
                    allocating.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new InterruptedIOException();
                    }
                }
            }
        };
        long lastWritten;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io))) {
            h.open();
            h.append(items(1, 250, 1, 0, 0, 200));   // about 85 KB: more than the first 64 KiB segment
            assertTrue(allocating.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS));
            h.append(List.of(liar(251, 1, 1)));       // queued behind the rest: returns
            assertNull(h.on(h.store::failure));
            release.countDown();
            // the spare is taken and the waiting items encoded in one dispatcher step
            h.waitFor("the roll to the second segment", () -> h.store.segmentsForTest().size() == 2);
            LogStoreFailedException failure = h.on(h.store::failure);
            assertNotNull(failure, "the store is failed (before: the error was only logged, and the log stopped)");
            assertTrue(failure.getMessage().contains(second), failure.getMessage());
            lastWritten = h.on(h.store::lastIndex);
            assertTrue(lastWritten < 250, "the items after the first segment were not written: " + lastWritten);
            assertThrows(LogStoreFailedException.class, () -> h.append(items(lastWritten + 1, lastWritten + 1, 1, 1, 0, 20)));
            // (a failed store's close does not wait for writes in flight: let them land for the reopen)
            h.waitFor("the issued writes to complete", () -> h.store.writtenIndex() == lastWritten);
            h.callAsync(h.store::close).get(10, TimeUnit.SECONDS);
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(lastWritten, s.getLastIndex());
            assertEquals(lastWritten, h.loadAll(1, lastWritten).size());
        }
    }
}
