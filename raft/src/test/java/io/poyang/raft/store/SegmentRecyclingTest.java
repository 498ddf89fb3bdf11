package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Segment files that compaction frees become the next spares (LogStoreConfig.recycledSegments):
 * renamed, their first header zeroed, their old items never read as the log's.
 */
@ExtendWith(NoImpossibleStates.class)
class SegmentRecyclingTest {

    private static final int BODY = 40;

    @TempDir
    Path dir;

    /** The segment files' names renamed to (recycled into) so far. */
    private final Set<Path> renamedTo = ConcurrentHashMap.newKeySet();

    /** {@code inner}, recording into {@link #renamedTo} the segment files renamed (recycled). */
    private FileIo recordingRenames(FileIo inner) {
        return new ForwardingFileIo(inner) {
            @Override
            public void atomicMove(Path from, Path to) throws IOException {
                if (from.getParent().getFileName().toString().equals("log")) {
                    renamedTo.add(to);
                }
                super.atomicMove(from, to);
            }
        };
    }

    private static void appendAndCommit(StoreHarness h, long from, long to) {
        h.append(items(from, to, 1, from == 1 ? 0 : 1, 1, BODY));
        h.awaitPersisted(to);
        h.on(() -> {
            h.store.setCommitIndex(to);
            return null;
        });
    }

