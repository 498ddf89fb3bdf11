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
}
