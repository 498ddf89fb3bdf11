package io.poyang.raft.server;

import io.poyang.raft.client.RaftRole;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ElectionTest {

    @TempDir
    Path dir;

    @Test
    void threeNodesElectOneLeaderThatTheOthersFollow() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            checkOneLeader(c, 1);
            c.write(1, 7);
            c.checkIdentical(1);
        }
    }

    @Test
    void fiveNodesElectOneLeaderThatTheOthersFollow() {
        try (RaftCluster c = new RaftCluster(dir, 5, 1).start()) {
            checkOneLeader(c, 1);
            c.write(1, 7);
            c.checkIdentical(1);
        }
    }

    static void checkOneLeader(RaftCluster c, int groupId) {
        int leader = c.waitForLeader(groupId);
        int term = c.group(leader, groupId).term();
        RaftCluster.waitFor("every node to follow leader " + leader, () -> {
            for (int n : c.runningMembers(groupId)) {
                if (c.group(n, groupId).leaderId() != leader) {
                    return false;
                }
            }
            return true;
        });
        int leaders = 0;
        for (int n : c.runningMembers(groupId)) {
            if (c.group(n, groupId).role() == RaftRole.LEADER && c.group(n, groupId).term() == term) {
                leaders++;
            }
        }
        assertEquals(1, leaders, "one leader in term " + term);
    }
}
