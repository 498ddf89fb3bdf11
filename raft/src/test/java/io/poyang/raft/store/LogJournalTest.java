package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node's log journal: a store writing through it reports items persisted that its own files
 * hold only in the page cache; after a power loss (modelled by {@link PowerLossFileIo}) the
 * journal's replay gives them back.
 */
@ExtendWith(NoImpossibleStates.class)
class LogJournalTest {

    private static final long FILE_BYTES = LogJournal.MIN_FILE_BYTES;

    @TempDir
    Path node;

    private final PowerLossFileIo io = new PowerLossFileIo();

    private Path groupDir() {
        return node.resolve("group-1");
    }

    private StoreHarness store(LogJournal journal) {
        return new StoreHarness(groupDir(), c -> c.fileIo(io).journal(journal));
    }

    private LogJournal openJournal() throws java.io.IOException {
        return LogJournal.open("test", node, io, 3, FILE_BYTES);
    }

    /** A store writing through a new journal, opened, with items 1..n (salt 1, 100-byte bodies) persisted. */
    private StoreHarness storeWithItems(LogJournal j, long n) {
        StoreHarness h = store(j);
        h.open();
        h.append(items(1, n, 1, 0, 1, 100));
        h.awaitPersisted(n);
        return h;
    }

    /** A check of the store once the journal was opened again (replayed); the store runs through it. */
    private interface AfterReplay {
        void check(StoreHarness h) throws Exception;
    }

    private void afterReplay(AfterReplay check) throws Exception {
        LogJournal again = openJournal();
        try (StoreHarness h = store(again)) {
            check.check(h);
        } finally {
            again.close();
        }
    }

    /** The process dies and the machine loses power: the unsynced writes of the log's files are gone. */
    private void crashWithPowerLoss(StoreHarness h, LogJournal j) throws Exception {
        h.shutdown();
        j.abandonForTests();
        io.powerLoss();
    }

    @Test
    void itemsReportedPersistedSurviveAPowerLossThroughTheReplay() throws Exception {
        LogJournal j = openJournal();
        crashWithPowerLoss(storeWithItems(j, 2000), j);
        assertTrue(io.writesTakenBack() > 0, "the log's own files were never fsynced, so the power loss took writes back");
        afterReplay(h -> {
            assertEquals(2000, h.open().getLastIndex());
            checkItems(h, 1, 2000, 1, 100);
        });
    }

    @Test
    void withoutTheReplayThePowerLossWouldLoseThem() throws Exception {
        // the other half of the test above: the journal's replay, not the page cache, brought them back
        LogJournal j = openJournal();
        crashWithPowerLoss(storeWithItems(j, 2000), j);
        try (StoreHarness h2 = new StoreHarness(groupDir(), c -> c.fileIo(io))) {
            RecoveredState s = h2.open();
            assertTrue(s.getLastIndex() < 2000, "last index " + s.getLastIndex());
        }
    }

    @Test
    void theJournalGoesRoundItsFilesAndCheckpointsTheLogsBeforeWritingOverThem() throws Exception {
        // about 3 times the journal's 12 MiB: each file is written over twice or more
        int n = 9000;
        int bodyBytes = 4000;
        LogJournal j = openJournal();
        StoreHarness h = new StoreHarness(groupDir(), c -> c.fileIo(io).journal(j).segmentBytes(4 << 20));
        h.open();
        for (int from = 1; from <= n; from += 500) {
            h.append(items(from, from + 499, 1, from == 1 ? 0 : 1, 3, bodyBytes));
            h.awaitPersisted(from + 499);
        }
        assertTrue(j.recordCount() > 0);
        crashWithPowerLoss(h, j);

        LogJournal again = LogJournal.open("test", node, io, 3, FILE_BYTES);
        try (StoreHarness h2 = new StoreHarness(groupDir(), c -> c.fileIo(io).journal(again).segmentBytes(4 << 20))) {
            assertEquals(n, h2.open().getLastIndex());
            checkItems(h2, 1, n, 3, bodyBytes);
        } finally {
            again.close();
        }
    }

