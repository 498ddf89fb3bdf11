package io.poyang.raft.server;

import io.poyang.net.BytesDecoder;
import io.poyang.raft.client.RaftClient;
import io.poyang.raft.client.RaftClientConfig;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import io.poyang.raft.core.ReadTask;
import io.poyang.raft.store.LogCounter;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.store.LogJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's data disk fills up (ENOSPC injected through the log store's {@code FileIo}) under a
 * write flood: what writers see, where leadership goes, and how the node comes back once space is
 * free again. The tests of the log's writes run with and without the nodes' log journal; with it,
 * the journal's writes are what fail (the group's segment took the write, the journal refuses it).
 */
class DiskFullTest {

    @TempDir
    Path dir;

    /** A started cluster of {@code nodes} with group 1; with {@code journal}, each node's log journal on (small). */
    private RaftCluster cluster(int nodes, boolean journal, Consumer<RaftConfig> tweak) {
        RaftCluster c = new RaftCluster(dir, nodes, new int[]{1}, tweak);
        if (journal) {
            c.serverTweak = b -> b.logJournal(true).logJournalFiles(3, LogJournal.MIN_FILE_BYTES);
        }
        return c.start();
    }

    /**
     * What the full disk refuses: without the journal, everything; with it, the journal's writes
     * only, so they, not the segment write before them, fail (with everything refused, a segment
     * write fails first and the journal would rarely be reached).
     */
    private static FullDiskFileIo.Op[] refusing(boolean journal) {
        return journal ? new FullDiskFileIo.Op[]{FullDiskFileIo.Op.JOURNAL_WRITE} : new FullDiskFileIo.Op[0];
    }

    /**
     * The group on {@code node} failed for the full disk; with the journal, by the journal's failure
     * (the fault hit the path under test), which the node reports for health checks as well: a
     * restart of the group would not help.
     */
    private static void assertFailedByTheDisk(boolean journal, RaftCluster c, int node) {
        Throwable failure = c.group(node, 1).failure();
        assertNotNull(failure);
        String m = failure.getMessage();
        assertTrue(m.contains(FullDiskFileIo.ENOSPC), m);
        if (journal) {
            assertTrue(m.contains(LogJournal.DIR_NAME) && m.contains("restart the node"), "not the journal's failure: " + m);
            String problem = c.server(node).ioProblem();
            assertTrue(problem != null && problem.contains("log journal failed") && problem.contains(FullDiskFileIo.ENOSPC),
                    String.valueOf(problem));
        } else {
            assertNull(c.server(node).ioProblem());
        }
    }

    /** Writes unique values through whichever node leads; records every outcome by its error. */
    static final class Flood implements AutoCloseable {
        private final RaftCluster cluster;
        private final Semaphore window = new Semaphore(200);
        private final Thread thread;
        private volatile boolean running = true;
        final Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        /** Writes answered with an error that promises they were not applied (NOT_LEADER, flow control, stopping). */
        final Set<Long> notApplied = ConcurrentHashMap.newKeySet();
        /** error class + the start of its message → count */
        final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
        final AtomicLong outstanding = new AtomicLong();

        Flood(RaftCluster cluster) {
            this.cluster = cluster;
            thread = new Thread(this::run, "disk-full-flood");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            long next = 1;
            while (running) {
                RaftGroup leader;
                try {
                    leader = cluster.slotAtLeader(window, 1);
                } catch (InterruptedException e) {
                    return;
                }
                if (leader == null) {
                    continue;
                }
                long value = next++;
                outstanding.incrementAndGet();
                leader.submit(0, TestStateMachine.body(value), 2_000).whenComplete((r, e) -> {
                    window.release();
                    outstanding.decrementAndGet();
                    if (e == null) {
                        acknowledged.add(value);
                    } else {
                        if (e instanceof io.poyang.raft.client.NotLeaderException
                                || e instanceof io.poyang.common.FlowControlException
                                || e instanceof io.poyang.common.StoppedException) {
                            notApplied.add(value);
                        }
                        String m = String.valueOf(e.getMessage());
                        String key = e.getClass().getSimpleName() + ": " + m.substring(0, Math.min(160, m.length()));
                        errors.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                    }
                });
            }
        }

        void awaitAcknowledged(int more) {
            int target = acknowledged.size() + more;
            RaftCluster.waitFor(target + " acknowledged writes", () -> acknowledged.size() >= target);
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            RaftCluster.waitFor("outstanding writes to be answered", () -> outstanding.get() == 0);
        }
    }

