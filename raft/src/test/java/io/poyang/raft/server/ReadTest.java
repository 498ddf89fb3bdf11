package io.poyang.raft.server;

import io.poyang.common.ManualTimeSource;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import io.poyang.raft.core.ReadTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Lease reads, ReadIndex reads and follower reads (RaftGroup.read). */
class ReadTest {

    @TempDir
    Path dir;

    /** A read of all values on {@code node}; retried while leadership moves (as a client would). */
    private static long[] read(RaftCluster c, int node, ReadKind kind) {
        TestStateMachine sm = c.machine(node, 1);
        for (int attempt = 0; ; attempt++) {
            try {
                return c.group(node, 1).read(kind, 5_000, sm::values).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof NotLeaderException) || attempt == 50) {
                    throw new AssertionError(kind + " on node " + node + " failed", e.getCause());
                }
                RaftCluster.waitFor("a leader", () -> c.group(node, 1).leaderId() != 0);
            } catch (InterruptedException | TimeoutException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static Set<Long> asSet(long[] values) {
        Set<Long> s = new HashSet<>();
        for (long v : values) {
            s.add(v);
        }
        return s;
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError(e);
        }
        return null;
    }

    @Test
    void everyKindSeesEveryAcknowledgedWriteAndBatchesShareRounds() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            for (long v = 1; v <= 50; v++) {
                c.write(1, v);
                leader = c.waitForLeader(1);
                for (ReadKind kind : new ReadKind[]{ReadKind.LEASE_READ, ReadKind.READ_INDEX}) {
                    assertTrue(asSet(read(c, leader, kind)).contains(v), kind + " on the leader misses " + v);
                }
                for (int n : c.runningMembers(1)) {
                    assertTrue(asSet(read(c, n, ReadKind.FOLLOWER_READ)).contains(v), "a follower read on node " + n
                            + " misses " + v);
                }
            }
            long[] before = c.group(leader, 1).readCounters();
            assertTrue(before[0] > 0, "no read was served under the lease");
            assertTrue(before[2] > 0, "no ReadIndex round was run");
            assertTrue(before[5] > 0, "the leader answered no read-index request of a follower");

            // 2,000 ReadIndex reads queued at once share few heartbeat rounds
            RaftGroup g = c.group(leader, 1);
            List<CompletableFuture<Integer>> reads = new ArrayList<>();
            TestStateMachine sm = c.machine(leader, 1);
            for (int i = 0; i < 2_000; i++) {
                reads.add(g.read(ReadKind.READ_INDEX, 10_000, sm::count));
            }
            for (CompletableFuture<Integer> f : reads) {
                assertEquals(50, (int) RaftCluster.join(f));
            }
            long[] after = g.readCounters();
            assertEquals(2_000, after[1] - before[1]);
            long rounds = after[2] - before[2];
            assertTrue(rounds >= 1 && rounds < 500, "2,000 reads took " + rounds + " heartbeat rounds");

