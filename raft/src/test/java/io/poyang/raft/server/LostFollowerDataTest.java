package io.poyang.raft.server;

import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import io.poyang.codec.Encodable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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

    /**
     * The follower comes back with an older copy of its directory that holds entries of an older
     * term where the leader has others: its refusals then name an entry it has (hint = the probed
     * index), not one it lacks, and the match must go back past the entries of the other term.
     */
    @Test
    void aFollowerRestoredFromAnOlderCopyWithEntriesOfAnotherTermCatchesUp() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            int old = c.waitForLeader(1);
            for (long v = 1; v <= 50; v++) {
                c.write(1, v);
            }
            c.checkIdentical(1);
            RaftGroup oldLeader = c.group(old, 1);
            c.faults.isolate(old);
            // entries of the old term that only the cut-off leader gets, and that never commit
            List<CompletableFuture<Encodable>> lost = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                lost.add(oldLeader.submit(0, TestStateMachine.body(900_000 + i), 60_000));
            }
            RaftCluster.waitFor("the old leader to step down", () -> oldLeader.role() != RaftRole.LEADER);
            int fresh = c.waitForLeader(1);
            assertNotEquals(old, fresh);
            for (long v = 1_001; v <= 1_030; v++) {
                c.write(1, v);
            }
            assertTrue(oldLeader.lastLogIndex() > oldLeader.commitIndex(), "the old leader holds no uncommitted entries");
            c.stopNode(old);
            Path groupDir = dir.resolve("node-" + old).resolve("group-1");
            Path copy = dir.resolve("copy-of-group-1");
            copyTree(groupDir, copy);

            // back with its directory: its entries of the old term are overwritten, and the leader's
            // match for it goes beyond them
            c.faults.heal();
            c.startNode(old);
            for (long v = 2_001; v <= 2_030; v++) {
                c.write(1, v);
            }
            c.checkIdentical(1);

            // and back again with the older copy
            c.stopNode(old);
            RaftCluster.deleteTree(groupDir);
            copyTree(copy, groupDir);
            c.startNode(old);
            for (long v = 3_001; v <= 3_010; v++) {
                c.write(1, v);
            }
            assertEquals(fresh, c.waitForLeader(1), "the restored follower deposed the leader: the test shows nothing");
            long[] values = c.checkIdentical(1);
            assertEquals(120, values.length);
            for (long v : values) {
                assertTrue(v < 900_000, "an entry of the old term was applied: " + v);
            }
            assertEquals(120, c.values(old, 1).length, "the restored follower did not get every entry back");
        }
    }

    private static void copyTree(Path from, Path to) throws Exception {
        List<Path> all = new ArrayList<>();
        try (java.util.stream.Stream<Path> s = Files.walk(from)) {
            s.forEach(all::add);
        }
        for (Path p : all) {
            Path target = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p)) {
                Files.createDirectories(target);
            } else {
                Files.copy(p, target);
            }
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