    static void checkAcknowledgedApplied(RaftCluster c, Flood flood) {
        long[] values = c.checkIdentical(1);
        Set<Long> applied = new java.util.HashSet<>();
        for (long v : values) {
            assertTrue(applied.add(v), "value " + v + " applied twice");
        }
        for (long v : flood.acknowledged) {
            assertTrue(applied.contains(v), "acknowledged value " + v + " is lost");
        }
        for (long v : flood.notApplied) {
            assertTrue(!applied.contains(v), "value " + v + " was reported not applied but is");
        }
    }

    @ParameterizedTest(name = "journal {0}")
    @ValueSource(booleans = {false, true})
    void aLeaderWhoseDiskFillsFailsItsGroupQuietlyLeadershipMovesAndItRecoversAfterARestart(boolean journal) {
        FullDiskFileIo io = new FullDiskFileIo();
        try (LogCounter logs = new LogCounter();
             RaftCluster c = cluster(3, journal, rc -> rc.logFileIo(io))) {
            int leader = c.waitForLeader(1);
            Flood flood = new Flood(c);
            flood.awaitAcknowledged(2_000);
            long start = System.nanoTime();
            io.fill(dir.resolve("node-" + leader), refusing(journal));
            RaftCluster.waitFor("the full leader's group to fail", () -> c.group(leader, 1).failure() != null);
            assertFailedByTheDisk(journal, c, leader);
            long failedAfterMs = (System.nanoTime() - start) / 1_000_000;
            RaftCluster.waitFor("another leader", () -> {
                int l = c.waitForLeader(1);
                return l != leader;
            });
            long movedAfterMs = (System.nanoTime() - start) / 1_000_000;
            flood.awaitAcknowledged(2_000);
            flood.close();
            System.out.println("DISKFULL leader " + leader + " failed after " + failedAfterMs + " ms, leadership moved after "
                    + movedAfterMs + " ms; failure: " + c.group(leader, 1).failure());
            System.out.println("DISKFULL errors seen by writers: " + flood.errors + "; warnings " + logs.byMessage);
            assertTrue(io.refused.get() > 0);
            // each of the ~200 writes in flight fails and is retried: that is a warning or two, not one
            // per write and attempt (which were 500-1,800 lines with stack traces)
            assertTrue(logs.warnings.get() < 50, "warnings logged: " + logs.byMessage);
            io.free();
            c.restartNode(leader);
            assertNull(c.group(leader, 1).failure());
            assertNull(c.server(leader).ioProblem());
            checkAcknowledgedApplied(c, flood);
        }
    }

    @ParameterizedTest(name = "journal {0}")
    @ValueSource(booleans = {false, true})
    void aFollowerWhoseDiskFillsFailsTheOthersGoOnAndItCatchesUpAfterARestart(boolean journal) {
        FullDiskFileIo io = new FullDiskFileIo();
        // a 3 s election timeout: the test asserts the leader keeps its place under a flood of fsynced
        // writes; a stall of this loaded machine must not depose it
        try (RaftCluster c = cluster(3, journal, rc -> rc.logFileIo(io).electionTimeoutMillis(3_000))) {
            int leader = c.waitForLeader(1);
            int follower = leader == 1 ? 2 : 1;
            Flood flood = new Flood(c);
            flood.awaitAcknowledged(2_000);
            io.fill(dir.resolve("node-" + follower), refusing(journal));
            RaftCluster.waitFor("the full follower's group to fail", () -> c.group(follower, 1).failure() != null);
            assertFailedByTheDisk(journal, c, follower);
            System.out.println("DISKFULL follower " + follower + " failure: " + c.group(follower, 1).failure()
                    + ", role " + c.group(follower, 1).role());
            flood.awaitAcknowledged(5_000);
            assertEquals(leader, c.waitForLeader(1), "the leader kept its place");
            flood.close();
            System.out.println("DISKFULL errors seen by writers: " + flood.errors);
            io.free();
            c.restartNode(follower);
            checkAcknowledgedApplied(c, flood);
        }
    }

