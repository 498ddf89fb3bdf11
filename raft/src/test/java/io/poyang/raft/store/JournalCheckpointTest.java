package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log journal's checkpoints, saved in place in two slots ({@link CheckpointSlots}): a save on a
 * full disk, a save torn by a crash, either slot as the start of replay, and the upgrade from the
 * checkpoint file journals had before the slots.
 */
@ExtendWith(NoImpossibleStates.class)
class JournalCheckpointTest {

    private static final long FILE_BYTES = LogJournal.MIN_FILE_BYTES;

    @TempDir
    Path node;

    private final PowerLossFileIo power = new PowerLossFileIo();

    private Path target() throws IOException {
        Path t = node.resolve("group-1").resolve("log").resolve("00000000000000000000");
        if (!Files.exists(t)) {
            Files.createDirectories(t.getParent());
            Files.write(t, new byte[8 << 20]);   // written whole: its blocks are allocated
        }
        return t;
    }

    private Path journalDir() {
        return node.resolve(LogJournal.DIR_NAME);
    }

    /**
     * Before, a checkpoint wrote a new file ({@code checkpoint.tmp}) and renamed it over the old:
     * on a full disk that write failed, the journal failed, and every group of the node with it,
     * though their own writes (over blocks they have) and the journal's (over its zero-filled
     * files) still went through. Now a checkpoint writes in place, and the journal goes on; a
     * restart on the still-full disk replays as well.
     */
    @Test
    void checkpointsOnADiskWithNoFreeBlockSucceedAndTheJournalGoesOn() throws Exception {
        NoFreeBlocksIo io = new NoFreeBlocksIo(power);
        Path target = target();
        LogJournal j = LogJournal.open("test", node, io, 3, FILE_BYTES);
        LogSegment seg = new LogSegment(0, 8 << 20, io.open(target));
        try {
            writeAndJournal(j, seg, 0, 1000, 'a').get(30, TimeUnit.SECONDS);
            io.full = true;
            assertThrows(IOException.class, () -> io.open(node.resolve("new-file")), "the disk is not full");
            io.refused = 0;
            long checkpointsBefore = j.checkpointCount();
            // 2 MiB in 64 KiB writes: four eighths of a journal file, each starting a checkpoint
            for (int i = 0; i < 32; i++) {
                writeAndJournal(j, seg, 1000 + i * (64L << 10), 64 << 10, (char) ('b' + i % 20)).get(30, TimeUnit.SECONDS);
            }
            j.checkpoint();
            assertNull(j.failure(), "the journal failed on the full disk");
            assertTrue(j.checkpointCount() > checkpointsBefore + 2, j.checkpointCount() + " checkpoints");
            writeAndJournal(j, seg, (3L << 20), 100, 'z').get(30, TimeUnit.SECONDS);
            j.abandonForTests();
            power.powerLoss();
        } finally {
            seg.file.close();
        }
        assertEquals(0, io.refused, "a write needed a new block");
        LogJournal.open("test", node, io, 3, FILE_BYTES).close();   // the restart's replay, on the full disk
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[999]);
        assertEquals('b' + 31 % 20, got[(int) (1000 + 31 * (64L << 10) + 5)]);
        assertEquals('z', got[(3 << 20) + 50], "the last write, journalled but never checkpointed, was lost");
    }

    /**
     * A crash in the middle of a checkpoint's slot write leaves the slot torn (some of its bytes
     * new, the rest old), or unchanged. The start takes the other slot and replays from there;
     * the journal then saves over the torn slot as usual. {@code tornAfter}: the bytes of the slot
     * that reach the file before the crash; with {@code -1} all of them but no fsync, and the power
     * is lost too.
     */
    @ParameterizedTest(name = "torn after {0} bytes")
    @ValueSource(ints = {0, 1, 12, 30, JournalFormat.SLOT_CONTENT_BYTES - 1, -1})
    void aCheckpointSlotTornByACrashIsSkippedAndReplayStartsFromTheOther(int tornAfter) throws Exception {
        TearingIo io = new TearingIo(power);
        Path target = target();
        LogJournal j = LogJournal.open("test", node, io, 3, FILE_BYTES);
        j.checkpointOnlyAtFileSwitchesForTests();
        LogSegment seg = new LogSegment(0, 8 << 20, io.open(target));
        try {
            writeAndJournal(j, seg, 0, 100, 'a').get(30, TimeUnit.SECONDS);
            j.checkpoint();   // both slots after a
            writeAndJournal(j, seg, 100, 100, 'b').get(30, TimeUnit.SECONDS);
            io.tearAfter = tornAfter;
            assertThrows(IOException.class, j::checkpoint);
            assertTrue(io.tore, "the checkpoint's slot write was not torn");
            j.abandonForTests();
            if (tornAfter < 0) {
                power.powerLoss();
            }
        } finally {
            seg.file.close();
        }
        LogJournal again = LogJournal.open("test", node, power, 3, FILE_BYTES);
        again.checkpointOnlyAtFileSwitchesForTests();
        LogSegment seg2 = new LogSegment(0, 8 << 20, power.open(target));
        try {
            writeAndJournal(again, seg2, 200, 100, 'c').get(30, TimeUnit.SECONDS);
            again.abandonForTests();
            power.powerLoss();   // c is only in the journal: the slots saved at this start must lead to it
        } finally {
            seg2.file.close();
        }
        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[50]);
        assertEquals('b', got[150]);
        assertEquals('c', got[250]);
    }

    /**
     * Both slots must start a whole chain of records: a start saves its position into both, as the
     * sequence numbers jump there and an older position's chain ends at the jump. Here the newest
     * slot is damaged after a restart, and the records written since (only in the journal, after a
     * power loss) must still be replayed from the other.
     */
    @Test
    void theOlderSlotIsAValidStartWhenTheNewestIsDamaged() throws Exception {
        Path target = target();
        LogJournal j1 = LogJournal.open("test", node, power, 3, FILE_BYTES);
        j1.checkpointOnlyAtFileSwitchesForTests();
        LogSegment seg = new LogSegment(0, 8 << 20, power.open(target));
        writeAndJournal(j1, seg, 0, 100, 'a').get(30, TimeUnit.SECONDS);
        j1.abandonForTests();

        LogJournal j2 = LogJournal.open("test", node, power, 3, FILE_BYTES);   // replays a, saves the slots
        j2.checkpointOnlyAtFileSwitchesForTests();
        seg.journalPath = null;
        writeAndJournal(j2, seg, 100, 100, 'b').get(30, TimeUnit.SECONDS);
        j2.abandonForTests();
        seg.file.close();
        power.powerLoss();
        assertEquals(0, Files.readAllBytes(target)[150], "b reached its file: the test shows nothing");

        damageNewestSlot();
        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[50]);
        assertEquals('b', got[150], "b was not replayed from the older slot");
    }

    /** A journal of an earlier version kept its checkpoint in the file {@code checkpoint}: a start replays from it. */
    @Test
    void aJournalWithTheLegacyCheckpointFileIsReplayedAndMovesToTheSlots() throws Exception {
        Path target = target();
        crashAfterTwoRecordsWithALegacyCheckpoint(target);

        LogJournal again = LogJournal.open("test", node, power, 3, FILE_BYTES);
        again.close();
        assertTrue(Files.exists(journalDir().resolve(JournalFormat.CHECKPOINT_SLOTS)));
        assertArrayEquals(JournalFormat.DOWNGRADE_GUARD,
                Files.readAllBytes(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT)),
                "the legacy checkpoint was not replaced by the downgrade guard");
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[50]);
        assertEquals('b', got[150]);
    }

    @Test
    void aNodeWithTheJournalOffReplaysAndRemovesAJournalWithTheLegacyCheckpointFile() throws Exception {
        Path target = target();
        crashAfterTwoRecordsWithALegacyCheckpoint(target);

        LogJournal.replayAndRemoveLeftover(node, power);
        assertFalse(Files.exists(journalDir()));
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[50]);
        assertEquals('b', got[150]);
    }

    /**
     * A node with the journal turned off replays and removes it; a crash between deleting the
     * guard and deleting the slots must leave a journal the next start accepts (the guard without
     * the slots would be refused as a journal that lost its checkpoint).
     */
    @Test
    void aCrashWhileTheJournalIsRemovedLeavesOneTheNextStartAccepts() throws Exception {
        Path target = target();
        crashAfterOneRecord(target);
        // the process dies at the second of the two checkpoint files' deletions, whichever goes first
        FaultyFileIo dies = new FaultyFileIo();
        java.util.concurrent.atomic.AtomicInteger deleted = new java.util.concurrent.atomic.AtomicInteger();
        dies.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeDelete(Path file) throws IOException {
                String name = file.getFileName().toString();
                if ((name.equals(JournalFormat.CHECKPOINT_SLOTS) || name.equals(JournalFormat.LEGACY_CHECKPOINT))
                        && deleted.incrementAndGet() == 2) {
                    throw new IOException("injected: the process died before deleting " + file);
                }
            }
        };
        assertThrows(IOException.class, () -> LogJournal.replayAndRemoveLeftover(node, dies));
        assertEquals(2, deleted.get(), "the second deletion was never tried: the test shows nothing");

        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        assertArrayEquals(JournalFormat.DOWNGRADE_GUARD,
                Files.readAllBytes(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT)), "the guard was not written again");
        assertEquals('a', Files.readAllBytes(target)[50]);
    }

    /** One record ('a' at 0..99) journalled, a crash and a power loss: the record only in the journal. */
    private void crashAfterOneRecord(Path target) throws Exception {
        LogJournal j = LogJournal.open("test", node, power, 3, FILE_BYTES);
        LogSegment seg = new LogSegment(0, 8 << 20, power.open(target));
        writeAndJournal(j, seg, 0, 100, 'a').get(30, TimeUnit.SECONDS);
        j.abandonForTests();
        seg.file.close();
        power.powerLoss();
    }

    /**
     * Two records journalled, a crash and a power loss (the records only in the journal), and the
     * slots file replaced by the checkpoint file of the format before the slots, as a journal of
     * that version leaves it.
     */
    private void crashAfterTwoRecordsWithALegacyCheckpoint(Path target) throws Exception {
        LogJournal j = LogJournal.open("test", node, power, 3, FILE_BYTES);
        j.checkpointOnlyAtFileSwitchesForTests();
        LogSegment seg = new LogSegment(0, 8 << 20, power.open(target));
        writeAndJournal(j, seg, 0, 100, 'a').get(30, TimeUnit.SECONDS);
        writeAndJournal(j, seg, 100, 100, 'b').get(30, TimeUnit.SECONDS);
        j.abandonForTests();
        seg.file.close();
        power.powerLoss();
        assertEquals(0, Files.readAllBytes(target)[150], "b reached its file: the test shows nothing");

        JournalFormat.Checkpoint cp = CheckpointSlots.read(FileIo.DEFAULT, journalDir());
        Files.write(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT), legacyCheckpoint(cp));
        Files.delete(journalDir().resolve(JournalFormat.CHECKPOINT_SLOTS));
    }

    /** The checkpoint file as journals before the slots wrote it (JournalFormat's class comment). */
    private static byte[] legacyCheckpoint(JournalFormat.Checkpoint cp) {
        ByteBuffer b = ByteBuffer.allocate(JournalFormat.LEGACY_CHECKPOINT_BYTES);
        b.putInt(JournalFormat.LEGACY_CHECKPOINT_MAGIC).putInt(cp.fileCount).putLong(cp.fileBytes)
                .putInt(cp.start.file).putLong(cp.start.offset).putLong(cp.start.seq);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    private void damageNewestSlot() throws IOException {
        Path p = journalDir().resolve(JournalFormat.CHECKPOINT_SLOTS);
        byte[] b = Files.readAllBytes(p);
        long[] generation = new long[2];
        for (int i = 0; i < 2; i++) {
            ByteBuffer slot = ByteBuffer.wrap(b, i * JournalFormat.SLOT_BYTES, JournalFormat.SLOT_CONTENT_BYTES).slice();
            JournalFormat.Checkpoint cp = JournalFormat.decodeSlot(slot);
            generation[i] = cp == null ? -1 : cp.generation;
        }
        int newest = generation[1] > generation[0] ? 1 : 0;
        b[newest * JournalFormat.SLOT_BYTES + 30] ^= 1;
        Files.write(p, b);
    }

    /** Writes {@code length} bytes of {@code fill} at {@code position} of the segment, then journals them. */
    private static java.util.concurrent.CompletableFuture<Void> writeAndJournal(LogJournal j, LogSegment seg,
                                                                                long position, int length, char fill)
            throws IOException {
        BytesJournalRecord r = BytesJournalRecord.filled(seg, position, length, fill);
        seg.file.writeFully(r.bytes(), position);
        j.append(r);
        return r.done;
    }

    /**
     * A disk with no free block: while {@link #full}, making a file, growing one, and writing past
     * a file's end fail with ENOSPC; writes over a file's existing bytes go on (on ext4 or XFS they
     * need no new block).
     */
    static final class NoFreeBlocksIo extends ForwardingFileIo {
        volatile boolean full;
        volatile int refused;

        NoFreeBlocksIo(FileIo inner) {
            super(inner);
        }

        private void refuse(String what) throws IOException {
            refused++;
            throw new IOException("No space left on device (injected: " + what + ")");
        }

        @Override
        public LogFile open(Path path) throws IOException {
            if (full && !Files.exists(path)) {
                refuse("making " + path);
            }
            return super.open(path);
        }

        @Override
        protected LogFile wrap(LogFile f) {
            return new ForwardingLogFile(f) {
                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    if (full && position + src.remaining() > f.size()) {
                        refuse("writing past the end of " + f.path());
                    }
                    return f.write(src, position);
                }

                @Override
                public void setLength(long length) throws IOException {
                    if (full && length > f.size()) {
                        refuse("growing " + f.path());
                    }
                    f.setLength(length);
                }
            };
        }

        @Override
        public void atomicMove(Path from, Path to) throws IOException {
            if (full) {
                refuse("renaming " + from);   // a new directory entry may need a block
            }
            super.atomicMove(from, to);
        }
    }

    /**
     * The process dies in the middle of the next write to the checkpoint slots, once armed: only
     * the first {@link #tearAfter} bytes of it reach the file ({@code -1}: all of them, but the
     * fsync after it fails), and the write fails.
     */
    static final class TearingIo extends ForwardingFileIo {
        volatile int tearAfter = Integer.MIN_VALUE;
        volatile boolean tore;

        TearingIo(FileIo inner) {
            super(inner);
        }

        @Override
        protected LogFile wrap(LogFile f) {
            if (!f.path().getFileName().toString().equals(JournalFormat.CHECKPOINT_SLOTS)) {
                return f;
            }
            return new ForwardingLogFile(f) {
                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    int n = tearAfter;
                    if (n == Integer.MIN_VALUE || n < 0) {
                        return f.write(src, position);
                    }
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + Math.min(n, part.remaining()));
                    f.writeFully(part, position);
                    tore = true;
                    throw new IOException("the process died while writing " + f.path());
                }

                @Override
                public void force(boolean metadata) throws IOException {
                    if (tearAfter == -1) {
                        tore = true;
                        throw new IOException("the process died before fsyncing " + f.path());
                    }
                    f.force(metadata);
                }
            };
        }
    }

    @Test
    void theSlotsFileIsMadeWhenTheJournalIsWithTheDowngradeGuardAndNoTemporaryFileIsLeft() throws Exception {
        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        assertEquals(2L * JournalFormat.SLOT_BYTES, Files.size(journalDir().resolve(JournalFormat.CHECKPOINT_SLOTS)));
        assertArrayEquals(JournalFormat.DOWNGRADE_GUARD,
                Files.readAllBytes(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT)));
        for (String name : new String[] {JournalFormat.CHECKPOINT_SLOTS + ".tmp", JournalFormat.LEGACY_CHECKPOINT + ".tmp"}) {
            assertThrows(NoSuchFileException.class, () -> FileIo.DEFAULT.openExisting(journalDir().resolve(name)));
        }
    }

    /**
     * A Poyang from before the slots reads the file {@code checkpoint} and refuses the journal when
     * that file is not a whole legacy checkpoint; finding no such file, it would make the journal
     * anew over records not yet replayed. This reads the journal as that version's start did.
     */
    @Test
    void aVersionFromBeforeTheSlotsFindsTheGuardAndRefusesTheJournalInsteadOfMakingItAnew() throws Exception {
        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        Path legacy = journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT);
        assertTrue(Files.exists(legacy), "no checkpoint file: the older version would make the journal anew");
        ByteBuffer b = ByteBuffer.allocate(JournalFormat.LEGACY_CHECKPOINT_BYTES + 1);
        int n;
        try (LogFile f = FileIo.DEFAULT.openForRead(legacy)) {
            n = f.readFully(b, 0);
        }
        assertTrue(n != JournalFormat.LEGACY_CHECKPOINT_BYTES, "the guard has a legacy checkpoint's length");
        b.flip();
        b.limit(Math.min(b.limit(), JournalFormat.LEGACY_CHECKPOINT_BYTES));
        assertNull(JournalFormat.decodeLegacyCheckpoint(b), "the guard's first bytes decode as a legacy checkpoint");
    }

    @Test
    void aStartCutShortBeforeTheGuardWasWrittenWritesItAtTheNextStart() throws Exception {
        Path target = target();
        crashAfterOneRecord(target);
        Files.delete(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT));

        LogJournal.open("test", node, power, 3, FILE_BYTES).close();
        assertArrayEquals(JournalFormat.DOWNGRADE_GUARD,
                Files.readAllBytes(journalDir().resolve(JournalFormat.LEGACY_CHECKPOINT)));
        assertEquals('a', Files.readAllBytes(target)[50]);
    }

    @Test
    void theGuardWithoutTheSlotsFileIsReportedAsAMissingCheckpointNotAJournalToMakeAnew() throws Exception {
        Path target = target();
        crashAfterOneRecord(target);
        Files.delete(journalDir().resolve(JournalFormat.CHECKPOINT_SLOTS));
        byte[] journalFile = Files.readAllBytes(journalDir().resolve(JournalFormat.fileName(0)));

        LogCorruptedException e = assertThrows(LogCorruptedException.class,
                () -> LogJournal.open("test", node, power, 3, FILE_BYTES));
        assertTrue(e.getMessage().contains("checkpoint file is missing"), e.getMessage());
        assertArrayEquals(journalFile, Files.readAllBytes(journalDir().resolve(JournalFormat.fileName(0))),
                "the refused start changed the journal's records");
    }
}
