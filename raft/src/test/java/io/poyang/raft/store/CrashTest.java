package io.poyang.raft.store;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kill -9 at random moments: a child JVM ({@link CrashWriter}) appends and prints each index the
 * store reports persisted; the test kills it with SIGKILL, reopens the store and checks that every
 * reported index is there with identical bytes. 20 rounds by default; more with
 * {@code -Dpoyang.crashRounds=N}.
 */
class CrashTest {

    @TempDir
    Path dir;

    static byte[] bodyFor(long index, int round) {
        return StoreHarness.bodyFor(index, round, 16);
    }

    /** Which round wrote index i: the last round whose start index is below i. */
    private static final class RoundStart {
        final long afterIndex;
        final int round;

        RoundStart(long afterIndex, int round) {
            this.afterIndex = afterIndex;
            this.round = round;
        }
    }

    private static int roundOf(List<RoundStart> starts, long index) {
        int r = -1;
        for (RoundStart s : starts) {
            if (s.afterIndex < index) {
                r = s.round;
            }
        }
        return r;
    }

    @Test
    void everyReportedIndexSurvivesKillMinus9() throws Exception {
        killRounds(0);
    }

    /**
     * The same with segment recycling on: the deletions free segment files that become the next
     * spares, so a kill also lands between keeping a file and renaming it, between the rename and
     * the zeroing of its first header, and while items are appended over old ones.
     */
    @Test
    void everyReportedIndexSurvivesKillMinus9WithRecycledSegments() throws Exception {
        killRounds(2);
    }

    /**
     * The same through the node's log journal: a kill lands in the journal's rounds, its file
     * changes and its checkpoints, and each verification starts with the journal's replay (here the
     * page cache kept the segments' writes: replay writes them again, and must not spoil them).
     */
    @Test
    void everyReportedIndexSurvivesKillMinus9WithTheNodeJournal() throws Exception {
        killRounds(0, true);
    }

    private void killRounds(int recycledSegments) throws Exception {
        killRounds(recycledSegments, false);
    }

    private void killRounds(int recycledSegments, boolean journalled) throws Exception {
        ImpossibleStates.reset();
        int rounds = Integer.getInteger("poyang.crashRounds", 20);
        Random random = new Random(Long.getLong("poyang.crashSeed", System.nanoTime()));
        Path storeDir = dir.resolve("store");
        Path childErr = dir.resolve("child-stderr.txt");
        String javaBin = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<RoundStart> starts = new ArrayList<>();
        long totalReported = 0;
        AtomicLong recycled = new AtomicLong();
        long verified = 0;
        for (int round = 1; round <= rounds; round++) {
            ProcessBuilder pb = new ProcessBuilder(javaBin, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), CrashWriter.class.getName(), storeDir.toString(),
                    Integer.toString(round), Integer.toString(recycledSegments), journalled ? "journal" : "-");
            pb.redirectError(ProcessBuilder.Redirect.appendTo(childErr.toFile()));
            Process child = pb.start();
            AtomicLong start = new AtomicLong(-1);
            AtomicLong maxReported = new AtomicLong(-1);
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        if (line.startsWith("START ")) {
                            start.set(Long.parseLong(line.split(" ")[1]));
                        } else if (line.startsWith("P ")) {
                            long p = Long.parseLong(line.substring(2));
                            maxReported.accumulateAndGet(p, Math::max);
                        } else if (line.startsWith("RECYCLED ")) {
                            recycled.incrementAndGet();
                        }
                    }
                } catch (IOException e) {
                    // the child died; what was read is what counts
                }
            }, "crash-child-reader");
            reader.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (maxReported.get() <= start.get() || start.get() < 0) {
                if (!child.isAlive() || System.nanoTime() > deadline) {
                    child.destroyForcibly();
                    throw new AssertionError("round " + round + ": the writer reported nothing; its stderr:\n"
                            + tail(childErr));
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            long killAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(600));
            while (System.nanoTime() < killAtNanos) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);   // the random moment of the kill
            }
            child.destroyForcibly();   // SIGKILL
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            reader.join(TimeUnit.SECONDS.toMillis(30));
            starts.add(new RoundStart(start.get(), round));
            long reported = maxReported.get();
            totalReported += reported - start.get();

            LogJournal journal = journalled
                    ? LogJournal.open("verify", dir, FileIo.DEFAULT, 3, LogJournal.MIN_FILE_BYTES) : null;
            try (StoreHarness h = new StoreHarness(storeDir, c -> c.segmentBytes(1 << 20).indexEntriesPerFile(4096)
                    .journal(journal))) {
                RecoveredState s = h.open();
                assertTrue(s.getLastIndex() >= reported, "round " + round + ": reported " + reported
                        + " persisted but the log ends at " + s.getLastIndex());
                long first = s.getFirstIndex();
                // Every index reported in this round, and a sample of older ones.
                long from = Math.max(first, start.get() + 1);
                verified += check(h, from, reported, starts);
                for (int k = 0; k < 50 && reported > first; k++) {
                    long i = first + (long) (random.nextDouble() * (reported - first));
                    verified += check(h, i, i, starts);
                }
            } finally {
                if (journal != null) {
                    journal.close();
                }
            }
        }
        assertEquals(0, ImpossibleStates.count());
        System.out.println("CrashTest (recycledSegments " + recycledSegments + (journalled ? ", node journal" : "") + "): " + rounds + " kills, " + recycled.get()
                + " segment files recycled, " + totalReported + " indexes reported persisted, "
                + verified + " checked byte for byte");
        assertTrue(totalReported > 0);
        if (recycledSegments > 0) {
            assertTrue(recycled.get() > 0, "no segment file was recycled in " + rounds + " rounds");
        } else {
            assertEquals(0, recycled.get(), "a segment file was recycled with recycledSegments 0");
        }
    }

    private static long check(StoreHarness h, long from, long to, List<RoundStart> starts) {
        if (from > to) {
            return 0;
        }
        List<LogItem> got = h.loadAll(from, to);
        for (LogItem it : got) {
            int round = roundOf(starts, it.getIndex());
            assertEquals(round, it.getBizType(), "round of index " + it.getIndex());
            assertArrayEquals(bodyFor(it.getIndex(), round), StoreHarness.bodyOf(it), "bytes of index " + it.getIndex());
        }
        return got.size();
    }

    private static String tail(Path p) {
        try {
            List<String> lines = Files.readAllLines(p);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no stderr: " + e + ")";
        }
    }
}