    /**
     * Before, a checkpoint started only when the writer entered the next journal file, so the logs'
     * files were fsynced a whole journal file's worth at once (16 MiB by default), and the journal's
     * fdatasyncs waited behind that flush (1 group's p99 latency tripled).
     */
    @Test
    void aCheckpointStartsAfterAnEighthOfAFileNotOnlyAtTheNextFile() throws Exception {
        LogJournal j = openJournal();
        // about 1 MiB of records: a quarter of the first 4 MiB file, two eighths
        StoreHarness h = storeWithItems(j, 8000);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (j.checkpointCount() == 0 && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertTrue(j.checkpointCount() > 0, "no checkpoint within the journal's first file");
        crashWithPowerLoss(h, j);
        // the checkpoint fsynced the log's file: without the journal's replay, the items it covered stay
        try (StoreHarness h2 = new StoreHarness(groupDir(), c -> c.fileIo(io))) {
            long last = h2.open().getLastIndex();
            assertTrue(last >= 1, "the power loss took back every item: the log's file was never fsynced");
            checkItems(h2, 1, last, 1, 100);
        }
    }

    @Test
    void aTruncationIsReplayedAfterTheItemsItRemoved() throws Exception {
        LogJournal j = openJournal();
        StoreHarness h = storeWithItems(j, 300);
        h.on(() -> {
            h.store.setCommitIndex(100);
            return null;
        });
        h.call(() -> h.store.truncateTail(150));
        h.append(items(150, 170, 2, 1, 2, 100));
        h.awaitPersisted(170);
        crashWithPowerLoss(h, j);

        afterReplay(h2 -> {
            RecoveredState s = h2.open();
            assertEquals(170, s.getLastIndex(), "the removed items 171..300 must not come back");
            assertEquals(2, s.getLastTerm());
            checkItems(h2, 1, 149, 1, 100);
            checkItems(h2, 150, 170, 2, 100);
        });
    }

    @Test
    void aTruncationWithNothingAfterItStaysAfterThePowerLoss() throws Exception {
        LogJournal j = openJournal();
        StoreHarness h = storeWithItems(j, 300);
        h.call(() -> h.store.truncateTail(150));
        crashWithPowerLoss(h, j);
        afterReplay(h2 -> assertEquals(149, h2.open().getLastIndex()));
    }

    @Test
    void aDamagedRecordEndsTheReplay() throws Exception {
        LogJournal j = openJournal();
        StoreHarness h = store(j);
        h.open();
        for (int from = 1; from <= 2000; from += 100) {
            h.append(items(from, from + 99, 1, from == 1 ? 0 : 1, 1, 100));
            h.awaitPersisted(from + 99);   // one write, and one record, per hundred items
        }
        crashWithPowerLoss(h, j);
        // a byte in the middle of the first file's records: the records from there on are not replayed
        Path first = node.resolve(LogJournal.DIR_NAME).resolve("journal-0");
        long at = 100_000;
        try (LogFile f = FileIo.DEFAULT.openExisting(first)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            f.readFully(b, at);
            b.flip();
            byte was = b.get(0);
            f.writeFully(ByteBuffer.wrap(new byte[] {(byte) (was ^ 0x5a)}), at);
        }

        afterReplay(h2 -> {
            long last = h2.open().getLastIndex();
            assertTrue(last > 0 && last < 2000, "last index " + last);
            checkItems(h2, 1, last, 1, 100);
        });
    }

    /**
     * What a node does when it removes a group with its data ({@code RaftServer.removeGroup}): the
     * checkpoint after the deletion keeps the removed files' records from being replayed into the
     * files of a group made again under the same id, which have the same names.
     */
    @Test
    void aCheckpointKeepsTheRecordsOfDeletedFilesOutOfFilesMadeAgainUnderTheirNames() throws Exception {
        LogJournal j = openJournal();
        storeWithItems(j, 500).close();
        deleteTree(groupDir());
        j.checkpoint();
        StoreHarness fresh = store(j);
        fresh.open();
        fresh.append(items(1, 50, 1, 0, 2, 100));   // the same sizes: the same positions in the same files
        fresh.awaitPersisted(50);
        crashWithPowerLoss(fresh, j);

        afterReplay(h2 -> {
            assertEquals(50, h2.open().getLastIndex(), "the removed group's items 51..500 came back");
            checkItems(h2, 1, 50, 2, 100);
        });
    }

    private static void deleteTree(Path dir) throws java.io.IOException {
        try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
            List<Path> all = new java.util.ArrayList<>();
            paths.forEach(all::add);
            java.util.Collections.reverse(all);
            for (Path p : all) {
                Files.delete(p);
            }
        }
    }