    private List<Path> segmentFiles() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("log"))) {
            return s.sorted().collect(Collectors.toList());
        }
    }

    private static void checkItems(StoreHarness h, long from, long to) {
        List<LogItem> all = h.loadAll(from, to);
        assertEquals(to - from + 1, all.size());
        for (LogItem it : all) {
            assertArrayEquals(bodyFor(it.getIndex(), 1, BODY), bodyOf(it), "item " + it.getIndex());
        }
    }

    /**
     * Fills a few segments, compacts below index 1,500, then appends as much again: the freed files
     * are renamed to hold the new segments instead of new files being made, the items read back
     * whole, and a restart after a clean close finds the log ending at its last item with no torn
     * tail (the close zeroes the header after it: in a recycled segment the old items follow).
     */
    @Test
    void aSegmentFreedByCompactionBecomesALaterSegmentAndTheLogReadsBackWhole() throws Exception {
        FileIo io = recordingRenames(FileIo.DEFAULT);
        long last;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(4))) {
            h.open();
            appendAndCommit(h, 1, 2000);
            List<Path> before = segmentFiles();
            h.call(() -> h.store.deleteBelow(1500));
            int freed = h.on(() -> h.store.segments().recycledWaiting());
            assertTrue(freed >= 2, "compaction kept no file to recycle: " + before + " then " + segmentFiles());
            last = appendUntilInARecycledSegment(h, 2000);
            checkItems(h, h.on(h.store::firstIndex), last);
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(4))) {
            RecoveredState r = h.open();
            assertEquals(last, r.getLastIndex());
            assertFalse(r.hadTornTail(), "a clean close inside a recycled segment read as a torn tail: " + r);
            checkItems(h, r.getFirstIndex(), last);
            appendAndCommit(h, last + 1, last + 100);
            checkItems(h, last - 100, last + 100);
        }
    }

    /**
     * Opens the store, appends 2,000 items, compacts below 1,500 and appends on until well inside a
     * segment made from a recycled file, then 50 items more without committing them; returns the
     * last index reported persisted (where a crash is then to leave the log).
     */
    private long persistedInsideARecycledSegment(StoreHarness h) {
        h.open();
        appendAndCommit(h, 1, 2000);
        h.call(() -> h.store.deleteBelow(1500));
        long last = appendUntilInARecycledSegment(h, 2000);
        h.append(items(last + 1, last + 50, 1, 1, 1, BODY));
        h.awaitPersisted(last + 50);
        return h.persisted();
    }

    /**
     * Appends after {@code last} in batches of 20 until the log is well inside a segment made from a
     * recycled file, so old items follow its last one; returns the new last index.
     */
    private long appendUntilInARecycledSegment(StoreHarness h, long last) {
        for (int batch = 0; ; batch++) {
            assertTrue(batch < 1_000, "the log never rolled into a recycled file");
            appendAndCommit(h, last + 1, last + 20);
            last += 20;
            LogSegment cur = h.on(() -> h.store.segments().current());
            long used = h.on(() -> h.store.appender().nextPos()) - cur.startPos;
            if (renamedTo.contains(cur.path()) && used > 4096 && cur.sizeBytes - used > 4096) {
                return last;
            }
        }
    }

    /**
     * A crash (no close) while appending into recycled segments: the restart keeps every persisted
     * item and takes none of the old items that follow them in the recycled file.
     */
    @Test
    void aCrashInARecycledSegmentKeepsEveryPersistedItemAndNoOldOne() throws Exception {
        FileIo io = recordingRenames(FileIo.DEFAULT);
        long persisted;
        StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(4));
        try {
            persisted = persistedInsideARecycledSegment(h);
        } finally {
            h.shutdown();   // no close: nothing zeroed after the last item
        }
        try (StoreHarness h2 = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(4))) {
            RecoveredState r = h2.open();
            assertEquals(persisted, r.getLastIndex(), "the log after the crash: " + r);
            checkItems(h2, r.getFirstIndex(), r.getLastIndex());
            appendAndCommit(h2, r.getLastIndex() + 1, r.getLastIndex() + 100);
            checkItems(h2, r.getLastIndex() - 50, r.getLastIndex() + 100);
        }
    }

    /** A segment being read when compaction frees it is kept for reuse once its reader leaves, not deleted. */
    @Test
    void aSegmentUnderAReaderIsRecycledWhenTheReaderLeaves() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        Path seg0 = dir.resolve("log").resolve(LogSegment.fileName(0));
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(64))) {
            h.open();
            appendAndCommit(h, 1, 3000);
            CountDownLatch readEntered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            io.hook = FaultyFileIo.holdingFirstRead(seg0, readEntered, release);
            CompletableFuture<List<LogItem>> reading = h.callAsync(() -> h.store.load(1, 100, 1 << 20));
            assertTrue(readEntered.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "the read never started");
            h.call(() -> h.store.deleteBelow(2000));
            int keptWhileRead = h.on(() -> h.store.segments().recycledWaiting());
            assertTrue(keptWhileRead >= 1, "no unread segment was kept for reuse");
            assertTrue(Files.exists(seg0), "the segment being read is kept");

            release.countDown();
            assertEquals(100, StoreHarness.join(reading).size());
            StoreHarness.waitFor("the read segment to be kept for reuse after its reader left",
                    () -> h.on(() -> h.store.segments().recycledWaiting()) == keptWhileRead + 1);
            assertTrue(Files.exists(seg0), "the read segment was deleted, not kept for reuse");
        }
        assertFalse(Files.exists(seg0), "the close left a file kept for reuse on disk");
    }

    /**
     * A segment freed under a reader whose read ends after the store closed: the close already
     * deleted the files kept for reuse, and nothing would ever take this one, so it is deleted, not
     * kept (before, it stayed on disk until the next start).
     */
    @Test
    void aSegmentWhoseReaderLeavesAfterTheCloseIsDeletedNotKept() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        Path seg0 = dir.resolve("log").resolve(LogSegment.fileName(0));
        StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(64));
        try {
            h.open();
            appendAndCommit(h, 1, 3000);
            CountDownLatch readEntered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            io.hook = FaultyFileIo.holdingFirstRead(seg0, readEntered, release);
            CompletableFuture<List<LogItem>> reading = h.callAsync(() -> h.store.load(1, 100, 1 << 20));
            assertTrue(readEntered.await(StoreHarness.TIMEOUT_SECONDS, TimeUnit.SECONDS), "the read never started");
            h.call(() -> h.store.deleteBelow(2000));
            assertTrue(Files.exists(seg0), "the segment being read is kept while read");
            h.call(h.store::close);
            release.countDown();
            assertEquals(100, StoreHarness.join(reading).size());
            StoreHarness.waitFor("the segment read across the close to be deleted once its reader left",
                    () -> !Files.exists(seg0));
            assertEquals(0, (int) h.on(() -> h.store.segments().recycledWaiting()), "a file is kept after the close");
        } finally {
            h.shutdown();
        }
    }

    /**
     * Zeroing the first header of a recycled file fails after the rename, and no other file waits:
     * the retry opens the file left under the spare's name as a new one. Its old first header must
     * be zeroed all the same: the log then fills the segment before it exactly, closes cleanly, and
     * a restart moves on into the spare, where an old item read as a torn tail (the clean end lost).
     */
    @Test
    void aSpareRemadeAfterItsRecyclingFailedHasItsOldFirstHeaderZeroed() throws Exception {
        AtomicBoolean failZeroing = new AtomicBoolean(true);
        FaultyFileIo io = new FaultyFileIo();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeMove(Path from, Path to) {
                if (from.getParent().equals(dir.resolve("log"))) {
                    renamedTo.add(to);
                }
            }

            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (position == 0 && length == LogItemCodec.HEADER_BYTES && renamedTo.contains(file)
                        && failZeroing.compareAndSet(true, false)) {
                    throw new IOException("injected: zeroing the first header of the recycled file " + file);
                }
            }
        };
        long last;
        Path spare;
        byte[] fill;
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(1))) {
            h.open();
            appendAndCommit(h, 1, 2000);
            h.call(() -> h.store.deleteBelow(1500));
            assertEquals(1, (int) h.on(() -> h.store.segments().recycledWaiting()), "no file kept for reuse");
            last = 2000;
            for (int batch = 0; failZeroing.get(); batch++) {
                assertTrue(batch < 1_000, "the recycled file was never taken for a spare");
                appendAndCommit(h, last + 1, last + 5);
                last += 5;
            }
            h.waitFor("the spare to be made again after the failure", () -> h.store.segments().hasSpare());
            spare = renamedTo.iterator().next();
            LogSegment cur = h.on(() -> h.store.segments().current());
            assertFalse(cur.path().equals(spare), "the log rolled into the spare before the test filled the segment");
            // one item that fills the current segment exactly: a restart's scan then goes on into the spare
            long room = h.on(() -> cur.endPos() - h.store.appender().nextPos());
            int body = (int) room - LogItemCodec.sizeOf(0, 1) + 1;
            assertTrue(body >= 1, "too little room left to fill exactly: " + room);
            long filler = last + 1;
            fill = new byte[body];
            java.util.Arrays.fill(fill, (byte) 0x5A);
            h.append(java.util.Collections.singletonList(new LogItem(LogItem.TYPE_NORMAL, 7, 1, 1, filler,
                    1_700_000_000_000L, null, new ByteBody(fill))));
            h.awaitPersisted(filler);
            assertEquals(cur.endPos(), (long) h.on(() -> h.store.appender().nextPos()), "the segment is not full");
            assertTrue(headerIsZero(spare), "the spare made again from " + spare + " kept its old first header");
            last = filler;
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(1))) {
            RecoveredState r = h.open();
            assertEquals(last, r.getLastIndex());
            assertFalse(r.hadTornTail(), "a clean close before a remade spare read as a torn tail: " + r);
            assertArrayEquals(fill, bodyOf(h.load(last, 1, 1 << 20).get(0)));
            appendAndCommit(h, last + 1, last + 100);
            checkItems(h, last + 1, last + 100);
        }
    }

    private static boolean headerIsZero(Path file) throws IOException {
        byte[] b = new byte[LogItemCodec.HEADER_BYTES];
        try (java.io.InputStream in = Files.newInputStream(file)) {
            int n = in.readNBytes(b, 0, b.length);
            assertEquals(b.length, n, "short file " + file);
        }
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    @Test
    void withRecycledSegmentsZeroCompactionDeletesTheFiles() throws Exception {
        FileIo io = recordingRenames(FileIo.DEFAULT);
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io).recycledSegments(0))) {
            h.open();
            appendAndCommit(h, 1, 2000);
            long firstKept = h.on(() -> {
                return h.store.segmentsForTest().get(0).startPos;
            });
            h.call(() -> h.store.deleteBelow(1500));
            long keptFrom = h.on(() -> h.store.segmentsForTest().get(0).startPos);
            assertTrue(keptFrom > firstKept, "nothing was compacted");
            assertEquals(0, (int) h.on(() -> h.store.segments().recycledWaiting()));
            for (Path p : segmentFiles()) {
                assertTrue(Long.parseLong(p.getFileName().toString()) >= keptFrom, "a freed file is still there: " + p);
            }
            appendAndCommit(h, 2001, 4000);
            assertTrue(renamedTo.isEmpty(), "a file was recycled: " + renamedTo);
        }
    }

    @Test
    void aRecycledSegmentsCountOutsideItsBoundsIsRefusedWithTheBounds() {
        LogStoreConfig c = new LogStoreConfig(dir, LogStoreConfig.newIoExecutor("unused", 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.recycledSegments(-1));
        assertTrue(e.getMessage().contains("between 0 and 1024"), e.getMessage());
        assertEquals(LogStoreConfig.DEFAULT_RECYCLED_SEGMENTS, c.recycledSegments(), "the default");
        assertEquals(LogStoreConfig.DEFAULT_RECYCLED_SEGMENTS, new io.poyang.raft.core.RaftConfig().recycledSegments(),
                "a raft group's default is the store's");
    }

    // ---- with the node's log journal, which writes the segments and fsyncs them only at checkpoints

    /**
     * Through the journal, a segment's writes are fsynced only by the journal's checkpoints, and a
     * power loss takes back the rest: in a recycled file that puts its old items back behind the
     * new ones. The journal's replay writes the new ones again, so the restart keeps every item
     * reported persisted, and reads none of the old ones.
     */
    @Test
    void throughTheJournalAPowerLossInARecycledSegmentKeepsEveryPersistedItemAndNoOldOne() throws Exception {
        PowerLossFileIo power = new PowerLossFileIo();
        FileIo io = recordingRenames(power);
        Path groupDir = dir.resolve("group-1");
        LogJournal j = LogJournal.open("test", dir, io, 3, LogJournal.MIN_FILE_BYTES);
        long persisted;
        Path recycledSegment;
        StoreHarness h = new StoreHarness(groupDir, c -> c.fileIo(io).journal(j).recycledSegments(4));
        try {
            persisted = persistedInsideARecycledSegment(h);
            recycledSegment = h.on(() -> h.store.segments().current()).path();
        } finally {
            h.shutdown();
            j.abandonForTests();
        }
        assertTrue(power.unsyncedWrites(recycledSegment) > 0,
                "no write into the recycled segment " + recycledSegment + " was left for the power loss to take back");
        power.powerLoss();

        LogJournal again = LogJournal.open("test", dir, io, 3, LogJournal.MIN_FILE_BYTES);
        try (StoreHarness h2 = new StoreHarness(groupDir, c -> c.fileIo(io).journal(again).recycledSegments(4))) {
            RecoveredState r = h2.open();
            assertEquals(persisted, r.getLastIndex(), "the log after the power loss and the replay: " + r);
            checkItems(h2, r.getFirstIndex(), persisted);
            appendAndCommit(h2, persisted + 1, persisted + 100);
            checkItems(h2, persisted - 50, persisted + 100);
        } finally {
            again.close();
        }
    }

    /**
     * A clean close through the journal inside a recycled segment, then the process dies before the
     * journal's final checkpoint and the machine loses power: the zeroed header after the last item
     * is written and fsynced by the store itself, beside the journal, and the replay, which writes
     * the records after the journal's last checkpoint into the segment again, must not write over
     * it: the restart finds the log ending there, not a torn tail.
     */
    @Test
    void throughTheJournalACleanCloseInARecycledSegmentIsACleanEndAfterAPowerLossAndTheReplay() throws Exception {
        PowerLossFileIo power = new PowerLossFileIo();
        FileIo io = recordingRenames(power);
        Path groupDir = dir.resolve("group-1");
        long last;
        LogJournal j = LogJournal.open("test", dir, io, 3, LogJournal.MIN_FILE_BYTES);
        try (StoreHarness h = new StoreHarness(groupDir, c -> c.fileIo(io).journal(j).recycledSegments(4))) {
            h.open();
            appendAndCommit(h, 1, 2000);
            h.call(() -> h.store.deleteBelow(1500));
            last = appendUntilInARecycledSegment(h, 2000);
        } finally {
            j.abandonForTests();   // no final checkpoint: the replay has the last records to redo
        }
        power.powerLoss();
        LogJournal again = LogJournal.open("test", dir, io, 3, LogJournal.MIN_FILE_BYTES);
        try (StoreHarness h = new StoreHarness(groupDir, c -> c.fileIo(io).journal(again).recycledSegments(4))) {
            RecoveredState r = h.open();
            assertEquals(last, r.getLastIndex());
            assertFalse(r.hadTornTail(), "a clean close inside a recycled segment read as a torn tail: " + r);
            checkItems(h, r.getFirstIndex(), last);
        } finally {
            again.close();
        }
    }
}
