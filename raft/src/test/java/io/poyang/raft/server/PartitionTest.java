package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionTest {

    /** Tests that assert the leader and term stay the same run with this election timeout. */
    private static final Consumer<RaftConfig> STEADY_LEADER =
            rc -> rc.electionTimeoutMillis(1_500);

    @TempDir
    Path dir;

    @Test
    void aFollowerGivenASnapshotByANewLeaderDoesNotCommitTheOldLeadersUncommittedEntries() throws Exception {
        // a small tail cache: the new leader's probe after the snapshot carries no entries, so only
        // the commit index it sends tells the follower what is committed
        try (RaftCluster c = new RaftCluster(dir, 5, new int[]{1},
                rc -> rc.segmentBytes(64 * 1024).snapshotsToKeep(1).tailCache(10, 1 << 20)).start()) {
            int a = c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(4_000);
            load.close();
            long[] before = c.checkIdentical(1);
            // every node snapshots and drops its first segments: a leader that cannot place a
            // follower in its log sends it this (old) snapshot
            for (int n : c.runningMembers(1)) {
                assertTrue(RaftCluster.join(c.group(n, 1).takeSnapshot()) != null);
                RaftGroup g = c.group(n, 1);
                RaftCluster.waitFor("node " + n + "'s log to start after its snapshot", () -> g.firstLogIndex() > 1);
            }
            // committed everywhere after the snapshot, and gone from the followers' tail caches
            for (int i = 0; i < 50; i++) {
                c.write(1, 3_000_000 + i);
            }
            // the old leader reaches one follower only: entries that can never commit
            int e = a % 5 + 1;
            for (int n = 1; n <= 5; n++) {
                if (n != a && n != e) {
                    c.faults.block(a, n);
                }
            }
            RaftGroup oldLeader = c.group(a, 1);
            RaftGroup follower = c.group(e, 1);
            List<CompletableFuture<Encodable>> lost = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                lost.add(oldLeader.submit(0, TestStateMachine.body(900_000 + i), 60_000));
            }
            long oldLast = oldLeader.lastLogIndex();
            RaftCluster.waitFor("the follower to hold the old leader's uncommitted entries",
                    () -> follower.lastLogIndex() >= oldLast);
            // both drop out; the other three elect a leader, whose first tries to reach the follower fail
            c.faults.isolate(a);
            c.faults.isolate(e);
            RaftCluster.waitFor("a new leader among the other three", () -> {
                for (int n = 1; n <= 5; n++) {
                    if (n != a && n != e && c.group(n, 1).role() == RaftRole.LEADER) {
                        return true;
                    }
                }
                return false;
            });
            for (int i = 0; i < 40; i++) {
                c.write(1, 2_000_000 + i);   // commits past the old leader's last index
            }
            // a pause, not a synchronisation: lets the new leader's probes to the follower fail
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2_500));
            c.faults.heal();
            long[] values = c.checkIdentical(1);
            for (long v : values) {
                assertFalse(v >= 900_000 && v < 900_020, "an uncommitted entry of the old leader was applied");
            }
            assertEquals(before.length + 90, values.length);
            assertEquals(0, io.poyang.log.ImpossibleStates.count(), "no impossible state was reported");
        }
    }

    @Test
    void aPartitionedMinorityLeaderStepsDownAndItsUncommittedEntriesAreOverwritten() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int old = c.waitForLeader(1);
            for (int i = 0; i < 50; i++) {
                c.write(1, i);
            }
            c.checkIdentical(1);
            RaftGroup oldLeader = c.group(old, 1);
            c.faults.isolate(old);
            // Writes to the cut-off leader get log entries there but can never commit.
            List<CompletableFuture<Encodable>> lost = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                lost.add(oldLeader.submit(0, TestStateMachine.body(900_000 + i), 60_000));
            }
            RaftCluster.waitFor("the old leader to step down", () -> oldLeader.role() != RaftRole.LEADER);
            int fresh = c.waitForLeader(1);
            assertNotEquals(old, fresh);
            for (int i = 0; i < 30; i++) {
                c.write(1, 1000 + i);
            }
            assertTrue(oldLeader.lastLogIndex() > oldLeader.commitIndex(), "the old leader holds uncommitted entries");
            c.faults.heal();
            long[] values = c.checkIdentical(1);
            Set<Long> applied = new HashSet<>();
            for (long v : values) {
                applied.add(v);
            }
            for (int i = 0; i < 20; i++) {
                assertFalse(applied.contains(900_000L + i), "an uncommitted entry of the old leader was applied");
            }
            for (int i = 0; i < 30; i++) {
                assertTrue(applied.contains(1000L + i));
            }
            // The old leader learned that its entries lost their places: the writers hear "not applied".
            for (CompletableFuture<Encodable> f : lost) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                    throw new AssertionError("a write to the partitioned leader succeeded");
                } catch (ExecutionException e) {
                    assertInstanceOf(NotLeaderException.class, e.getCause());
                }
            }
        }
    }

    @Test
    void aFollowerCutOffFromEveryoneComesBackWithoutDisturbingTheLeader() {
        // a 1.5 s election timeout: the test asserts the leader stays; a 0.5 s stall of this loaded
        // machine must not depose it
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, STEADY_LEADER).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int follower = leader % 3 + 1;
            int term = c.group(leader, 1).term();
            RaftGroup f = c.group(follower, 1);
            long rounds = f.electionRounds();
            c.faults.isolate(follower);
            // it keeps asking for pre-votes and gets none
            RaftCluster.waitFor("three pre-vote rounds of the cut-off follower", () -> f.electionRounds() >= rounds + 3);
            for (int i = 0; i < 20; i++) {
                c.write(1, 100 + i);
            }
            assertEquals(term, c.group(follower, 1).term(), "pre-votes that fail do not raise the follower's term");
            c.faults.heal();
            c.checkIdentical(1);
            assertEquals(leader, c.waitForLeader(1));
            assertEquals(term, c.group(leader, 1).term(), "the leader was not disturbed");
        }
    }

    @Test
    void aFollowerCutOffFromTheLeaderOnlyCannotDeposeIt() {
        // a 1.5 s election timeout: the test asserts the leader stays; a 0.5 s stall of this loaded
        // machine must not depose it
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, STEADY_LEADER).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int follower = leader % 3 + 1;
            int term = c.group(leader, 1).term();
            // The follower hears nothing from the leader but still reaches the third node, which hears
            // the leader: it refuses the follower's pre-votes (and votes), so the term stays.
            RaftGroup f = c.group(follower, 1);
            long rounds = f.electionRounds();
            c.faults.block(leader, follower).block(follower, leader);
            RaftCluster.waitFor("three pre-vote rounds of the cut-off follower", () -> f.electionRounds() >= rounds + 3);
            for (int i = 0; i < 20; i++) {
                c.write(1, 100 + i);
            }
            assertEquals(leader, c.waitForLeader(1));
            assertEquals(term, c.group(leader, 1).term(), "the leader was not disturbed");
            c.faults.heal();
            c.checkIdentical(1);
            assertEquals(term, c.group(leader, 1).term());
        }
    }

    /**
     * A follower B misses the leader L long enough to ask for pre-votes; L reaches it again before
     * the third node C (cut off from L, so willing) grants. L's lease counts on B's
     * acknowledgements, so B must drop that round rather than stand and depose L.
     * Nodes: L = 1 (a 4 s election timeout, so its own quorum check does not step it down while
     * B hears nothing), B = 2 and C = 3 (0.5 s). B's pre-vote to C is held 0.6 s on the way, long
     * after L's next heartbeat (50 ms) reached B; C's own requests to B are held past their
     * deadline, so C never gets B's vote for an election of its own.
     */
    @Test
    void aFollowerThatHearsTheLeaderAgainDuringItsPreVoteRoundDoesNotStand() {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1})) {
            c.nodeTweak = (id, rc) -> rc.electionTimeoutMillis(id == 1 ? 4_000 : 500);
            c.start();
            int first = c.waitForLeader(1);
            if (first != 1) {
                RaftCluster.join(c.group(first, 1).transferLeadership(1, 10_000));
            }
            RaftCluster.waitFor("node 1 leading", () -> c.group(1, 1).isLeader());
            c.write(1, 1);
            int term = c.group(1, 1).term();
            RaftGroup b = c.group(2, 1);
            RaftGroup cNode = c.group(3, 1);

            c.faults.block(1, 3).block(3, 1).delay(3, 2, 60_000).delay(2, 3, 600);
            long cRounds = cNode.electionRounds();
            RaftCluster.waitFor("a pre-vote round of node 3, cut off from the leader", () -> cNode.electionRounds() > cRounds);

            long bRounds = b.electionRounds();
            c.faults.block(1, 2);
            RaftCluster.waitFor("a pre-vote round of node 2", () -> b.electionRounds() > bRounds);
            c.faults.unblock(1, 2);
            RaftCluster.waitFor("node 2 following node 1 again", () -> b.leaderId() == 1);
            // node 3's grant reaches node 2 about 0.6 s after it asked; give it time to act on it
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_500);
            while (System.nanoTime() - until < 0) {
                assertEquals(term, b.term(), "node 2 stood for election although the leader reached it");
                assertTrue(c.group(1, 1).isLeader(), "the leader was deposed");
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
            assertEquals(term, c.group(1, 1).term(), "the leader's term changed");
            c.faults.heal();
            c.write(1, 2);
            c.checkIdentical(1);
        }
    }
}
