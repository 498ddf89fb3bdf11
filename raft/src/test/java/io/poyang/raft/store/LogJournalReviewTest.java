package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Review tests of the node's log journal: each shows a defect (fails without its fix).
 */
@ExtendWith(NoImpossibleStates.class)
class LogJournalReviewTest {

    private static final long FILE_BYTES = LogJournal.MIN_FILE_BYTES;

    @TempDir
    Path node;

    private final PowerLossFileIo power = new PowerLossFileIo();

    /**
     * A round whose records fill the current journal file and go on into the next: the writer
     * writes the old file's tail and its END, switches, writes the rest into the new file, and
     * fsyncs only the new file before reporting every record of the round durable. The old file's
     * tail is covered only once the checkpoint started at the switch finishes; a power loss before
     * that takes the tail back, replay stops there, and records reported durable are lost (both the
     * tail's and the new file's, which replay never reaches).
     */
    @Test
    void recordsWrittenBeforeAFileSwitchInTheSameRoundSurviveAPowerLoss() throws Exception {
        Path target = node.resolve("group-1").resolve("log").resolve("00000000000000000000");
        Files.createDirectories(target.getParent());
        Files.write(target, new byte[8 << 20]);
        Gate journal0Sync = new Gate(p -> p.getFileName().toString().equals("journal-0"), false);
        Gate targetSync = new Gate(p -> p.getFileName().equals(target.getFileName()), true);
        GatedIo io = new GatedIo(power, journal0Sync, targetSync);
        LogJournal j = LogJournal.open("test", node, io, 3, FILE_BYTES);
        j.checkpointOnlyAtFileSwitchesForTests();   // the one checkpoint here is the switch's
        LogSegment seg = new LogSegment(0, 8 << 20, io.open(target));
        try {
            // round 1: r1 (3 MiB) in journal-0; its fsync is held so r2 and r3 queue meanwhile
            journal0Sync.armed = true;
            CompletableFuture<Void> r1 = writeAndJournal(j, seg, 0, 3 << 20, 'a');
            assertTrue(journal0Sync.reached.await(30, TimeUnit.SECONDS));
            // round 2: r2 fits journal-0's rest, r3 does not: the writer switches files mid-round
            CompletableFuture<Void> r2 = writeAndJournal(j, seg, 3 << 20, 512 << 10, 'b');
            CompletableFuture<Void> r3 = writeAndJournal(j, seg, (3 << 20) + (512 << 10), 600 << 10, 'c');
            targetSync.armed = true;   // the checkpoint started at the switch does not finish before the power loss
            journal0Sync.release.countDown();
            r1.get(30, TimeUnit.SECONDS);
            r2.get(30, TimeUnit.SECONDS);
            r3.get(30, TimeUnit.SECONDS);   // all three reported durable
            assertTrue(targetSync.reached.await(30, TimeUnit.SECONDS), "the switch started a checkpoint");

            power.powerLoss();
            targetSync.release.countDown();   // the checkpoint's fsync then fails: the power is gone
            j.abandonForTests();
        } finally {
            journal0Sync.release.countDown();
            targetSync.release.countDown();
            seg.file.close();
        }

        LogJournal.open("test", node, power, 3, FILE_BYTES).close();   // the restart's replay
        byte[] got = Files.readAllBytes(target);
        assertEquals('a', got[100]);
        assertEquals('b', got[(3 << 20) + 100], "r2, reported durable, was lost: journal-0's tail was never fsynced");
        assertEquals('c', got[(3 << 20) + (512 << 10) + 100], "r3, reported durable, was lost");
    }