    /**
     * A disk with no block left for a new file, while the groups' writes go into blocks they have:
     * the journal's appends (over its zero-filled files) and its checkpoints (in place, in their
     * slots) need none either, so no group fails. Before, each checkpoint wrote a new file
     * ({@code checkpoint.tmp}) and renamed it: the first one on the full disk failed the journal,
     * and with it every group of the node.
     */
    @Test
    void withTheJournalADiskWithNoBlockForANewFileFailsNoGroupThroughTheJournalsCheckpoints() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        RaftCluster cluster = new RaftCluster(dir, 1, new int[]{1, 2}, rc -> rc.logFileIo(io));
        cluster.serverTweak = b -> b.logJournal(true).logJournalFiles(3, LogJournal.MIN_FILE_BYTES);
        try (RaftCluster c = cluster.start()) {
            c.waitForLeader(1);
            c.waitForLeader(2);
            c.write(1, 1);
            c.write(2, 1);
            io.fill(dir.resolve("node-1"), FullDiskFileIo.Op.JOURNAL_GROWTH, FullDiskFileIo.Op.SEGMENT_CREATE,
                    FullDiskFileIo.Op.STATUS_WRITE, FullDiskFileIo.Op.MOVE);
            Path probe = dir.resolve("node-1").resolve(LogJournal.DIR_NAME).resolve("probe");
            org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> {
                try (io.poyang.raft.store.LogFile f = io.open(probe)) {
                    f.writeFully(java.nio.ByteBuffer.allocate(1), 0);
                }
            }, "the disk is not full");
            java.nio.file.Files.deleteIfExists(probe);
            long checkpoints0 = c.server(1).logJournalStats().checkpointCount();
            // 64 KiB entries (the test state machine refuses them, after the log and the journal took
            // them): 1.5 MiB of journal, three eighths of a 4 MiB file, each starting a checkpoint
            io.poyang.raft.store.ByteBody large = new io.poyang.raft.store.ByteBody(new byte[64 << 10]);
            for (int i = 0; i < 24; i++) {
                RaftGroup g = c.group(1, 1 + i % 2);
                try {
                    g.submit(0, large, 10_000).get(20, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException refusedByTheStateMachine) {
                    // applied as refused; a failure of the group shows below
                }
            }
            RaftCluster.waitFor("a checkpoint on the full disk",
                    () -> c.server(1).logJournalStats().checkpointCount() > checkpoints0
                            || c.server(1).ioProblem() != null);
            assertNull(c.server(1).ioProblem(), "the journal failed on the full disk");
            assertNull(c.group(1, 1).failure());
            assertNull(c.group(1, 2).failure());
            c.write(1, 2);
            c.write(2, 2);
            io.free();
            c.restartNode(1);
            assertEquals(2, c.checkIdentical(1).length);
            assertEquals(2, c.checkIdentical(2).length);
        }
    }

    @Test
    void aFollowerThatCannotSaveANewTermFailsAloneAndRestartsCleanly() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            int leader = c.waitForLeader(1);
            int full = leader == 1 ? 2 : 1;
            int other = 6 - leader - full;
            Flood flood = new Flood(c);
            flood.awaitAcknowledged(1_000);
            io.fill(dir.resolve("node-" + full), FullDiskFileIo.Op.STATUS_WRITE, FullDiskFileIo.Op.MOVE);
            // a new term: the full node must save it before it answers the new leader
            c.group(leader, 1).transferLeadership(other, 5_000).get(10, TimeUnit.SECONDS);
            RaftCluster.waitFor("the node that cannot save its term to fail", () -> c.group(full, 1).failure() != null);
            Throwable f = c.group(full, 1).failure();
            System.out.println("DISKFULL status-full node " + full + ": " + f + " / cause " + f.getCause());
            // the message itself says why, not only the chained cause
            assertTrue(f.getMessage().contains(FullDiskFileIo.ENOSPC) && f.getMessage().contains("status"), f.getMessage());
            assertEquals(other, c.waitForLeader(1));
            flood.awaitAcknowledged(1_000);
            flood.close();
            io.free();
            c.restartNode(full);
            assertNull(c.group(full, 1).failure());
            checkAcknowledgedApplied(c, flood);
        }
    }

    @Test
    void aLeaderThatCannotCreateALogSegmentFailsItsGroupAndLeadershipMoves() {
        FullDiskFileIo io = new FullDiskFileIo();
        try (LogCounter logs = new LogCounter();
             RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(io).segmentBytes(256 * 1024))
                     .start()) {
            int leader = c.waitForLeader(1);
            Flood flood = new Flood(c);
            flood.awaitAcknowledged(1_000);
            io.fill(dir.resolve("node-" + leader), FullDiskFileIo.Op.SEGMENT_CREATE);
            RaftCluster.waitFor("the leader's group to fail", () -> c.group(leader, 1).failure() != null);
            Throwable f = c.group(leader, 1).failure();
            assertTrue(f.getMessage().contains("No space left on device") && f.getMessage().contains("Free space"),
                    f.getMessage());
            RaftCluster.waitFor("another leader", () -> c.waitForLeader(1) != leader);
            flood.awaitAcknowledged(1_000);
            flood.close();
            System.out.println("DISKFULL segment-create: " + f.getMessage() + "; writers saw " + flood.errors
                    + "; warnings " + logs.byMessage);
            assertTrue(logs.warnings.get() < 200, "warnings logged: " + logs.byMessage);
            io.free();
            c.restartNode(leader);
            checkAcknowledgedApplied(c, flood);
        }
    }

    @Test
    void aLeaderWhoseIndexFilesCannotBeWrittenFailsAfterItsRetriesQuietlyAndLeadershipMoves() {
        FullDiskFileIo io = new FullDiskFileIo();
        try (LogCounter logs = new LogCounter();
             RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            int leader = c.waitForLeader(1);
            Flood flood = new Flood(c);
            flood.awaitAcknowledged(1_000);
            io.fill(dir.resolve("node-" + leader), FullDiskFileIo.Op.INDEX_WRITE);
            RaftCluster.waitFor("the leader's group to fail", () -> c.group(leader, 1).failure() != null);
            String f = c.group(leader, 1).failure().getMessage();
            assertTrue(f.contains("index entries") && f.contains(FullDiskFileIo.ENOSPC) && f.contains("idx"), f);
            RaftCluster.waitFor("another leader", () -> c.waitForLeader(1) != leader);
            flood.awaitAcknowledged(1_000);
            flood.close();
            System.out.println("DISKFULL index-full: " + f + "; warnings " + logs.byMessage);
            // one line per retry (5), not one per append batch
            assertTrue(logs.warnings.get() < 100, "warnings logged: " + logs.byMessage);
            io.free();
            c.restartNode(leader);
            checkAcknowledgedApplied(c, flood);
        }
    }

    @Test
    void aSnapshotFailingHalfwayKeepsTheOldOneAndTheNodeRestartsFromIt() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            c.waitForLeader(1);
            for (int i = 0; i < 100; i++) {
                c.write(1, i);
            }
            assertNotNull(c.group(1, 1).takeSnapshot().get(10, TimeUnit.SECONDS));
            for (int i = 100; i < 200; i++) {
                c.write(1, i);
            }
            Path snapDir = dir.resolve("node-1").resolve("group-1").resolve("snapshot");
            c.machine(1, 1).failSnapshotWrites = new IOException(FullDiskFileIo.ENOSPC);
            for (int attempt = 0; attempt < 3; attempt++) {
                c.write(1, 1000 + attempt);
                java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.ExecutionException.class,
                        () -> c.group(1, 1).takeSnapshot().get(10, TimeUnit.SECONDS));
                assertTrue(String.valueOf(e.getCause()).contains(FullDiskFileIo.ENOSPC), String.valueOf(e.getCause()));
            }
            try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(snapDir)) {
                java.util.List<String> names = files.map(p -> p.getFileName().toString()).sorted()
                        .collect(java.util.stream.Collectors.toList());
                System.out.println("DISKFULL snapshot dir after 3 failed snapshots: " + names);
                assertEquals(2, names.size(), "only the first snapshot's data and meta files remain: " + names);
            }
            assertNull(c.group(1, 1).failure());
            c.write(1, 5000);
            c.restartNode(1);
            c.waitForLeader(1);
            long[] values = c.checkIdentical(1);
            assertEquals(204, values.length);
            assertEquals(5000, values[values.length - 1]);
        }
    }

    @Test
    void writesInTheLogOfASingleNodeWhoseDiskFillsAreAnsweredOutcomeUnknownAtOnceOverTheNetwork() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            c.waitForLeader(1);
            RaftClientConfig cfg = new RaftClientConfig();
            cfg.node(1, "127.0.0.1:" + c.server(1).servicePort());
            RaftClient client = new RaftClient(cfg);
            client.start();
            try {
                client.waitForConnected(5_000);
                Semaphore window = new Semaphore(200);
                AtomicLong outstanding = new AtomicLong();
                AtomicLong filledAt = new AtomicLong(Long.MAX_VALUE);
                AtomicLong inLogAnswers = new AtomicLong();
                AtomicLong slowestInLogAnswerMs = new AtomicLong();
                Set<String> unclear = ConcurrentHashMap.newKeySet();
                long v = 1;
                while (c.group(1, 1).failure() == null) {
                    if (v == 3_000) {
                        filledAt.set(System.nanoTime());
                        io.fill(dir.resolve("node-1"));
                    }
                    assertTrue(window.tryAcquire(20, TimeUnit.SECONDS), "writes hang");
                    outstanding.incrementAndGet();
                    client.write(1, 0, TestStateMachine.body(v++), BytesDecoder.FACTORY, 10_000)
                            .whenComplete((r, e) -> {
                                if (e instanceof io.poyang.raft.client.RaftOutcomeUnknownException) {
                                    // the write was in the log when the group failed
                                    inLogAnswers.incrementAndGet();
                                    long ms = (System.nanoTime() - filledAt.get()) / 1_000_000;
                                    slowestInLogAnswerMs.accumulateAndGet(ms, Math::max);
                                    if (!e.getMessage().contains(FullDiskFileIo.ENOSPC)) {
                                        unclear.add(e.getMessage());   // asserted on the test thread below
                                    }
                                }
                                outstanding.decrementAndGet();
                                window.release();
                            });
                }
                RaftCluster.waitFor("every write to be answered", () -> outstanding.get() == 0);
                System.out.println("DISKFULL network single node: " + inLogAnswers.get() + " writes in the log answered"
                        + " outcome-unknown, the slowest " + slowestInLogAnswerMs.get() + " ms after the disk filled");
                assertTrue(inLogAnswers.get() > 0, "no write was in the log when the group failed");
                assertTrue(unclear.isEmpty(), "answers that do not say the disk failed: " + unclear);
                // the store gives up ~310 ms after the fill (5 retries from 10 ms); the deadline is 10 s
                assertTrue(slowestInLogAnswerMs.get() < 6_000, "writes in the log waited "
                        + slowestInLogAnswerMs.get() + " ms after the disk filled");
                // a leader read asked of the failed node afterwards is refused with why and what to do
                java.util.concurrent.CompletableFuture<Throwable> refused = new java.util.concurrent.CompletableFuture<>();
                c.group(1, 1).read(ReadKind.LEASE_READ, System.nanoTime() + 5_000_000_000L,
                        new ReadTask() {
                            @Override
                            public void run() {
                                refused.complete(null);
                            }

                            @Override
                            public void fail(Throwable error) {
                                refused.complete(error);
                            }
                        });
                Throwable why = refused.get(10, TimeUnit.SECONDS);
                assertTrue(why != null && why.getMessage().contains("has failed and needs a restart")
                        && why.getMessage().contains(FullDiskFileIo.ENOSPC), String.valueOf(why));
            } finally {
                client.stop();
            }
        }
    }

    @ParameterizedTest(name = "journal {0}")
    @ValueSource(booleans = {false, true})
    void aQuietSingleNodeLeaderFailsAsSoonAsItsStoreFailsAndAnswersTheWriteInItsLog(boolean journal) throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (RaftCluster c = cluster(1, journal, rc -> rc.logFileIo(io))) {
            c.waitForLeader(1);
            c.write(1, 1);
            io.fill(dir.resolve("node-1"), refusing(journal));
            long start = System.nanoTime();
            // one write and no more: nothing else would make the leader append again
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> c.group(1, 1).submit(0, TestStateMachine.body(2), 10_000).get(20, TimeUnit.SECONDS));
            long answeredAfterMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getCause() instanceof io.poyang.raft.client.RaftOutcomeUnknownException
                    && e.getCause().getMessage().contains(FullDiskFileIo.ENOSPC), String.valueOf(e.getCause()));
            // the store gives up after ~310 ms of retries; before, the write waited for its 10 s deadline
            assertTrue(answeredAfterMs < 6_000, "the write in the log was answered " + answeredAfterMs
                    + " ms after the disk filled: " + e.getCause());
            assertFailedByTheDisk(journal, c, 1);
            assertNotEquals(RaftRole.LEADER, c.group(1, 1).role(), "a failed group does not lead");
            io.free();
            c.restartNode(1);
            c.write(1, 3);
            long[] values = c.checkIdentical(1);
            assertEquals(1, values[0]);
            assertEquals(3, values[values.length - 1]);
        }
    }
}
