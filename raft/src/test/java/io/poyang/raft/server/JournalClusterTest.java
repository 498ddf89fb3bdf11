package io.poyang.raft.server;

import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.LogJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Groups writing through their nodes' log journals ({@link RaftServerConfig.Builder#logJournal}):
 * replication, snapshots with their log compaction, a leader's stop, a group removed and added
 * again, and a whole-cluster restart, with every node's state machines compared at the end.
 */
class JournalClusterTest {

    @TempDir
    Path dir;

    private RaftCluster cluster(int... groups) {
        RaftCluster c = new RaftCluster(dir, 3, groups, rc -> rc.segmentBytes(256 * 1024).snapshotEvery(2_000, 0));
        c.nodeServerTweak = (id, b) -> b.logJournal(true).logJournalFiles(3, LogJournal.MIN_FILE_BYTES);
        return c;
    }

    @Test
    void threeGroupsReplicateThroughTheJournalsAndAWholeClusterRestartKeepsEveryCommittedEntry() {
        try (RaftCluster c = cluster(1, 2, 3).start()) {
            LoadGenerator[] loads = new LoadGenerator[4];
            for (int g = 1; g <= 3; g++) {
                c.waitForLeader(g);
                loads[g] = new LoadGenerator(c, g, 50, g * 1_000_000_000L);
            }
            for (int g = 1; g <= 3; g++) {
                loads[g].awaitAcknowledged(3_000);
            }
            // every node has written thousands of entries by now (a node restarted below may catch up
            // by a snapshot, and its new journal may then have nothing to write before the checks)
            for (int n = 1; n <= 3; n++) {
                RaftServer s = c.server(n);
                assertTrue(s.logJournalFsyncCount() > 0, "node " + n + " wrote no journal");
                for (RaftGroup g : s.groups()) {
                    assertEquals(0, g.logFsyncCount(), "group " + g.groupId() + " on node " + n
                            + " fsynced its own log; the journal should have");
                }
                assertTrue(Files.exists(dir.resolve("node-" + n).resolve(LogJournal.DIR_NAME).resolve("checkpoint-slots")));
            }
            // a leader stops under load: the others elect a new one from their journalled logs
            int leader = c.waitForLeader(1);
            c.stopNode(leader);
            loads[1].awaitAcknowledged(loads[1].acknowledgedCount() + 500);
            c.startNode(leader);
            for (int g = 1; g <= 3; g++) {
                loads[g].awaitAcknowledged(loads[g].acknowledgedCount() + 500);
                loads[g].close();
            }
            long[][] before = new long[4][];
            for (int g = 1; g <= 3; g++) {
                before[g] = c.checkIdentical(g);
            }
            for (int n = 1; n <= 3; n++) {
                c.stopNode(n);
            }
            for (int n = 1; n <= 3; n++) {
                c.startNode(n);
            }
            for (int g = 1; g <= 3; g++) {
                c.write(g, 42);
                long[] after = c.checkIdentical(g);
                Set<Long> applied = new HashSet<>();
                for (long v : after) {
                    applied.add(v);
                }
                for (long v : before[g]) {
                    assertTrue(applied.contains(v), "group " + g + ": committed value " + v + " was lost in the restart");
                }
                loads[g].checkApplied(after, " in the restart");
            }
        }
    }

    @Test
    void aGroupRemovedWithItsDataAndAddedAgainStartsEmpty() {
        try (RaftCluster c = cluster(1, 2).start()) {
            c.waitForLeader(2);
            LoadGenerator load = new LoadGenerator(c, 2, 50, 1_000_000);
            load.awaitAcknowledged(1_000);
            load.close();
            c.checkIdentical(2);
            for (int n = 1; n <= 3; n++) {
                RaftCluster.join(c.server(n).removeGroup(2, true));
                assertTrue(!Files.exists(dir.resolve("node-" + n).resolve("group-2")), "group 2's data on node " + n);
            }
            for (int n = 1; n <= 3; n++) {
                c.addGroup(n, 2, new Members(1, 2, 3));
            }
            c.waitForLeader(2);
            c.write(2, 7);
            long[] applied = c.checkIdentical(2);
            assertEquals(1, applied.length, "the group added again holds only its own write");
            assertEquals(7, applied[0]);
            c.write(1, 8);
            c.checkIdentical(1);
        }
    }
}