    /**
     * A log write larger than a journal file (one item may take up to a segment, 64 MiB by
     * default; the journal's files are 16 MiB by default) goes as several records: it is reported
     * durable, the other groups' writes go on, and a power loss after it loses none of it. Before,
     * it failed the whole journal for good, and every group's store with it.
     */
    @Test
    void aWriteLargerThanAJournalFileGoesInPartsAndSurvivesAPowerLoss() throws Exception {
        Path big = node.resolve("group-1").resolve("log").resolve("00000000000000000000");
        Path small = node.resolve("group-2").resolve("log").resolve("00000000000000000000");
        for (Path p : new Path[] {big, small}) {
            Files.createDirectories(p.getParent());
            Files.write(p, new byte[8 << 20]);
        }
        LogJournal j = LogJournal.open("test", node, power, 3, FILE_BYTES);
        j.checkpointOnlyAtFileSwitchesForTests();   // the tail of the large write stays unsynced but for the journal
        LogSegment bigSeg = new LogSegment(0, 8 << 20, power.open(big));
        LogSegment smallSeg = new LogSegment(0, 8 << 20, power.open(small));
        try {
            writeAndJournal(j, bigSeg, 100, 5 << 20, 'h').get(30, TimeUnit.SECONDS);
            writeAndJournal(j, smallSeg, 0, 100, 's').get(30, TimeUnit.SECONDS);
            j.abandonForTests();
            assertTrue(power.powerLoss() > 0);
        } finally {
            bigSeg.file.close();
            smallSeg.file.close();
        }
        LogJournal.open("test", node, power, 3, FILE_BYTES).close();   // the restart's replay
        byte[] got = Files.readAllBytes(big);
        assertEquals(0, got[99]);
        for (int at : new int[] {100, 2 << 20, (4 << 20) + 7, (5 << 20) + 99}) {
            assertEquals('h', got[at], "byte " + at + " of the large write");
        }
        assertEquals(0, got[(5 << 20) + 100]);
        assertEquals('s', Files.readAllBytes(small)[50]);
    }

    /**
     * A new journal shape (file count or size) deletes the old files, makes the new ones, then saves
     * the checkpoint. When making the new files fails (a full disk: the new shape is larger) or the
     * machine crashes meanwhile, the old checkpoint stays, naming files that are gone: every later
     * start refuses with "a log journal file is missing", although everything was replayed and
     * synced before the deletion.
     */
    @Test
    void aNewShapeCutShortLeavesAJournalTheNextStartCanOpen() throws Exception {
        Path target = node.resolve("group-1").resolve("log").resolve("00000000000000000000");
        Files.createDirectories(target.getParent());
        Files.write(target, new byte[1 << 20]);
        LogJournal j = LogJournal.open("test", node, power, 3, FILE_BYTES);
        LogSegment seg = new LogSegment(0, 1 << 20, power.open(target));
        writeAndJournal(j, seg, 0, 1000, 'a').get(30, TimeUnit.SECONDS);
        j.abandonForTests();
        seg.file.close();

        FileIo fullDisk = new GatedIo(power) {
            @Override
            public LogFile open(Path path) throws IOException {
                if (path.getFileName().toString().equals("journal-1")) {
                    throw new IOException("No space left on device");
                }
                return super.open(path);
            }
        };
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                () -> LogJournal.open("test", node, fullDisk, 4, 2 * FILE_BYTES));
        // space freed: the node starts again (with either shape)
        LogJournal.open("test", node, power, 4, 2 * FILE_BYTES).close();
        assertEquals('a', Files.readAllBytes(target)[10]);
    }

    /** Writes {@code length} bytes of {@code fill} at {@code position} of the segment, then journals them (as WriteTask). */
    private static CompletableFuture<Void> writeAndJournal(LogJournal j, LogSegment seg, long position, int length,
                                                           char fill) throws IOException {
        BytesJournalRecord r = BytesJournalRecord.filled(seg, position, length, fill);
        seg.file.writeFully(r.bytes(), position);
        j.append(r);
        return r.done;
    }

    /** Holds the first fsync of a matching file, once armed, until released; then syncs, or fails. */
    static final class Gate {
        final Predicate<Path> match;
        final boolean failAfter;
        volatile boolean armed;
        private boolean used;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        Gate(Predicate<Path> match, boolean failAfter) {
            this.match = match;
            this.failAfter = failAfter;
        }

        void beforeForce(Path p) throws IOException {
            if (!armed || !match.test(p)) {
                return;
            }
            synchronized (this) {
                if (used) {
                    return;
                }
                used = true;
            }
            reached.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException();
            }
            if (failAfter) {
                throw new IOException("the power is gone");
            }
        }
    }

    static class GatedIo extends ForwardingFileIo {
        private final Gate[] gates;

        GatedIo(FileIo inner, Gate... gates) {
            super(inner);
            this.gates = gates;
        }

        @Override
        protected LogFile wrap(LogFile f) {
            return new ForwardingLogFile(f) {
                @Override
                public void force(boolean metadata) throws IOException {
                    for (Gate g : gates) {
                        g.beforeForce(f.path());
                    }
                    f.force(metadata);
                }
            };
        }
    }
}
