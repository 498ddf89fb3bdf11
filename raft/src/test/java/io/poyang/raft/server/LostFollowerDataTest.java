package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower that lost entries it had acknowledged (its data directory wiped or restored from an
 * older copy, or syncForce off and an OS crash) comes back under the same node id. The leader
 * still holds its old match index; before, it probed at that index + 1 forever, every probe was
 * refused, and the follower never caught up. Now the refusal of an entry at or below the match
 * sends the leader back to the follower's hint. (A follower behind the leader's first log index
 * got a snapshot before too, as the hint finds no entry to match; the second test keeps it so.)
 */
class LostFollowerDataTest {

    @TempDir
    Path dir;

    @Test
    void aFollowerWhoseGroupDirectoryWasWipedIsSentTheLogAgainAndCatchesUp() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int leader = c.waitForLeader(1);
            for (long v = 1; v <= 200; v++) {
                c.write(1, v);
            }
            c.checkIdentical(1);
            int follower = leader == 1 ? 2 : 1;
            wipe(c, follower);
            for (long v = 201; v <= 250; v++) {
                c.write(1, v);
            }
            assertEquals(leader, c.waitForLeader(1), "the wiped follower deposed the leader: the test shows nothing");
            long[] values = c.checkIdentical(1);
            assertEquals(250, values.length);
            assertEquals(250, c.values(follower, 1).length, "the wiped follower did not get every entry back");
        }
    }

    @Test
    void aWipedFollowerBehindTheLeadersFirstLogIndexIsSentASnapshot() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(64 * 1024).snapshotEvery(300, 0)).start()) {
            int leader = c.waitForLeader(1);
            for (long v = 1; v <= 1_500; v++) {
                c.write(1, v);
            }
            RaftCluster.join(c.group(leader, 1).takeSnapshot());
            RaftCluster.waitFor("the leader to delete its first log entries",
                    () -> c.group(leader, 1).firstLogIndex() > 1);
            c.checkIdentical(1);
            int follower = leader == 1 ? 2 : 1;
            wipe(c, follower);
            for (long v = 1_501; v <= 1_550; v++) {
                c.write(1, v);
            }
            assertEquals(leader, c.waitForLeader(1), "the wiped follower deposed the leader: the test shows nothing");
            assertEquals(1_550, c.checkIdentical(1).length);
            assertEquals(1_550, c.values(follower, 1).length, "the wiped follower did not get every entry back");
        }
    }

    /** Stops the follower, deletes its group's directory and starts it again, empty, under the same id. */
    private void wipe(RaftCluster c, int follower) throws Exception {
        c.stopNode(follower);
        Path groupDir = dir.resolve("node-" + follower).resolve("group-1");
        assertTrue(Files.isDirectory(groupDir), groupDir + " is not the group's directory");
        RaftCluster.deleteTree(groupDir);
        c.startNode(follower);
    }
}
