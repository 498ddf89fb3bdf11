package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplicationTest {

    @TempDir
    Path dir;

    @Test
    void aMachineAskingForRaftEntriesGetsEveryIndexInOrderWithTheNoOpsAsEntriesWithoutBody() {
        RaftCluster c = new RaftCluster(dir, 3, 1);
        c.machinesApplyRaftEntries = true;
        try (RaftCluster cluster = c.start()) {
            int first = c.waitForLeader(1);
            for (long v = 1; v <= 10; v++) {
                c.write(1, v);
            }
            c.stopNode(first);              // the next leader's no-op is a raft entry of a new term
            c.waitForLeader(1);
            for (long v = 11; v <= 20; v++) {
                c.write(1, v);
            }
            c.startNode(first);             // replays its log: the same entries again
            long[] values = c.checkIdentical(1);
            assertEquals(20, values.length);
            for (int n = 1; n <= 3; n++) {
                TestStateMachine sm = c.machine(n, 1);
                long[] own = c.call(n, 1, sm::raftEntryIndexes);
                long[] written = c.call(n, 1, sm::indexes);
                long applied = c.group(n, 1).lastApplied();
                assertTrue(own.length >= 2, "node " + n + ": both leaders' no-ops, got " + own.length);
                assertEquals(applied, own.length + written.length, "node " + n + ": every index once");
                long[] all = new long[own.length + written.length];
                System.arraycopy(own, 0, all, 0, own.length);
                System.arraycopy(written, 0, all, own.length, written.length);
                java.util.Arrays.sort(all);
                for (int i = 0; i < all.length; i++) {
                    assertEquals(i + 1, all[i], "node " + n + ": indexes 1.." + applied + " without gaps");
                }
                for (int i = 1; i < own.length; i++) {
                    assertTrue(own[i] > own[i - 1], "node " + n + ": raft entries in index order");
                }
            }
        }
    }

    @Test
    void writesAreReplicatedAndAppliedInTheSameOrderOnEveryNode() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 200, 1_000_000);
            load.awaitAcknowledged(20_000);
            load.close();
            assertEquals(0, load.unknown.get(), "no write's outcome is unknown in a healthy cluster");
            long[] values = c.checkIdentical(1);
            load.checkApplied(values, "");
            assertTrue(values.length >= 20_000);
        }
    }

    @Test
    void aFollowerFarBehindTheTailCacheIsFedFromTheLeadersLogOnDisk() {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.tailCache(100, 1 << 20)).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int follower = leader % 3 + 1;
            c.faults.isolate(follower);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(3_000);
            load.close();
            long readsBefore = c.group(leader, 1).pipelineCounters()[4];
            c.faults.heal();
            long[] values = c.checkIdentical(1);
            assertTrue(values.length >= 3_001);
            assertTrue(c.group(leader, 1).pipelineCounters()[4] > readsBefore,
                    "the entries the follower missed were no longer in the tail cache: read from disk");
            assertEquals(1, c.group(follower, 1).firstLogIndex(), "caught up by log, not by snapshot");
        }
    }

    @Test
    void aNewLeaderWhoseProbesFailedWhileAFollowerWasCutOffCatchesItUpByLogNotBySnapshot() {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(64 * 1024).snapshotsToKeep(1)).start()) {
            int leader = c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 100, 1_000_000);
            load.awaitAcknowledged(4_000);
            load.close();
            long last = c.write(1, 1);
            // every node has the whole log, then drops its start below a snapshot
            for (int n : c.allNodes()) {
                RaftGroup g = c.group(n, 1);
                RaftCluster.waitFor("node " + n + " to apply " + last, () -> g.lastApplied() >= last);
                RaftCluster.join(g.takeSnapshot());
                RaftCluster.waitFor("node " + n + "'s log to start after 1", () -> g.firstLogIndex() > 1);
            }
            int follower = leader % 3 + 1;
            int newLeader = 6 - leader - follower;
            RaftGroup fg = c.group(follower, 1);
            long followerFirst = fg.firstLogIndex();
            c.faults.isolate(follower);
            RaftCluster.join(c.group(leader, 1).transferLeadership(newLeader, 10_000));
            RaftGroup ng = c.group(newLeader, 1);
            // the new leader knows nothing of the follower's log, and what it sends fails while the
            // follower is cut off (appends, or snapshot transfers if it wrongly decided on one)
            RaftCluster.waitFor("the new leader's sends to the cut-off follower to fail",
                    () -> ng.pipelineCounters()[5] + ng.pipelineCounters()[6] >= 3);
            c.faults.heal();
            long after = c.write(1, 2);
            RaftCluster.waitFor("the follower to apply " + after, () -> fg.lastApplied() >= after);
            assertEquals(0, ng.pipelineCounters()[6], "a snapshot was sent to a follower that had every entry");
            assertEquals(followerFirst, fg.firstLogIndex(), "the follower's log was reset");
            c.checkIdentical(1);
        }
    }

    @Test
    void aFollowerWhoseGroupFailedIsNotProbedBackToBack() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            c.write(1, 1);
            int failing = leader % 3 + 1;
            c.machine(failing, 1).failNextApply = true;
            c.write(1, 2);
            RaftGroup fg = c.group(failing, 1);
            RaftCluster.waitFor("the group to fail on node " + failing, () -> fg.failure() != null);
            // the failed follower refuses every append; the leader goes on with the other one
            RaftGroup lg = c.group(leader, 1);
            c.write(1, 3);
            long sent = lg.pipelineCounters()[1];
            // the thing under test is a rate: what the leader sends over half a second of no writes
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            long inHalfASecond = lg.pipelineCounters()[1] - sent;
            // heartbeats to the healthy follower and one retry per pause to the failed one (50 ms each):
            // some 20; re-probing the refusing follower at once would be thousands
            assertTrue(inHalfASecond < 200, inHalfASecond + " appends sent in half a second of no writes");
            assertTrue(lg.isLeader());
            // A leader of a newer term: the failed node answers in its own, older term (it takes no
            // new term while failed), and that refusal must pause the probes too.
            int healthy = 6 - leader - failing;
            RaftCluster.join(lg.transferLeadership(healthy, 10_000));
            RaftGroup ng = c.group(healthy, 1);
            RaftCluster.waitFor("node " + healthy + " to lead", ng::isLeader);
            c.write(1, 4);
            long sentByNew = ng.pipelineCounters()[1];
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            long byNewInHalfASecond = ng.pipelineCounters()[1] - sentByNew;
            assertTrue(byNewInHalfASecond < 200, byNewInHalfASecond + " appends sent by the leader of the next term"
                    + " in half a second of no writes");
            assertTrue(fg.failure() != null, "the node's group is still failed");
            // restarted, the node replays and catches up like any other
            c.restartNode(failing);
            c.checkConsistent(1);
        }
    }
}