            // a follower's reads queued at once share few requests to the leader
            int follower = leader == 1 ? 2 : 1;
            RaftGroup fg = c.group(follower, 1);
            TestStateMachine fsm = c.machine(follower, 1);
            long fetchesBefore = fg.readCounters()[4];
            List<CompletableFuture<Integer>> freads = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                freads.add(fg.read(ReadKind.FOLLOWER_READ, 10_000, fsm::count));
            }
            for (CompletableFuture<Integer> f : freads) {
                assertEquals(50, (int) RaftCluster.join(f));
            }
            long fetches = fg.readCounters()[4] - fetchesBefore;
            assertTrue(fetches >= 1 && fetches < 500, "2,000 follower reads took " + fetches + " read-index requests");

            // lease and ReadIndex reads are refused at once on a follower
            assertInstanceOf(NotLeaderException.class, failureOf(fg.read(ReadKind.LEASE_READ, 5_000, fsm::count)));
            NotLeaderException nl = (NotLeaderException) failureOf(fg.read(ReadKind.READ_INDEX, 5_000, fsm::count));
            assertEquals(leader, nl.leaderId());
            c.checkIdentical(1);
        }
    }

    @Test
    void followerReadsSeeEveryWriteAcknowledgedBeforeTheReadBegan() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 20, 1_000_000);
            load.awaitAcknowledged(200);
            int checked = 0;
            // per node, the acknowledged values a read there has already shown (state only grows, and
            // the final comparison catches any value that disappears)
            java.util.Map<Integer, Set<Long>> shown = new java.util.HashMap<>();
            for (int round = 0; round < 100; round++) {
                int leader = c.waitForLeader(1);
                for (int n : c.runningMembers(1)) {
                    Set<Long> done = shown.computeIfAbsent(n, k -> new HashSet<>());
                    List<Long> ackedBefore = new ArrayList<>();
                    for (long v : load.acknowledged) {
                        if (!done.contains(v)) {
                            ackedBefore.add(v);
                        }
                    }
                    ReadKind kind = n == leader ? (round % 2 == 0 ? ReadKind.LEASE_READ : ReadKind.READ_INDEX)
                            : ReadKind.FOLLOWER_READ;
                    long[] seen = read(c, n, kind).clone();
                    java.util.Arrays.sort(seen);
                    for (long v : ackedBefore) {
                        if (java.util.Arrays.binarySearch(seen, v) < 0) {
                            fail(kind + " on node " + n + " (leader " + leader + ") misses value " + v
                                    + ", acknowledged before the read began");
                        }
                        done.add(v);
                    }
                    checked += ackedBefore.size();
                }
            }
            load.close();
            assertTrue(checked > 0);
            long[] values = c.checkIdentical(1);
            Set<Long> all = asSet(values);
            assertEquals(values.length, all.size(), "a value was applied twice");
            for (long v : load.acknowledged) {
                assertTrue(all.contains(v), "acknowledged value " + v + " was lost");
            }
        }
    }

    @Test
    void aStaleLeaderCannotServeALeaseReadAfterItsLeaseNorAReadIndexRead() {
        ManualTimeSource leaseClock = new ManualTimeSource();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.leaseClock(leaseClock)).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            leader = c.waitForLeader(1);
            RaftGroup g = c.group(leader, 1);
            TestStateMachine sm = c.machine(leader, 1);
            // under the lease: served without a heartbeat round
            long[] before = g.readCounters();
            assertEquals(1, (int) RaftCluster.join(g.read(ReadKind.LEASE_READ, 5_000, sm::count)));
            long[] after = g.readCounters();
            assertEquals(1, after[0] - before[0], "the lease read was not served under the lease");
            assertEquals(0, after[2] - before[2]);

            c.faults.isolate(leader);
            // a ReadIndex read needs a majority to confirm the leadership: never served
            Throwable e = failureOf(g.read(ReadKind.READ_INDEX, 300, sm::count));
            assertTrue(e instanceof PoyangTimeoutException || e instanceof NotLeaderException, "got " + e);

            // the lease ends (controlled clock): a lease read falls back to ReadIndex and is not served either
            leaseClock.advance(500, TimeUnit.MILLISECONDS);
            long leaseReadsBefore = g.readCounters()[0];
            e = failureOf(g.read(ReadKind.LEASE_READ, 300, sm::count));
            assertTrue(e instanceof PoyangTimeoutException || e instanceof NotLeaderException, "got " + e);
            assertEquals(leaseReadsBefore, g.readCounters()[0], "a lease read was served after the lease ended");

            // the majority elects a leader and takes a write the stale leader never sees
            int stale = leader;
            RaftCluster.waitFor("a new leader", () -> {
                for (int n : c.runningMembers(1)) {
                    if (n != stale && c.group(n, 1).isLeader()) {
                        return true;
                    }
                }
                return false;
            });
            RaftCluster.waitFor("the stale leader to step down", () -> !g.isLeader());
            assertInstanceOf(NotLeaderException.class, failureOf(g.read(ReadKind.LEASE_READ, 1_000, sm::count)));
            c.faults.heal();
            c.write(1, 2);
            c.checkIdentical(1);
        }
    }

    @Test
    void readsAreAnsweredWhileTheLeadersOnlyReachableVoterReceivesASnapshot() throws Exception {
        // the follower writes each chunk slowly (a slow disk): the transfer lasts seconds
        io.poyang.raft.store.FaultyFileIo fileIo = new io.poyang.raft.store.FaultyFileIo();
        fileIo.hook = new io.poyang.raft.store.FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) {
                if (file.getFileName().toString().equals("receiving.tmp")) {
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }
        };
        // a longer election timeout keeps the leader through its snapshot and the transfer: raft's tests
        // run two classes at a time, and on two busy cores a 500 ms check-quorum could depose it
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(fileIo).segmentBytes(64 * 1024)
                .snapshotChunkBytes(2 * 1024).electionTimeoutMillis(2_000)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            int third = 6 - leader - follower;
            long missed = SnapshotCatchUpTest.cutOffPastTheLeadersLog(c, leader, follower, leader);
            RaftGroup g = c.group(leader, 1);
            // the follower comes back and the third node goes: the leader's majority is the follower,
            // which needs the snapshot and gets no heartbeat until it has it
            c.faults.heal();
            c.faults.isolate(third);
            Path partial = dir.resolve("node-" + follower).resolve("group-1").resolve("snapshot").resolve("receiving.tmp");
            RaftCluster.waitFor("the transfer to start", () -> Files.exists(partial));
            TestStateMachine sm = c.machine(leader, 1);
            long[] before = g.readCounters();
            int seen = RaftCluster.join(g.read(ReadKind.READ_INDEX, 2_000, sm::count));
            assertTrue(seen >= 4_001, "the read saw " + seen + " values; 4,001 were acknowledged before it");
            RaftCluster.waitFor("a lease read served under the lease", () -> {
                long leaseReads = g.readCounters()[0];
                RaftCluster.join(g.read(ReadKind.LEASE_READ, 2_000, sm::count));
                return g.readCounters()[0] > leaseReads;
            });
            assertTrue(g.readCounters()[1] > before[1], "no read was confirmed by a round");
            assertTrue(Files.exists(partial) && c.group(follower, 1).firstLogIndex() <= missed,
                    "the reads were answered during the transfer, not after it");
            assertTrue(g.isLeader());
            RaftGroup fg = c.group(follower, 1);
            RaftCluster.waitFor("the follower to install the snapshot", () -> fg.firstLogIndex() > missed);
            c.faults.heal();
            c.write(1, 2_000_000);
            c.checkIdentical(1);
        }
    }

    @Test
    void aReadTaskRunsOnTheDispatcherOrFailsOnce() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 7);
            RaftGroup g = c.group(leader, 1);
            // one voter: the lease is always valid while it leads
            CompletableFuture<String> thread = new CompletableFuture<>();
            g.read(ReadKind.LEASE_READ, System.nanoTime() + TimeUnit.SECONDS.toNanos(5), new ReadTask() {
                @Override
                public void run() {
                    thread.complete(Thread.currentThread().getName());
                }

                @Override
                public void fail(Throwable error) {
                    thread.completeExceptionally(error);
                }
            });
            assertTrue(thread.get(5, TimeUnit.SECONDS).contains("dispatcher"), "run() ran on " + thread.get());
            // a deadline already passed: fail(timeout), never run()
            CompletableFuture<Object> expired = new CompletableFuture<>();
            g.read(ReadKind.READ_INDEX, System.nanoTime() - 1, new ReadTask() {
                @Override
                public void run() {
                    expired.complete("ran");
                }

                @Override
                public void fail(Throwable error) {
                    expired.complete(error);
                }
            });
            assertInstanceOf(PoyangTimeoutException.class, expired.get(5, TimeUnit.SECONDS));
            assertFalse(g.readCounters()[0] == 0, "no lease read counted");
        }
    }

    @Test
    void readsArrivingAsANewLeadersFirstEntryCommitsAreAllAnswered() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int target = leader % 3 + 1;
            int third = 6 - leader - target;
            RaftGroup tg = c.group(target, 1);
            java.util.Queue<CompletableFuture<Integer>> reads = new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicBoolean reading = new java.util.concurrent.atomic.AtomicBoolean(true);
            // reads pour in at the target from the moment it leads, before and as its first entry commits
            Thread reader = new Thread(() -> {
                while (reading.get()) {
                    if (tg.isLeader()) {
                        reads.add(tg.read(ReadKind.LEASE_READ, 5_000, () -> 1));
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                }
            }, "reader");
            reader.start();
            try {
                // what the new leader sends is slow, so its first entry takes a while to commit
                c.faults.delay(target, leader, 150).delay(target, third, 150);
                RaftCluster.join(c.group(leader, 1).transferLeadership(target, 10_000));
                c.write(1, 2);   // commits after the new leader's own first entry
                int answeredBefore = reads.size();
                RaftCluster.waitFor("more reads after the commit", () -> reads.size() > answeredBefore + 100);
            } finally {
                reading.set(false);
                reader.join();
                c.faults.heal();
            }
            assertTrue(reads.size() > 100, "reads issued: " + reads.size());
            int ok = 0;
            for (CompletableFuture<Integer> r : reads) {
                try {
                    r.get(10, TimeUnit.SECONDS);
                    ok++;
                } catch (ExecutionException e) {
                    // failing is allowed (e.g. a timeout); being dropped is not
                } catch (TimeoutException e) {
                    fail("a read at the new leader was never answered (" + ok + " of " + reads.size() + " were)");
                }
            }
            assertTrue(ok > 0);
        }
    }

    @Test
    void aFollowerReadWaitingWhenItsGroupFailsFailsAtOnceNotAtItsDeadline() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int follower = leader % 3 + 1;
            RaftCluster.waitFor("the follower to apply 1", () -> c.machine(follower, 1).values().length == 1);
            // what the leader sends the follower (the next entry, and the answer to its read) comes late
            c.faults.delay(leader, follower, 1_000);
            c.machine(follower, 1).failNextApply = true;
            c.write(1, 2);   // committed by the leader and the third node
            long start = System.nanoTime();
            CompletableFuture<long[]> read = c.group(follower, 1).read(ReadKind.FOLLOWER_READ, 60_000,
                    c.machine(follower, 1)::values);
            // the follower applies 2, fails, and the read still waiting on it fails with it
            Throwable t = failureOf(read);
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertInstanceOf(io.poyang.common.StoppedException.class, t, String.valueOf(t));
            assertTrue(t.getMessage().contains("failed"), t.getMessage());
            assertTrue(tookMillis < 30_000, "failed after " + tookMillis + " ms, not at the read's 60 s deadline");
            c.faults.heal();
            // restarted, the node applies the entry it failed on and agrees with the others again
            c.restartNode(follower);
            c.write(1, 3);
            assertEquals(3, c.checkIdentical(1).length);
        }
    }
}
