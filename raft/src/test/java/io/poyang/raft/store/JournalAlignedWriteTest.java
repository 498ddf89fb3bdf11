package io.poyang.raft.store;

import com.sun.nio.file.ExtendedOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The journal's writer writes whole 4 KiB blocks at block positions (so its files can bypass the
 * page cache): a round that ends inside a block writes that block again in the next round, and
 * neither that nor a restart inside a block may lose a record an earlier round reported durable.
 */
@ExtendWith(NoImpossibleStates.class)
class JournalAlignedWriteTest {

    private static final long FILE_BYTES = LogJournal.MIN_FILE_BYTES;
    private static final int BLOCK = LogJournal.WRITE_ALIGNMENT;

    @TempDir
    Path node;

    /** Power loss as in LogJournalTest. */
    private final PowerLossFileIo power = new PowerLossFileIo();

    /** Over {@link #power}: every write to a journal file recorded (position, length). */
    private final class RecordingIo extends ForwardingFileIo {
        private final List<long[]> journalWrites = new ArrayList<>();
        private volatile boolean alignedMemoryExpected = true;

        RecordingIo() {
            super(power);
        }

        @Override
        protected LogFile wrap(LogFile f) {
            if (!f.path().getParent().getFileName().toString().equals(LogJournal.DIR_NAME)
                    || !f.path().getFileName().toString().startsWith("journal-")) {
                return f;   // not a journal file (a group's file, or the checkpoint slots)
            }
            return new ForwardingLogFile(f) {
                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    // what O_DIRECT needs of the memory too, for the writer's writes (not the zero-filling
                    // of new files): these files are buffered, the writer is the same
                    if (alignedMemoryExpected && Thread.currentThread().getName().endsWith("-journal")
                            && (!src.isDirect() || src.alignmentOffset(src.position(), BLOCK) != 0)) {
                        throw new AssertionError("a journal write from memory not aligned to a block: " + src);
                    }
                    synchronized (journalWrites) {
                        journalWrites.add(new long[]{position, src.remaining()});
                    }
                    return f.write(src, position);
                }
            };
        }

