package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A read that finds damaged data (an item failing its CRC) fails the store once, naming the file
 * and offset, so raft's readers stop instead of retrying it for ever; a read that a truncation
 * overlapped (and zeroed under it) is no damage.
 */
@ExtendWith(NoImpossibleStates.class)
class ReadCorruptionTest {

    @TempDir
    Path dir;

    /** Flips a byte in the body of the item with {@code index} in {@code segment}; returns the item's offset. */
    static long flipBodyByte(Path segment, long index) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            long pos = 0;
            while (true) {
                f.seek(pos);
                byte[] header = new byte[LogItemCodec.HEADER_BYTES];
                f.readFully(header);
                java.nio.ByteBuffer h = java.nio.ByteBuffer.wrap(header);
                int total = h.getInt(0);
                assertTrue(total > 0 && h.get(12) != LogItemCodec.TYPE_SEGMENT_END, "index " + index + " is in " + segment);
                if (h.getLong(28) == index) {
                    int headerBytes = h.getInt(4);
                    assertTrue(h.getInt(8) > 2, "index " + index + " has a body");
                    long at = pos + LogItemCodec.HEADER_BYTES + (headerBytes > 0 ? headerBytes + 4 : 0) + 1;
                    f.seek(at);
                    int b = f.read();
                    f.seek(at);
                    f.write(b ^ 0x5A);
                    return pos;
                }
                pos += total;
            }
        }
    }

    @Test
    void aDamagedItemALoadFindsFailsTheStoreOnceNamingTheFileAndOffset() throws Exception {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            AtomicInteger heard = new AtomicInteger();
            h.on(() -> {
                h.store.setFailureListener(e -> heard.incrementAndGet());
                return null;
            });
            h.append(items(1, 100, 1, 0, 0, 20));
            h.awaitPersisted(100);
            Path segment = dir.resolve("log").resolve(LogSegment.fileName(0));
            long offset = flipBodyByte(segment, 50);   // in the page cache: the next read sees it

            LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> h.load(50, 10, 1 << 20));
            assertEquals(segment, e.file());
            assertEquals(offset, e.fileOffset());
            LogStoreFailedException failure = h.on(h.store::failure);
            assertNotNull(failure, "the store is failed (before: nothing changed and every caller retried the read)");
            assertSame(e, failure.getCause());
            assertTrue(failure.getMessage().contains(segment + " at offset " + offset), failure.getMessage());
            // refused from now on, and said once
            assertThrows(LogStoreFailedException.class, () -> h.load(1, 10, 1 << 20));
            assertThrows(LogStoreFailedException.class, () -> h.append(items(101, 101, 1, 1, 0, 20)));
            h.waitFor("the failure listener", () -> heard.get() >= 1);
            h.on(() -> null);
            assertEquals(1, heard.get());
            h.callAsync(h.store::close).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aLoadThatATruncationZeroedUnderItDoesNotFailTheStore() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io))) {
            h.open();
            h.append(items(1, 100, 1, 0, 0, 20));
            h.awaitPersisted(100);
            CountDownLatch reading = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeRead(Path file, long position) throws IOException {
                    if (file.getParent().getFileName().toString().equals("log")) {
                        reading.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            throw new InterruptedIOException();
                        }
                    }
                }
            };
            CompletableFuture<List<LogItem>> read = h.callAsync(() -> h.store.load(60, 10, 1 << 20));
            assertTrue(reading.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS));
            io.hook = new FaultyFileIo.Hook() {
            };
            // (a follower's conflicting tail; the read above was started before, by a fiber that did not know)
            h.call(() -> h.store.truncateTail(50));
            release.countDown();
            ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(StoreHarness.TIMEOUT_SECONDS,
                    TimeUnit.SECONDS));
            assertInstanceOf(LogCorruptedException.class, e.getCause());
            assertNull(h.on(h.store::failure));
            h.append(items(50, 60, 2, 1, 0, 20));
            h.awaitPersisted(60);
            assertEquals(11, h.loadAll(50, 60).size());
        }
    }
}
