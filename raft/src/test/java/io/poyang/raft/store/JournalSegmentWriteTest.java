package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With the node's log journal, a group's write goes into its segment from the journal's writer
 * thread, just before the journal stages it as a record: no log I/O thread in between. A segment
 * write that fails there is that write's failure (retried by the appender), not the journal's.
 */
@ExtendWith(NoImpossibleStates.class)
class JournalSegmentWriteTest {

    @TempDir
    Path node;

    private final FaultyFileIo io = new FaultyFileIo();

    private Path logDir() {
        return node.resolve("group-1").resolve("log");
    }

    /** Before, a log I/O thread wrote the segment and then queued the record: two hand-offs per write. */
    @Test
    void withTheJournalTheSegmentWritesRunOnTheJournalsWriterThread() throws Exception {
        Set<String> writers = ConcurrentHashMap.newKeySet();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) {
                if (file.getParent().equals(logDir())) {
                    writers.add(Thread.currentThread().getName());
                }
            }
        };
        LogJournal j = LogJournal.open("node-x", node, io, 3, LogJournal.MIN_FILE_BYTES);
        try (StoreHarness h = new StoreHarness(node.resolve("group-1"), c -> c.fileIo(io).journal(j))) {
            h.open();
            for (long i = 1; i <= 200; i += 50) {
                h.append(items(i, i + 49, 1, i == 1 ? 0 : 1, 3, 100));
            }
            h.awaitPersisted(200);
            // before the close, whose clean end (a zeroed header) is written by the store's own thread
            assertEquals(Set.of("node-x-journal"), Set.copyOf(writers), "the threads that wrote the items into the segments");
            assertEquals(200, h.loadAll(1, 200).size());
        } finally {
            j.close();
        }
    }

    @Test
    void aSegmentWriteThatFailsOnTheJournalsThreadIsRetriedAndTheJournalGoesOn() throws Exception {
        AtomicInteger failed = new AtomicInteger();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.getParent().equals(logDir()) && failed.get() < 2) {
                    failed.incrementAndGet();
                    throw new IOException("injected segment write failure");
                }
            }
        };
        LogJournal j = LogJournal.open("node-x", node, io, 3, LogJournal.MIN_FILE_BYTES);
        try {
            try (StoreHarness h = new StoreHarness(node.resolve("group-1"), c -> c.fileIo(io).journal(j))) {
                h.open();
                h.append(items(1, 20, 1, 0, 3, 100));
                h.awaitPersisted(20);
                assertEquals(2, failed.get(), "the injected failures were met");
                assertNull(h.on(h.store::failure), "two failed attempts are within the store's retries");
                h.append(items(21, 40, 1, 1, 3, 100));
                h.awaitPersisted(40);
                assertEquals(40, h.loadAll(1, 40).size());
            }
            assertNull(j.failure(), "a segment's own write failure is not the journal's");
            assertTrue(j.fsyncCount() > 0 && j.recordCount() >= 2, "the records went through the journal");
        } finally {
            j.close();
        }
    }

    /**
     * Once the journal has failed it refuses every record for good. Before, the store retried each
     * refused write as if it were its own failure (5 retries, about 310 ms, each warned about)
     * before it failed; now it fails at the first refusal.
     */
    @Test
    void aWriteRefusedByAFailedJournalFailsTheStoreAtOnceWithoutRetries() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean journalFull = new java.util.concurrent.atomic.AtomicBoolean();
        Path journalDir = node.resolve(LogJournal.DIR_NAME);
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (!journalFull.get()) {
                    return;
                }
                if (file.getParent().equals(journalDir)) {
                    throw new IOException("No space left on device (injected)");
                }
            }
        };
        LogJournal j = LogJournal.open("node-x", node, io, 3, LogJournal.MIN_FILE_BYTES);
        try (LogCounter logs = new LogCounter();
             StoreHarness h = new StoreHarness(node.resolve("group-1"), c -> c.fileIo(io).journal(j))) {
            h.open();
            h.append(items(1, 20, 1, 0, 3, 100));
            h.awaitPersisted(20);
            journalFull.set(true);
            h.append(items(21, 21, 1, 1, 3, 100));
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (h.on(h.store::failure) == null && System.nanoTime() - deadline < 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            LogStoreFailedException f = h.on(h.store::failure);
            assertTrue(f != null, "the store did not fail");
            assertTrue(j.failure() != null, "the journal did not fail");
            java.util.List<String> retries = new java.util.ArrayList<>();
            for (String m : logs.messages) {
                if (m.contains("retrying") || m.contains("failed 6 times")) {
                    retries.add(m);
                }
            }
            assertTrue(retries.isEmpty(), "the write refused by the failed journal was retried: " + retries);
            assertTrue(f.getMessage().contains("log journal") && f.getMessage().contains("restart the node")
                    && f.getMessage().contains("No space left on device"), f.getMessage());
            assertTrue(LogJournalFailedException.in(f) != null, "not typed as the journal's failure: " + f);
        } finally {
            j.close();
        }
    }
}