    /**
     * A torn round can leave a later record intact after a damaged one (a later part of a write can
     * reach the disk first). Replay stops at the damaged one and the writer goes on there; when its
     * new records end exactly where the intact stale one begins, the next replay must not take the
     * stale one as their continuation: the sequence numbers jump at each start.
     */
    @Test
    void anIntactRecordAfterATornOneIsNeverReplayedWhenNewRecordsEndWhereItBegins() throws Exception {
        Path target = groupDir().resolve("log").resolve("00000000000000000000");
        Files.createDirectories(target.getParent());
        Files.write(target, new byte[4096]);
        LogJournal j1 = LogJournal.open("test", node, io, 3, FILE_BYTES);
        LogSegment seg = new LogSegment(0, 4096, FileIo.DEFAULT.open(target));
        journal(j1, seg, 0, 'a');
        journal(j1, seg, 100, 'b');
        journal(j1, seg, 200, 'c');
        j1.abandonForTests();
        // damage record b's payload: it is the second record in journal-0
        int recordBytes = JournalFormat.HEADER_BYTES + JournalFormat.pathBytes(node, target).length + 100;
        Path first = node.resolve(LogJournal.DIR_NAME).resolve("journal-0");
        byte[] journal0 = Files.readAllBytes(first);
        journal0[recordBytes + recordBytes - 10] ^= 1;
        Files.write(first, journal0);

        LogJournal j2 = LogJournal.open("test", node, io, 3, FILE_BYTES);   // replays a, stops at b
        seg.journalPath = null;
        journal(j2, seg, 100, 'x');   // as long as b: it ends where c begins
        j2.abandonForTests();

        LogJournal.open("test", node, io, 3, FILE_BYTES).close();
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[50]);
        assertEquals('x', got[150]);
        assertEquals(0, got[250], "the stale record c was replayed after the new one");
        seg.file.close();
    }

    /** Journals 100 bytes of {@code fill} for {@code position} of {@code seg} (not written there) and waits. */
    private static void journal(LogJournal j, LogSegment seg, long position, char fill) throws Exception {
        BytesJournalRecord r = BytesJournalRecord.filled(seg, position, 100, fill);
        j.append(r);
        r.done.get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void aCleanCloseLeavesNothingToReplay() throws Exception {
        LogJournal j = openJournal();
        storeWithItems(j, 500).close();
        j.close();
        // the final checkpoint fsynced the log's files: a power loss now takes nothing of them back
        io.powerLoss();
        try (StoreHarness h2 = new StoreHarness(groupDir(), c -> c.fileIo(io))) {
            assertEquals(500, h2.open().getLastIndex());
        }
    }

    @Test
    void aNodeWithTheJournalOffReplaysAndRemovesOneLeftBehind() throws Exception {
        LogJournal j = openJournal();
        crashWithPowerLoss(storeWithItems(j, 800), j);

        LogJournal.replayAndRemoveLeftover(node, io);
        assertFalse(Files.exists(node.resolve(LogJournal.DIR_NAME)));
        try (StoreHarness h2 = new StoreHarness(groupDir(), c -> c.fileIo(io))) {
            assertEquals(800, h2.open().getLastIndex());
            checkItems(h2, 1, 800, 1, 100);
        }
        LogJournal.replayAndRemoveLeftover(node, io);   // none: nothing happens
    }

    @Test
    void aNewShapeIsTakenAfterTheOldJournalIsReplayed() throws Exception {
        LogJournal j = openJournal();
        crashWithPowerLoss(storeWithItems(j, 800), j);

        LogJournal again = LogJournal.open("test", node, io, 4, 2 * FILE_BYTES);
        try (StoreHarness h2 = store(again)) {
            assertEquals(800, h2.open().getLastIndex());
            h2.append(items(801, 900, 1, 1, 1, 100));
            h2.awaitPersisted(900);
        } finally {
            again.close();
        }
        Path dir = node.resolve(LogJournal.DIR_NAME);
        assertEquals(2 * FILE_BYTES, Files.size(dir.resolve("journal-3")));
        try (StoreHarness h3 = new StoreHarness(groupDir(), c -> c.fileIo(io))) {
            assertEquals(900, h3.open().getLastIndex());
        }
    }

    @Test
    void aCheckpointWithBothSlotsDamagedIsRefusedWithAClearError() throws Exception {
        LogJournal.open("test", node, io, 3, FILE_BYTES).close();
        Path cp = node.resolve(LogJournal.DIR_NAME).resolve("checkpoint-slots");
        byte[] b = Files.readAllBytes(cp);
        b[10] ^= 1;
        b[JournalFormat.SLOT_BYTES + 10] ^= 1;
        Files.write(cp, b);
        LogCorruptedException e = assertThrows(LogCorruptedException.class,
                () -> LogJournal.open("test", node, io, 3, FILE_BYTES));
        assertTrue(e.getMessage().contains("checkpoint") && e.getMessage().contains("both slots"), e.getMessage());
    }

    @Test
    void aJournalTooSmallIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> LogJournal.open("test", node, io, 2, FILE_BYTES));
        assertThrows(IllegalArgumentException.class, () -> LogJournal.open("test", node, io, 3, FILE_BYTES - 1));
    }

    private static void checkItems(StoreHarness h, long from, long to, int salt, int baseLen) {
        List<LogItem> all = h.loadAll(from, to);
        assertTrue(all.size() >= to - from + 1, all.size() + " items");
        all = all.subList(0, (int) (to - from + 1));
        for (LogItem it : all) {
            assertArrayEquals(bodyFor(it.getIndex(), salt, baseLen), bodyOf(it), "item " + it.getIndex());
        }
    }
}
