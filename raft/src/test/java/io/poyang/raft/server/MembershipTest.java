package io.poyang.raft.server;

import io.poyang.common.PoyangTimeoutException;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReadKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Membership changes by joint consensus, observers, and groups added and removed on running nodes. */
class MembershipTest {

    @TempDir
    Path dir;

    private static final int[] NONE = new int[0];

    private static Members prepare(RaftCluster c, int[] voters, int[] observers) {
        return c.onLeader(1, g -> g.prepareMembers(voters, observers, 20_000));
    }

    private static Members commit(RaftCluster c, int[] voters, int[] observers) {
        return c.onLeader(1, g -> g.commitMembers(voters, observers, 20_000));
    }

    private static void waitForConfig(RaftCluster c, Members expected) {
        RaftCluster.waitFor("every member of group 1 to have " + expected, () -> {
            for (int n : c.runningMembers(1)) {
                // a node the change left out is not told the end of it
                if (expected.contains(n) && !c.group(n, 1).members().equals(expected)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** Ends a test: no acknowledged write lost, none applied twice, all members identical. */
    private static void checkNothingLost(RaftCluster c, LoadGenerator load) {
        c.write(1, 7);
        load.checkApplied(c.checkIdentical(1), "");
    }

    @Test
    void threeToFiveToThreeWhileWritesGoOn() {
        try (RaftCluster c = new RaftCluster(dir, 5, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            load.awaitAcknowledged(500);
            // nodes 4 and 5 host the group, knowing the current voters; they learn the rest from the log
            c.addGroup(4, 1, new Members(1, 2, 3));
            c.addGroup(5, 1, new Members(1, 2, 3));
            Members joint = prepare(c, new int[]{1, 2, 3, 4, 5}, NONE);
            assertTrue(joint.isJoint());
            assertArrayEquals(new int[]{1, 2, 3, 4, 5}, joint.newVoters());
            // a retried prepare of the same change is answered, not refused
            assertEquals(joint, prepare(c, new int[]{1, 2, 3, 4, 5}, NONE));
            Members five = commit(c, new int[]{1, 2, 3, 4, 5}, NONE);
            assertEquals(new Members(1, 2, 3, 4, 5), five);
            assertEquals(five, commit(c, new int[]{1, 2, 3, 4, 5}, NONE), "a retried commit is answered");
            waitForConfig(c, five);
            long acked = load.acknowledgedCount();
            load.awaitAcknowledged(acked + 500);

            // 5 -> 3, dropping whichever node leads and one more
            int leader = c.waitForLeader(1);
            int other = leader == 1 ? 2 : 1;
            int[] keep = Arrays.stream(new int[]{1, 2, 3, 4, 5}).filter(n -> n != leader && n != other).toArray();
            prepare(c, keep, NONE);
            Members three = commit(c, keep, NONE);
            assertEquals(new Members(keep), three);
            RaftCluster.waitFor("the removed leader to step down", () -> !c.group(leader, 1).isLeader());
            int newLeader = c.waitForLeader(1);
            assertTrue(three.isVoter(newLeader), "node " + newLeader + " leads but is not a voter");
            acked = load.acknowledgedCount();
            load.awaitAcknowledged(acked + 500);
            load.close();
            c.removeGroup(leader, 1);
            c.removeGroup(other, 1);
            assertFalse(Files.exists(dir.resolve("node-" + leader).resolve("group-1")), "the data was not deleted");
            waitForConfig(c, three);
            checkNothingLost(c, load);
        }
    }

    @Test
    void aMemberIsReplacedWhileWritesGoOn() {
        try (RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            load.awaitAcknowledged(500);
            c.addGroup(4, 1, new Members(1, 2, 3));
            int leader = c.waitForLeader(1);
            int gone = leader == 3 ? 2 : 3;
            int[] target = Arrays.stream(new int[]{1, 2, 3, 4}).filter(n -> n != gone).toArray();
            prepare(c, target, NONE);
            commit(c, target, NONE);
            waitForConfig(c, new Members(target));
            long acked = load.acknowledgedCount();
            load.awaitAcknowledged(acked + 500);
            load.close();
            c.removeGroup(gone, 1);
            checkNothingLost(c, load);
        }
    }

    @Test
    void aPreparedChangeIsAborted() {
        try (RaftCluster c = threeVotersAndNodeFour(dir)) {
            Members joint = prepare(c, new int[]{1, 2, 3, 4}, NONE);
            assertTrue(joint.isJoint());
            Members back = c.onLeader(1, g -> g.abortMembers(20_000));
            assertEquals(new Members(1, 2, 3), back);
            assertEquals(back, c.onLeader(1, g -> g.abortMembers(20_000)), "a retried abort is answered");
            // committing the aborted change is refused: nothing is prepared
            int leader = c.waitForLeader(1);
            try {
                c.group(leader, 1).commitMembers(new int[]{1, 2, 3, 4}, NONE, 5_000).get(10, TimeUnit.SECONDS);
                throw new AssertionError("a commit with nothing prepared was accepted");
            } catch (ExecutionException e) {
                assertTrue(e.getCause() instanceof IllegalStateException, "got " + e.getCause());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            c.write(1, 2);
            waitForConfig(c, back);
            c.removeGroup(4, 1);
            c.write(1, 3);
            assertEquals(3, c.checkIdentical(1).length);
        }
    }

    @Test
    void aChangeInterruptedByALeaderCrashIsFinishedOrAbortedAfterReElection() {
        try (RaftCluster c = new RaftCluster(dir, 5, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 20, 1_000_000);
            load.awaitAcknowledged(200);
            c.addGroup(4, 1, new Members(1, 2, 3));
            c.addGroup(5, 1, new Members(1, 2, 3));
            Members joint = prepare(c, new int[]{1, 2, 3, 4, 5}, NONE);
            // the leader crashes with the change prepared; the new leader has the joint configuration
            int crashed = c.waitForLeader(1);
            c.stopNode(crashed);
            int next = c.waitForLeader(1);
            assertEquals(joint, c.group(next, 1).members());
            Members five = commit(c, new int[]{1, 2, 3, 4, 5}, NONE);
            assertEquals(new Members(1, 2, 3, 4, 5), five);
            load.awaitAcknowledged(load.acknowledgedCount() + 200);
            // the crashed node comes back and learns the new configuration from the log
            c.startNode(crashed);
            if (c.group(crashed, 1) == null) {
                c.addGroup(crashed, 1, new Members(1, 2, 3));
            }
            waitForConfig(c, five);

            // second round: prepared, the leader crashes, the new leader aborts it
            Members joint2 = prepare(c, new int[]{1, 2, 3}, NONE);
            assertTrue(joint2.isJoint());
            int crashed2 = c.waitForLeader(1);
            c.stopNode(crashed2);
            Members back = c.onLeader(1, g -> g.abortMembers(20_000));
            assertEquals(five, back);
            load.awaitAcknowledged(load.acknowledgedCount() + 200);
            c.startNode(crashed2);
            if (c.group(crashed2, 1) == null) {
                c.addGroup(crashed2, 1, new Members(1, 2, 3));
            }
            waitForConfig(c, five);
            load.close();
            checkNothingLost(c, load);
        }
    }

    @Test
    void aConfigurationEntryIsNotReplacedOrReportedCommittedBeforeItCommits() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup lg = c.group(leader, 1);
            int kept = leader % 3 + 1;
            int[] target = {Math.min(leader, kept), Math.max(leader, kept)};
            // the leader's entries reach no one: the joint entry it appends cannot commit
            for (int n = 1; n <= 3; n++) {
                if (n != leader) {
                    c.faults.block(leader, n);
                }
            }
            java.util.concurrent.CompletableFuture<Members> prepared = lg.prepareMembers(target, NONE, 20_000);
            RaftCluster.waitFor("the joint entry in the leader's log", () -> lg.members().isJoint());
            assertEquals(new Members(1, 2, 3), lg.committedMembers(), "an uncommitted entry is not the committed configuration");
            java.util.concurrent.CompletableFuture<Members> committed = lg.commitMembers(target, NONE, 20_000);
            // a pause, not a synchronisation (shorter than the election timeout, so it still leads):
            // the commit must wait for the joint entry instead of appending the new configuration
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            assertTrue(lg.members().isJoint(), "the leader appended " + lg.members() + " over an uncommitted joint entry");
            assertFalse(committed.isDone());
            c.faults.heal();
            Members two = new Members(target[0], target[1]);
            try {
                assertEquals(two, committed.get(20, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                // it lost the leadership meanwhile: finish on the new leader
                assertEquals(two, commit(c, target, NONE));
            }
            waitForConfig(c, two);
            assertTrue(prepared.isDone());
            RaftCluster.waitFor("the new configuration committed on the leader",
                    () -> two.equals(c.group(c.waitForLeader(1), 1).committedMembers()));
        }
    }

    /** {@code nodes} nodes, group 1 on node 1 alone (its sole voter), started, with one write applied. */
    private static RaftCluster soleVoterOf(Path dir, int nodes) {
        RaftCluster c = new RaftCluster(dir, nodes, new int[]{1}, null);
        try {
            c.setMembers(1, 1);
            c.start();
            c.waitForLeader(1);
            c.write(1, 1);
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** 4 nodes, group 1 on voters 1, 2, 3 with one write applied, and hosted on node 4 outside the configuration. */
    private static RaftCluster threeVotersAndNodeFour(Path dir) {
        RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, null);
        try {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            c.write(1, 1);
            c.addGroup(4, 1, new Members(1, 2, 3));
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** Runs {@code op} on group 1's leader and expects it to fail; returns the cause. */
    private static Throwable failureOf(RaftGroup leader, java.util.function.Function<RaftGroup, CompletableFuture<Members>> op) {
        try {
            Members m = op.apply(leader).get(30, TimeUnit.SECONDS);
            throw new AssertionError("answered " + m + " while the committed configuration is " + leader.committedMembers());
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRetriedPrepareCatchesUpTheNodesItsFirstAttemptStaged() {
        try (RaftCluster c = soleVoterOf(dir, 3)) {
            c.addGroup(2, 1, new Members(1));
            c.addGroup(3, 1, new Members(1));
            c.faults.isolate(2);
            c.faults.isolate(3);
            RaftGroup lg = c.group(1, 1);
            // the first attempt stages 2 and 3 as observers, then times out waiting for them
            Throwable first = failureOf(lg, g -> g.prepareMembers(new int[]{1, 2, 3}, NONE, 1_000));
            assertTrue(first instanceof PoyangTimeoutException, "got " + first);
            assertEquals(new Members(new int[]{1}, new int[]{2, 3}), lg.members());
            // The retry (AdminClient makes one by itself after a leader change) must wait for them too.
            // Appending the joint [1] -> [1,2,3] now would need 2 or 3 for every commit: the group
            // would commit nothing more, not even an abort, until they come back.
            Throwable retry = failureOf(lg, g -> g.prepareMembers(new int[]{1, 2, 3}, NONE, 1_000));
            assertTrue(retry instanceof PoyangTimeoutException, "got " + retry);
            assertFalse(lg.members().isJoint(), "the joint entry went in with the new voters cut off: " + lg.members());
            c.write(1, 2);
            c.faults.heal();
            Members joint = prepare(c, new int[]{1, 2, 3}, NONE);
            assertTrue(joint.isJoint());
            assertEquals(new Members(1, 2, 3), commit(c, new int[]{1, 2, 3}, NONE));
            c.write(1, 3);
            assertEquals(3, c.checkIdentical(1).length);
        }
    }

    @Test
    void promotingAnObserverThatLagsWaitsForItToCatchUp() {
        try (RaftCluster c = soleVoterOf(dir, 2)) {
            c.addGroup(2, 1, new Members(1));
            prepare(c, new int[]{1}, new int[]{2});
            Members withObserver = commit(c, new int[]{1}, new int[]{2});
            waitForConfig(c, withObserver);
            c.faults.isolate(2);
            // more than the catch-up margin (1,000 entries) behind
            for (long v = 2; v <= 1_300; v++) {
                c.write(1, v);
            }
            RaftGroup lg = c.group(1, 1);
            Throwable e = failureOf(lg, g -> g.prepareMembers(new int[]{1, 2}, NONE, 1_000));
            assertTrue(e instanceof PoyangTimeoutException, "got " + e);
            assertFalse(lg.members().isJoint(), "the joint entry went in with the lagging voter cut off: " + lg.members());
            c.write(1, 1_301);
            c.faults.heal();
            prepare(c, new int[]{1, 2}, NONE);
            assertEquals(new Members(1, 2), commit(c, new int[]{1, 2}, NONE));
            c.write(1, 1_302);
            assertEquals(1_302, c.checkIdentical(1).length);
        }
    }

    @Test
    void aSoleVotersReadIndexReadsAreServedInAJointChangeWhileItsObserversAreDown() throws Exception {
        try (RaftCluster c = soleVoterOf(dir, 2)) {
            c.addGroup(2, 1, new Members(1));
            prepare(c, new int[]{1}, new int[]{2});
            waitForConfig(c, commit(c, new int[]{1}, new int[]{2}));
            c.faults.isolate(2);
            // dropping the observer: the joint configuration [1] -> [1], with 2 as the old observer
            Members joint = prepare(c, new int[]{1}, NONE);
            assertTrue(joint.isJoint(), "got " + joint);
            RaftGroup lg = c.group(1, 1);
            TestStateMachine sm = c.machine(1, 1);
            // node 1 is a majority of both voting sets: no answer of the cut-off observer is needed
            assertEquals(1, (int) lg.read(ReadKind.READ_INDEX, 3_000, sm::count).get(10, TimeUnit.SECONDS));
            assertEquals(new Members(1), commit(c, new int[]{1}, NONE));
        }
    }

    @Test
    void aRetriedCommitIsAnsweredOnlyOnceItsEntryCommitted() {
        try (RaftCluster c = threeVotersAndNodeFour(dir)) {
            int[] four = {1, 2, 3, 4};
            assertTrue(prepare(c, four, NONE).isJoint());
            int leader = c.waitForLeader(1);
            RaftGroup lg = c.group(leader, 1);
            // [1,2,3,4] needs 3 of 4; cut from the other two old voters, the leader has itself and node 4
            for (int n = 1; n <= 3; n++) {
                if (n != leader) {
                    c.faults.block(leader, n);
                }
            }
            Throwable first = failureOf(lg, g -> g.commitMembers(four, NONE, 200));
            assertTrue(first instanceof PoyangTimeoutException || first instanceof NotLeaderException, "got " + first);
            // the new configuration is in the leader's log, not committed: a retry must not call it done
            // (an operator would go on to delete data the joint configuration may still need)
            failureOf(lg, g -> g.commitMembers(four, NONE, 200));
            c.faults.heal();
            Members all = new Members(four);
            assertEquals(all, commit(c, four, NONE));
            waitForConfig(c, all);
            c.write(1, 2);
            assertEquals(2, c.checkIdentical(1).length);
        }
    }

    @Test
    void anObserverReplicatesWithoutVotingAndIsPromoted() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            c.addGroup(4, 1, new Members(1, 2, 3));
            prepare(c, new int[]{1, 2, 3}, new int[]{4});
            Members withObserver = commit(c, new int[]{1, 2, 3}, new int[]{4});
            assertTrue(withObserver.isObserver(4));
            assertFalse(withObserver.isVoter(4));
            waitForConfig(c, withObserver);
            c.write(1, 101);
            assertEquals(101, c.checkIdentical(1).length, "the observer does not replicate");
            // an observer serves follower reads
            RaftGroup obs = c.group(4, 1);
            TestStateMachine sm = c.machine(4, 1);
            assertEquals(101, (int) RaftCluster.join(obs.read(ReadKind.FOLLOWER_READ, 5_000, sm::count)));
            // it never stands for election, even when it hears from no leader
            c.faults.isolate(4);
            long rounds = obs.electionRounds();
            // writes go on for three election timeouts while it hears nothing (an observation window, not a sleep)
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_500);
            long v = 200;
            while (System.nanoTime() - until < 0) {
                c.write(1, v++);
            }
            assertEquals(rounds, obs.electionRounds(), "an observer stood for election");
            assertEquals(RaftRole.FOLLOWER, obs.role());
            // nor does it go on naming a leader it has not heard from (clients and /health take the name as live)
            assertEquals(0, obs.leaderId(), "a cut-off observer still names a leader");
            c.faults.heal();
            RaftCluster.waitFor("the observer to hear from the leader again", () -> obs.leaderId() != 0);

            // promotion
            prepare(c, new int[]{1, 2, 3, 4}, NONE);
            Members four = commit(c, new int[]{1, 2, 3, 4}, NONE);
            assertTrue(four.isVoter(4));
            waitForConfig(c, four);
            // with 4 voters a majority is 3: with one of nodes 1-3 down, a write commits only if node 4 counts
            int leader = c.waitForLeader(1);
            int down = leader == 3 ? 2 : 3;
            c.stopNode(down);
            c.write(1, 102);
            long[] values = c.checkIdentical(1);
            assertEquals(102L, values[values.length - 1]);
        }
    }

    @Test
    void aNodeTakenOutOfTheGroupCannotDisturbIt() {
        // a 1.5 s election timeout: the test asserts the leader stays; a 0.5 s stall must not depose it
        try (RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, rc -> rc.electionTimeoutMillis(1_500))) {
            c.setMembers(1, 1, 2, 3, 4);
            c.start();
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int gone = leader == 4 ? 3 : 4;
            int[] keep = Arrays.stream(new int[]{1, 2, 3, 4}).filter(n -> n != gone).toArray();
            prepare(c, keep, NONE);
            Members three = commit(c, keep, NONE);
            waitForConfig(c, three);
            leader = c.waitForLeader(1);
            int term = c.group(leader, 1).term();
            // the node left out still runs the group; it hears from no leader and stands, again and again
            RaftGroup left = c.group(gone, 1);
            long rounds = left.electionRounds();
            RaftCluster.waitFor("the removed node to stand twice", () -> left.electionRounds() >= rounds + 2);
            for (long v = 2; v <= 50; v++) {
                c.write(1, v);
            }
            // the members refused its (pre-)votes: the leader and its term are unchanged
            assertEquals(leader, c.waitForLeader(1));
            assertEquals(term, c.group(leader, 1).term(), "a node outside the configuration moved the term");
            assertFalse(left.isLeader());
            c.removeGroup(gone, 1);
            assertEquals(50, c.checkIdentical(1).length);
        }
    }

    @Test
    void theConfigurationIsKeptInSnapshotsAcrossAFullRestart() {
        try (RaftCluster c = threeVotersAndNodeFour(dir)) {
            prepare(c, new int[]{1, 2, 4}, new int[]{3});
            Members changed = commit(c, new int[]{1, 2, 4}, new int[]{3});
            waitForConfig(c, changed);
            for (long v = 2; v <= 20; v++) {
                c.write(1, v);
            }
            c.checkIdentical(1);
            for (int n = 1; n <= 4; n++) {
                RaftCluster.join(c.group(n, 1).takeSnapshot());
            }
            for (int n = 1; n <= 4; n++) {
                c.stopNode(n);
            }
            // the harness would start group 1 on nodes 1-3 with voters 1-3: the snapshot must win
            for (int n = 1; n <= 4; n++) {
                c.startNode(n);
                if (c.group(n, 1) == null) {
                    c.addGroup(n, 1, new Members(1, 2, 3));
                }
            }
            for (int n = 1; n <= 4; n++) {
                assertEquals(changed, c.group(n, 1).members(), "node " + n + " after the restart");
            }
            int leader = c.waitForLeader(1);
            assertTrue(changed.isVoter(leader), "observer " + leader + " leads");
            c.write(1, 21);
            assertEquals(21, c.checkIdentical(1).length);
        }
    }

    @Test
    void membershipOperationsRunOneAtATime() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int out = leader % 3 + 1;
            int other = 6 - leader - out;
            int[] keep = {Math.min(leader, other), Math.max(leader, other)};
            RaftGroup g = c.group(leader, 1);
            g.prepareMembers(keep, NONE, 20_000).get(30, TimeUnit.SECONDS);
            long before = g.lastLogIndex();
            // a commit and an abort of the same prepared change, together: both entries would go in
            // (the old configuration after the new one) if the abort decided before the commit's
            // entry was in the log; it waits, and then finds no prepared change left to abort
            java.util.concurrent.CompletableFuture<Members> commit = g.commitMembers(keep, NONE, 20_000);
            java.util.concurrent.CompletableFuture<Members> abort = g.abortMembers(20_000);
            Members two = new Members(keep, NONE);
            assertEquals(two, commit.get(30, TimeUnit.SECONDS));
            assertEquals(two, abort.get(30, TimeUnit.SECONDS));
            assertEquals(before + 1, g.lastLogIndex(), "one configuration entry, the commit's");
            assertEquals(two, g.members());
            waitForConfig(c, two);
        }
    }
}
