package io.poyang.raft.server;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.raft.client.GroupStatus;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Leader transfer: under load no write is lost or applied twice; a transfer that fails leaves the leader leading. */
class TransferTest {

    @TempDir
    Path dir;

    @Test
    void leadershipMovesUnderLoadWithoutLosingOrDuplicatingAWrite() {
        // a hand-over waits one election timeout for the target's election, which fsyncs its new term
        // behind the load's log fsyncs: 1.5 s, so a slow disk moment does not fail a round
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.electionTimeoutMillis(1_500)).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(500);
            for (int round = 0; round < 6; round++) {
                int leader = c.waitForLeader(1);
                int target = leader % 3 + 1;
                RaftGroup g = c.group(leader, 1);
                int termBefore = g.term();
                RaftCluster.join(g.transferLeadership(target, 10_000));
                assertEquals(target, c.waitForLeader(1), "round " + round);
                assertTrue(c.group(target, 1).term() > termBefore);
                load.awaitAcknowledged(load.acknowledgedCount() + 300);
            }
            load.close();
            c.write(1, 7);
            long[] values = c.checkIdentical(1);
            Set<Long> all = new HashSet<>();
            for (long v : values) {
                assertTrue(all.add(v), "value " + v + " applied twice");
            }
            for (long v : load.acknowledged) {
                assertTrue(all.contains(v), "acknowledged value " + v + " was lost");
            }
            for (long v : load.notApplied) {
                assertFalse(all.contains(v), "value " + v + " was reported not applied (NOT_LEADER) but is");
            }
            assertEquals(0, load.unknown.get(), "writes with an unknown outcome in a healthy cluster");
        }
    }

    /**
     * Writes 1, cuts a follower off, writes 2 (which it misses, so a transfer to it waits for it to
     * catch up), and returns that follower.
     */
    private static int cutOffAFollowerBehind(RaftCluster c) {
        int leader = c.waitForLeader(1);
        c.write(1, 1);
        int target = leader % 3 + 1;
        c.faults.isolate(target);
        c.write(1, 2);
        return target;
    }

    @Test
    void aTransferToAnUnreachableTargetFailsAndTheLeaderGoesOn() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int target = cutOffAFollowerBehind(c);
            RaftGroup g = c.group(c.waitForLeader(1), 1);
            CompletableFuture<Void> transfer = g.transferLeadership(target, 1_000);
            // a write during the transfer waits, then goes in when the transfer gives up
            CompletableFuture<?> during = g.submit(0, TestStateMachine.body(3), 10_000);
            timedOut(transfer, "a transfer to an unreachable node succeeded");
            during.get(10, TimeUnit.SECONDS);
            assertTrue(g.isLeader(), "the leader stopped leading after a failed transfer");
            c.faults.heal();
            c.write(1, 4);
            long[] values = c.checkIdentical(1);
            assertEquals(4, values.length);
        }
    }

    @Test
    void aWriteHeldByATransferFailsAtItsOwnDeadline() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int target = cutOffAFollowerBehind(c);
            RaftGroup g = c.group(c.waitForLeader(1), 1);
            CompletableFuture<Void> transfer = g.transferLeadership(target, 8_000);
            long start = System.nanoTime();
            CompletableFuture<?> held = g.submit(0, TestStateMachine.body(3), 300);
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> held.get(10, TimeUnit.SECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getCause().getMessage().contains("leader transfer"), e.getCause().toString());
            assertTrue(tookMillis < 4_000, "a write of 300 ms was answered after " + tookMillis + " ms");
            assertFalse(transfer.isDone(), "the transfer is still waiting for the target");
            c.faults.heal();
            try {
                transfer.get(20, TimeUnit.SECONDS);
            } catch (ExecutionException ignored) {
                // it may or may not hand over once the target is back; either way the group goes on
            }
            c.write(1, 4);
            long[] values = c.checkIdentical(1);
            assertTrue(java.util.Arrays.stream(values).noneMatch(v -> v == 3), "the timed-out write was applied");
        }
    }

    @Test
    void aLeaderWhoseHandOverFailedAfterTimeoutNowServesNoLeaseReadInItsTerm() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = leaderUnderLeaseWithTargetCaughtUp(c);
            RaftGroup g = c.group(leader, 1);
            TestStateMachine sm = c.machine(leader, 1);
            int target = leader % 3 + 1;
            int third = 6 - leader - target;
            // the target hears the leader (TIMEOUT_NOW arrives) but nothing it sends gets through:
            // it stands, and cannot win
            c.faults.block(target, leader).block(target, third);
            int term = g.term();
            timedOut(g.transferLeadership(target, 5_000), "a transfer to a node that cannot be heard succeeded");
            assertTrue(g.isLeader(), "the leader stopped leading after a failed transfer");
            assertEquals(term, g.term());
            RaftCluster.waitFor("the target to stand (its TIMEOUT_NOW arrived)", () -> c.group(target, 1).term() > term);
            // its vote request may still be granted: no lease read, ReadIndex instead (node 3 answers it)
            long[] before = g.readCounters();
            for (int i = 0; i < 20; i++) {
                assertEquals(1, (int) RaftCluster.join(g.read(ReadKind.LEASE_READ, 5_000, sm::count)));
            }
            long[] after = g.readCounters();
            assertEquals(before[0], after[0], "a lease read was served after TIMEOUT_NOW went out");
            assertEquals(20, after[1] - before[1], "the reads were not confirmed by heartbeat rounds");
            c.faults.heal();
            c.write(1, 2);
            assertEquals(2, c.checkIdentical(1).length);
        }
    }

    @Test
    void aTimeoutNowThatCouldNotBeSentFailsTheTransferAtOnceAndLeavesTheLeaseAlone() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = leaderUnderLeaseWithTargetCaughtUp(c);
            RaftGroup g = c.group(leader, 1);
            TestStateMachine sm = c.machine(leader, 1);
            int target = leader % 3 + 1;
            // the target has every entry, but nothing the leader sends it leaves the leader: the send fails at once
            c.faults.block(leader, target);
            long start = System.nanoTime();
            PoyangTimeoutException notSent = timedOut(g.transferLeadership(target, 5_000),
                    "a transfer whose TIMEOUT_NOW could not be sent succeeded");
            assertTrue(notSent.getMessage().contains("could not be sent"), notSent.getMessage());
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < RaftCluster.ELECTION_TIMEOUT_MILLIS, "the transfer failed after " + tookMillis
                    + " ms, not at once (the election timeout is " + RaftCluster.ELECTION_TIMEOUT_MILLIS + " ms)");
            assertTrue(g.isLeader());
            // no node was told to stand, so the lease holds (the third node answers the heartbeats)
            long[] before = g.readCounters();
            for (int i = 0; i < 20; i++) {
                assertEquals(1, (int) RaftCluster.join(g.read(ReadKind.LEASE_READ, 5_000, sm::count)));
            }
            assertEquals(20, g.readCounters()[0] - before[0], "lease reads were refused after a TIMEOUT_NOW that never left");
            c.faults.heal();
            c.write(1, 2);
            assertEquals(2, c.checkIdentical(1).length);
        }
    }

    /**
     * Writes one value, waits until the leader of group 1 serves lease reads and knows that node
     * {@code leader % 3 + 1} (the transfer target) has every entry; returns the leader.
     */
    private static int leaderUnderLeaseWithTargetCaughtUp(RaftCluster c) {
        int leader = c.waitForLeader(1);
        c.write(1, 1);
        waitForALeaseRead(c.group(leader, 1), c.machine(leader, 1));
        waitUntilCaughtUp(c.group(leader, 1), leader % 3 + 1);
        return leader;
    }

    /** Waits for a transfer that must fail with a timeout, and returns that failure. */
    private static PoyangTimeoutException timedOut(CompletableFuture<Void> transfer, String ifItSucceeds) throws Exception {
        try {
            transfer.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof PoyangTimeoutException, "got " + e.getCause());
            return (PoyangTimeoutException) e.getCause();
        }
        throw new AssertionError(ifItSucceeds);
    }

    private static void waitForALeaseRead(RaftGroup g, TestStateMachine sm) {
        RaftCluster.waitFor("a lease read on the leader", () -> {
            long before = g.readCounters()[0];
            RaftCluster.join(g.read(ReadKind.LEASE_READ, 5_000, sm::count));
            return g.readCounters()[0] > before;
        });
    }

    private static void waitUntilCaughtUp(RaftGroup g, int target) {
        RaftCluster.waitFor("the leader to know node " + target + " has every entry", () -> {
            GroupStatus st = RaftCluster.join(g.detailedStatus());
            for (GroupStatus.Follower f : st.followers()) {
                if (f.nodeId() == target) {
                    return f.lag() == 0;
                }
            }
            return false;
        });
    }

    @Test
    void aTransferToTheLeaderItselfOrToANodeThatLeadsAlreadyIsDone() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            RaftCluster.join(c.group(leader, 1).transferLeadership(leader, 5_000));
            int target = leader % 3 + 1;
            RaftCluster.join(c.group(leader, 1).transferLeadership(target, 10_000));
            assertEquals(target, c.waitForLeader(1));
            // the retry reaches the old leader: it knows the target leads
            RaftCluster.waitFor("the old leader to learn who leads", () -> c.group(leader, 1).leaderId() == target);
            RaftCluster.join(c.group(leader, 1).transferLeadership(target, 5_000));
            c.write(1, 1);
            c.checkIdentical(1);
        }
    }

    @Test
    void aRequestForTheTargetOfATransferUnderWayWaitsForItsOutcome() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int target = cutOffAFollowerBehind(c);
            int leader = c.waitForLeader(1);
            int other = 6 - leader - target;
            RaftGroup g = c.group(leader, 1);
            CompletableFuture<Void> first = g.transferLeadership(target, 30_000);   // waits for the target
            CompletableFuture<Void> again = g.transferLeadership(target, 30_000);
            CompletableFuture<Integer> successor = g.transferLeadershipToSuccessor(30_000);
            CompletableFuture<Void> elsewhere = g.transferLeadership(other, 30_000);
            ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> elsewhere.get(10, TimeUnit.SECONDS));
            assertTrue(refused.getCause() instanceof IllegalStateException, refused.getCause().toString());
            assertFalse(first.isDone() || again.isDone() || successor.isDone(),
                    "a hand-over finished while its target is cut off");
            c.faults.heal();
            RaftCluster.join(first);
            RaftCluster.join(again);
            assertEquals(target, RaftCluster.join(successor).intValue(),
                    "the successor of a leader handing over is the target of that hand-over");
            assertEquals(target, c.waitForLeader(1));
        }
    }
}
