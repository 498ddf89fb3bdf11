package io.poyang.raft.server;

import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A preferred leader per group: the leadership goes to it and comes back to it after a failover;
 * it follows a change made at run time; a preferred node that is not a voter leaves the leader
 * where it is until it becomes one.
 */
class PreferredLeaderTest {

    @TempDir
    Path dir;

    /** A 3-node cluster hosting group 1, whose every node prefers node {@code preferred}. */
    private RaftCluster cluster(int preferred) {
        RaftCluster c = new RaftCluster(dir, 3, 1);
        c.serverTweak = b -> b.preferredLeader(1, preferred);
        return c;
    }

    /** Waits until {@code node} leads group 1 and every other running member follows it. */
    private static void waitForLeadershipOn(RaftCluster c, int node) {
        RaftCluster.waitFor("node " + node + " to lead group 1, followed by every running member", () -> {
            if (!c.isRunning(node) || !c.group(node, 1).isLeader()) {
                return false;
            }
            for (int n : c.runningMembers(1)) {
                if (c.group(n, 1).leaderId() != node) {
                    return false;
                }
            }
            return true;
        });
    }

    /**
     * Watches group 1 for {@code millis} (an observation window, not a sleep: what is under test is
     * that nothing moves in it) and fails as soon as {@code leader} stops leading or its term moves.
     */
    private static void assertLeaderStays(RaftCluster c, int leader, long millis) {
        RaftGroup g = c.group(leader, 1);
        int term = g.term();
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - until < 0) {
            assertTrue(g.isLeader(), "node " + leader + " stopped leading group 1 (now node " + g.leaderId() + ")");
            assertEquals(term, g.term(), "group 1 held an election");
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
        }
    }

    @Test
    void thePreferredNodeBecomesAndStaysTheLeader() {
        try (RaftCluster c = cluster(3).start()) {
            waitForLeadershipOn(c, 3);
            RaftGroup g = c.group(3, 1);
            assertEquals(3, g.preferredLeader());
            int term = g.term();
            for (long v = 1; v <= 20; v++) {
                c.write(1, v);
            }
            assertLeaderStays(c, 3, 3 * RaftCluster.ELECTION_TIMEOUT_MILLIS);
            assertEquals(term, g.term());
            assertEquals(20, c.checkIdentical(1).length);
            // a group restarted on its node keeps the preference it ran with (here one set at run time)
            c.group(1, 1).setPreferredLeader(2);
            RaftGroup restarted = RaftCluster.join(c.server(1).restartGroup(1));
            assertEquals(2, restarted.preferredLeader());
        }
    }

    @Test
    void theLeadershipReturnsToThePreferredNodeAfterItsRestartWithoutLosingAWrite() {
        try (RaftCluster c = cluster(3).start()) {
            waitForLeadershipOn(c, 3);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            load.awaitAcknowledged(200);
            c.stopNode(3);
            int other = c.waitForLeader(1);
            assertTrue(other != 3);
            long acked = load.acknowledgedCount();
            load.awaitAcknowledged(acked + 300);   // the group goes on under the other leader
            c.startNode(3);
            waitForLeadershipOn(c, 3);
            load.awaitAcknowledged(load.acknowledgedCount() + 300);   // and on under node 3 again
            load.close();
            c.write(1, 7);
            load.checkApplied(c.checkIdentical(1), "");
        }
    }

    @Test
    void aPreferenceChangedAtRunTimeMovesTheLeadership() {
        try (RaftCluster c = cluster(3).start()) {
            waitForLeadershipOn(c, 3);
            c.write(1, 1);
            for (int n = 1; n <= 3; n++) {
                c.group(n, 1).setPreferredLeader(1);
            }
            waitForLeadershipOn(c, 1);
            assertTrue(c.group(3, 1).preferredLeaderTransfers() >= 1, "node 3 did not hand over");
            c.write(1, 2);
            // no preference: the leadership stays where it is
            for (int n = 1; n <= 3; n++) {
                c.group(n, 1).setPreferredLeader(0);
            }
            assertLeaderStays(c, 1, 3 * RaftCluster.ELECTION_TIMEOUT_MILLIS);
            c.write(1, 3);
            assertEquals(3, c.checkIdentical(1).length);
            assertThrows(IllegalArgumentException.class, () -> c.group(1, 1).setPreferredLeader(-1));
        }
    }

    @Test
    void aPreferredNodeThatIsNotAVoterLeavesTheLeaderWhereItIsUntilItVotes() {
        try (RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            for (int n = 1; n <= 3; n++) {
                c.group(n, 1).setPreferredLeader(4);   // not in the group at all
            }
            assertLeaderStays(c, leader, 4 * RaftCluster.ELECTION_TIMEOUT_MILLIS);
            // an observer: replicates, but cannot lead
            c.addGroup(4, 1, new Members(1, 2, 3)).setPreferredLeader(4);
            c.onLeader(1, g -> g.prepareMembers(new int[]{1, 2, 3}, new int[]{4}, 20_000));
            c.onLeader(1, g -> g.commitMembers(new int[]{1, 2, 3}, new int[]{4}, 20_000));
            RaftCluster.waitFor("node 4 to observe group 1", () -> c.group(4, 1).members().isObserver(4));
            leader = c.waitForLeader(1);
            assertLeaderStays(c, leader, 4 * RaftCluster.ELECTION_TIMEOUT_MILLIS);
            // promoted to a voter, it gets the leadership
            c.onLeader(1, g -> g.prepareMembers(new int[]{1, 2, 3, 4}, new int[0], 20_000));
            c.onLeader(1, g -> g.commitMembers(new int[]{1, 2, 3, 4}, new int[0], 20_000));
            waitForLeadershipOn(c, 4);
            c.write(1, 2);
            assertEquals(2, c.checkIdentical(1).length);
        }
    }

    @Test
    void aLeaderHandingOverWithoutATargetSkipsAPreferredNodeThatLagsBehind() {
        // one AppendEntries request holds 2 entries: 3 missed ones put the preferred node out of reach
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.maxAppend(2, 1 << 20)).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int preferred = leader % 3 + 1;
            int other = 6 - leader - preferred;
            c.faults.isolate(preferred);
            for (int v = 2; v <= 4; v++) {
                c.write(1, v);
            }
            RaftGroup g = c.group(leader, 1);
            g.setPreferredLeader(preferred);
            assertEquals(other, RaftCluster.join(g.transferLeadershipToSuccessor(10_000)).intValue(),
                    "a preferred node 3 entries behind (more than one request) was chosen to lead next");
            assertEquals(other, c.waitForLeader(1));
            c.faults.heal();
            c.write(1, 5);
            c.checkIdentical(1);
        }
    }
}