        List<long[]> journalWrites() {
            synchronized (journalWrites) {
                return new ArrayList<>(journalWrites);
            }
        }
    }

    private final RecordingIo io = new RecordingIo();

    private StoreHarness store(LogJournal journal, int segmentBytes) {
        return new StoreHarness(node.resolve("group-1"), c -> c.fileIo(io).journal(journal).segmentBytes(segmentBytes));
    }

    /** Appends items one round at a time (each waited for), so most rounds end inside a block. */
    private static void appendOneByOne(StoreHarness h, long from, long to, int prevTerm) {
        for (long i = from; i <= to; i++) {
            h.append(items(i, i, 1, i == from ? prevTerm : 1, 1, 100));
            h.awaitPersisted(i);
        }
    }

    private void crashWithPowerLoss(StoreHarness h, LogJournal j) throws Exception {
        h.shutdown();
        j.abandonForTests();
        power.powerLoss();
    }

    /** A new journal and a store through it take items 1..last one round each; then a power loss. */
    private void oneByOneThenPowerLoss(long last, long fileBytes) throws Exception {
        LogJournal j = LogJournal.open("test", node, io, 3, fileBytes);
        StoreHarness h = store(j, 64 * 1024);
        h.open();
        appendOneByOne(h, 1, last, 0);
        crashWithPowerLoss(h, j);
    }

    /** Opens the journal again (its replay) and a store through it: items 1..last are all there. */
    private void afterReplayItemsUpTo(long last, long fileBytes) throws Exception {
        LogJournal again = LogJournal.open("test", node, io, 3, fileBytes);
        try (StoreHarness h = store(again, 64 * 1024)) {
            assertEquals(last, h.open().getLastIndex());
            checkItems(h, 1, last);
        } finally {
            again.close();
        }
    }

    private static void checkItems(StoreHarness h, long from, long to) {
        List<LogItem> all = h.loadAll(from, to);
        assertTrue(all.size() >= to - from + 1, all.size() + " items");
        for (LogItem it : all.subList(0, (int) (to - from + 1))) {
            assertArrayEquals(bodyFor(it.getIndex(), 1, 100), bodyOf(it), "item " + it.getIndex());
        }
    }

    @Test
    void everyJournalWriteIsWholeBlocksAtABlockPosition() throws Exception {
        LogJournal j = LogJournal.open("test", node, io, 3, FILE_BYTES);
        try (StoreHarness h = store(j, 64 * 1024)) {
            h.open();
            appendOneByOne(h, 1, 200, 0);
            h.append(items(201, 2000, 1, 1, 1, 100));
            h.awaitPersisted(2000);
        } finally {
            j.close();
        }
        List<long[]> writes = io.journalWrites();
        assertTrue(writes.size() >= 200, writes.size() + " journal writes");
        long rewrites = 0;
        long lastBlock = -1;
        for (long[] w : writes) {
            assertEquals(0, w[0] % BLOCK, "a journal write at " + w[0]);
            assertEquals(0, w[1] % BLOCK, "a journal write of " + w[1] + " bytes");
            if (w[0] == lastBlock) {
                rewrites++;
            }
            lastBlock = w[0] + w[1] - BLOCK;
        }
        assertTrue(rewrites > 100, "rounds ending inside a block write it again; only " + rewrites + " did");
    }

    @Test
    void recordsOfRoundsSharingABlockSurviveAPowerLoss() throws Exception {
        oneByOneThenPowerLoss(300, FILE_BYTES);
        assertTrue(power.writesTakenBack() > 0, "the log's own files were not fsynced, the power loss took writes back");

        afterReplayItemsUpTo(300, FILE_BYTES);
    }

    @Test
    void aJournalReopenedInsideABlockKeepsThatBlocksEarlierRecords() throws Exception {
        oneByOneThenPowerLoss(50, FILE_BYTES);
        Path first = node.resolve(LogJournal.DIR_NAME).resolve("journal-0");
        byte[] before = Files.readAllBytes(first);

        // the replay ends inside a block (50 records of about 250 bytes); the next writes go on in it
        LogJournal second = LogJournal.open("test", node, io, 3, FILE_BYTES);
        StoreHarness h2 = store(second, 64 * 1024);
        assertEquals(50, h2.open().getLastIndex());
        appendOneByOne(h2, 51, 120, 1);
        crashWithPowerLoss(h2, second);

        // the block's first run records are still there, byte for byte, before the second run's
        byte[] after = Files.readAllBytes(first);
        int last = before.length - 1;
        while (last >= 0 && before[last] == 0) {
            last--;
        }
        assertTrue(last > 0 && last % BLOCK != BLOCK - 1, "the first run ended inside a block: " + last);
        assertTrue(Arrays.equals(before, 0, last + 1, after, 0, last + 1),
                "the first run's records were written over when the second went on in their block");
        assertFalse(Arrays.equals(before, after), "the second run wrote into the same file");

        afterReplayItemsUpTo(120, FILE_BYTES);
    }

    @Test
    void aRecordLargerThanTheStagingBufferGoesThroughItWhole() throws Exception {
        LogJournal j = LogJournal.open("test", node, io, 3, FILE_BYTES);
        // else the 1.5 MiB round starts a checkpoint, which fsyncs the segment and moves the replay past it
        j.checkpointOnlyAtFileSwitchesForTests();
        StoreHarness h = store(j, 4 << 20);
        h.open();
        appendOneByOne(h, 1, 3, 0);
        byte[] big = bodyFor(4, 9, (3 << 20) / 2);   // 1.5 MiB, more than the 1 MiB staging buffer
        h.append(java.util.Collections.singletonList(StoreHarness.item(4, 1, 1, big)));
        h.awaitPersisted(4);
        appendOneByOne(h, 5, 8, 1);
        crashWithPowerLoss(h, j);
        assertTrue(power.writesTakenBack() > 0, "the power loss took the segment's writes back: the replay gives them");

        LogJournal again = LogJournal.open("test", node, io, 3, FILE_BYTES);
        try (StoreHarness h2 = store(again, 4 << 20)) {
            assertEquals(8, h2.open().getLastIndex());
            List<LogItem> all = h2.loadAll(1, 8);
            assertArrayEquals(big, bodyOf(all.get(3)));
            for (int i : new int[]{0, 1, 2, 4, 5, 6, 7}) {
                assertArrayEquals(bodyFor(i + 1, 1, 100), bodyOf(all.get(i)), "item " + (i + 1));
            }
        } finally {
            again.close();
        }
    }

    @Test
    void aFileSizeNotAMultipleOfTheBlockIsWrittenUnalignedThroughThePageCache() throws Exception {
        long odd = FILE_BYTES + 100;
        io.alignedMemoryExpected = false;
        LogJournal j = LogJournal.open("test", node, io, 3, odd);
        assertFalse(j.bypassesPageCache());
        StoreHarness h = store(j, 64 * 1024);
        h.open();
        appendOneByOne(h, 1, 100, 0);
        crashWithPowerLoss(h, j);
        assertTrue(io.journalWrites().stream().anyMatch(w -> w[0] % BLOCK != 0), "no unaligned journal write");

        afterReplayItemsUpTo(100, odd);
    }

    /** Whether this file system takes O_DIRECT for a file beside the journal's. */
    private boolean fileSystemTakesDirectIo() throws IOException {
        Path probe = Files.createFile(node.resolve("probe"));
        try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.READ, StandardOpenOption.WRITE,
                ExtendedOpenOption.DIRECT)) {
            return Files.getFileStore(probe).getBlockSize() <= BLOCK && BLOCK % Files.getFileStore(probe).getBlockSize() == 0;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        } finally {
            Files.delete(probe);
        }
    }

    @Test
    void withThePlainFileIoTheJournalBypassesThePageCacheWhereTheFileSystemTakesIt() throws Exception {
        boolean expected = fileSystemTakesDirectIo();
        LogJournal j = LogJournal.open("test", node, FileIo.DEFAULT, 3, FILE_BYTES);
        StoreHarness h = new StoreHarness(node.resolve("group-1"), c -> c.journal(j));
        h.open();
        assertEquals(expected, j.bypassesPageCache(), "O_DIRECT taken by " + node + "'s file system: " + expected);
        appendOneByOne(h, 1, 100, 0);
        h.append(items(101, 1500, 1, 1, 1, 100));
        h.awaitPersisted(1500);
        h.shutdown();
        j.abandonForTests();   // a process crash: the replay writes the journal's records again

        LogJournal again = LogJournal.open("test", node, FileIo.DEFAULT, 3, FILE_BYTES);
        try (StoreHarness h2 = new StoreHarness(node.resolve("group-1"), c -> c.journal(again))) {
            assertEquals(1500, h2.open().getLastIndex());
            checkItems(h2, 1, 1500);
        } finally {
            again.close();
        }
    }
}
