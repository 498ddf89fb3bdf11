package io.poyang.raft.server;

import io.poyang.net.NetConnectionException;
import io.poyang.raft.client.AdminClient;
import io.poyang.raft.client.AdminClientConfig;
import io.poyang.raft.client.NodeIdMismatchException;
import io.poyang.raft.client.AdminError;
import io.poyang.raft.client.GroupMembers;
import io.poyang.raft.client.GroupStatus;
import io.poyang.raft.client.NodeStatus;
import io.poyang.raft.client.RaftAdminException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** AdminClient against in-process clusters over real sockets: status, transfer, membership, groups and nodes. */
class AdminClientTest {

    @TempDir
    Path dir;

    private static final int[] NONE = new int[0];

    private static AdminClient admin(RaftCluster c, int... nodes) {
        AdminClientConfig cfg = new AdminClientConfig();
        for (int n : nodes) {
            cfg.node(n, c.adminAddress(n));
        }
        AdminClient a = new AdminClient(cfg);
        a.start();
        return a;
    }

    private static RaftAdminException refused(AdminError expected, Runnable command) {
        RaftAdminException e = assertThrows(RaftAdminException.class, command::run);
        assertEquals(expected, e.error(), e.getMessage());
        return e;
    }

    private static GroupStatus.Follower follower(GroupStatus s, int node) {
        for (GroupStatus.Follower f : s.followers()) {
            if (f.nodeId() == node) {
                return f;
            }
        }
        throw new AssertionError("node " + node + " is not among the followers of " + s);
    }

    @Test
    void statusOfNodesAndGroupsWithLagPerFollower() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            int leader = c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            NodeStatus ns = admin.nodeStatus(2);
            assertEquals(2, ns.nodeId());
            assertArrayEquals(new int[]{1}, ns.groupIds());
            Map<Integer, String> nodes = admin.listNodes(2);
            for (int n = 1; n <= 3; n++) {
                assertEquals(c.adminAddress(n), nodes.get(n), "node 2's address of node " + n);
            }

            GroupStatus ls = admin.leaderStatus(1, 10_000);
            assertEquals(leader, ls.nodeId());
            assertEquals(RaftRole.LEADER, ls.role());
            assertEquals(leader, ls.leaderId());
            assertArrayEquals(new int[]{1, 2, 3}, ls.voters());
            assertFalse(ls.isJoint());
            assertTrue(ls.commitIndex() >= 100 && ls.lastApplied() >= 100 && ls.persistedIndex() >= 100, ls.toString());
            assertEquals(2, ls.followers().size());

            // a follower cut off falls behind: its lag shows on the leader, then goes back to 0
            int lagging = leader % 3 + 1;
            c.faults.isolate(lagging);
            for (long v = 101; v <= 150; v++) {
                c.write(1, v);
            }
            GroupStatus behind = admin.leaderStatus(1, 10_000);
            assertTrue(follower(behind, lagging).lag() >= 50, behind.toString());
            GroupStatus onLagging = admin.groupStatus(lagging, 1);
            assertEquals(RaftRole.FOLLOWER, onLagging.role());
            assertTrue(onLagging.followers().isEmpty(), "only the leader reports followers");
            assertTrue(onLagging.lastApplied() < behind.lastApplied());
            c.faults.heal();
            RaftCluster.waitFor("the lagging follower to catch up", () -> {
                GroupStatus s = admin.leaderStatus(1, 10_000);
                return follower(s, lagging).lag() == 0 && follower(s, 6 - lagging - s.nodeId()).lag() == 0;
            });
            assertEquals(150, c.checkIdentical(1).length);

            // typed errors
            refused(AdminError.NO_SUCH_GROUP, () -> admin.groupStatus(1, 99));
            assertThrows(IllegalArgumentException.class, () -> admin.nodeStatus(9));
        }
    }

    @Test
    void leaderTransferUnderWrites() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            c.waitForLeader(1);
            LoadGenerator load = new LoadGenerator(c, 1, 50, 1_000_000);
            load.awaitAcknowledged(300);
            for (int round = 0; round < 4; round++) {
                int leader = c.waitForLeader(1);
                int target = leader % 3 + 1;
                admin.transferLeader(1, target, 10_000);
                assertEquals(target, c.waitForLeader(1), "round " + round);
                assertEquals(target, admin.findLeader(1));
                // a retried transfer to the node that leads now is done at once
                admin.transferLeader(1, target, 10_000);
                load.awaitAcknowledged(load.acknowledgedCount() + 200);
            }
            load.close();
            refused(AdminError.BAD_ARGUMENT, () -> admin.transferLeader(1, 7, 5_000));
            load.checkApplied(c.checkIdentical(1), "");
        }
    }

    @Test
    void aNodeJoinsAsObserverIsPromotedAndAnotherLeavesThroughTheAdminClient() {
        try (RaftCluster c = new RaftCluster(dir, 4, new int[]{1}, null)) {
            c.setMembers(1, 1, 2, 3);
            c.start();
            c.waitForLeader(1);
            try (AdminClient admin = admin(c, 1, 2, 3)) {
                LoadGenerator load = new LoadGenerator(c, 1, 20, 1_000_000);
                load.awaitAcknowledged(200);
                admin.setNodeAddress(4, c.adminAddress(4));
                for (int n = 1; n <= 4; n++) {
                    admin.addNode(n, 4, c.adminAddress(4));   // idempotent: the harness told them already
                }
                // one address cannot serve two ids (that node's votes and acks would count twice)
                refused(AdminError.BAD_ARGUMENT, () -> admin.addNode(1, 5, c.adminAddress(4)));
                refused(AdminError.BAD_ARGUMENT, () -> admin.addNode(1, 5, c.adminAddress(1)));
                refused(AdminError.BAD_ARGUMENT, () -> admin.addNode(1, 3, c.adminAddress(2)));
                assertEquals(c.adminAddress(3), c.server(1).nodeAddresses().get(3), "a refused change changed nothing");
                admin.addGroup(4, 1, new int[]{1, 2, 3}, NONE);
                admin.addGroup(4, 1, new int[]{1, 2, 3}, NONE);   // idempotent

                // node 4 as an observer
                GroupMembers joint = admin.prepareMembers(1, new int[]{1, 2, 3}, new int[]{4}, 20_000);
                assertEquals(admin.prepareMembers(1, new int[]{1, 2, 3}, new int[]{4}, 20_000), joint, "retried prepare");
                GroupMembers withObserver = admin.commitMembers(1, new int[]{1, 2, 3}, new int[]{4}, 20_000);
                assertEquals(new GroupMembers(new int[]{1, 2, 3}, false, null, new int[]{4}), withObserver);
                RaftCluster.waitFor("the observer to replicate", () -> {
                    GroupStatus s = admin.leaderStatus(1, 10_000);
                    return s.followers().stream().anyMatch(f -> f.nodeId() == 4 && f.isObserver() && f.matchIndex() > 0);
                });

                // a different change while one is prepared is refused; the prepared one aborted
                admin.prepareMembers(1, new int[]{1, 2, 3, 4}, NONE, 20_000);
                refused(AdminError.CONFLICT, () -> admin.prepareMembers(1, new int[]{1, 2}, NONE, 20_000));
                refused(AdminError.CONFLICT, () -> admin.commitMembers(1, new int[]{1, 2}, NONE, 20_000));
                assertEquals(withObserver, admin.abortMembers(1, 20_000));
                assertEquals(withObserver, admin.abortMembers(1, 20_000), "retried abort");
                refused(AdminError.CONFLICT, () -> admin.commitMembers(1, new int[]{1, 2, 3, 4}, NONE, 20_000));

                // promotion, then node 1 (maybe the leader) leaves
                admin.prepareMembers(1, new int[]{1, 2, 3, 4}, NONE, 20_000);
                GroupMembers four = admin.commitMembers(1, new int[]{1, 2, 3, 4}, NONE, 20_000);
                assertArrayEquals(new int[]{1, 2, 3, 4}, four.voters());
                admin.prepareMembers(1, new int[]{2, 3, 4}, NONE, 20_000);
                GroupMembers three = admin.commitMembers(1, new int[]{2, 3, 4}, NONE, 20_000);
                assertArrayEquals(new int[]{2, 3, 4}, three.voters());
                load.awaitAcknowledged(load.acknowledgedCount() + 200);
                load.close();

                // node 1 is still in group 1's configuration on itself until the group is removed there
                refused(AdminError.NODE_IN_USE, () -> admin.removeNode(2, 4));
                admin.removeGroup(1, 1, true);
                admin.removeGroup(1, 1, true);   // idempotent
                assertFalse(Files.exists(dir.resolve("node-1").resolve("group-1")), "group 1's data on node 1");
                assertArrayEquals(NONE, admin.nodeStatus(1).groupIds());
                RaftCluster.waitFor("the others to have the new configuration", () -> {
                    for (int n = 2; n <= 4; n++) {
                        if (c.group(n, 1).members().contains(1)) {
                            return false;
                        }
                    }
                    return true;
                });
                for (int n = 2; n <= 4; n++) {
                    admin.removeNode(n, 1);
                    assertFalse(admin.listNodes(n).containsKey(1), "node " + n + " still knows node 1");
                }
                GroupStatus end = admin.leaderStatus(1, 10_000);
                assertArrayEquals(new int[]{2, 3, 4}, end.voters());
                c.write(1, 7);
                load.checkApplied(c.checkIdentical(1), "");
            }
        }
    }

    @Test
    void badRequestsAreRefusedWithTypedErrors() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            c.waitForLeader(1);
            RaftAdminException e = refused(AdminError.BAD_ARGUMENT,
                    () -> admin.prepareMembers(1, new int[]{1, 2, 2}, NONE, 5_000));
            assertTrue(e.getMessage().contains("listed twice"), e.getMessage());
            refused(AdminError.BAD_ARGUMENT, () -> admin.prepareMembers(1, new int[]{1, 2}, new int[]{2}, 5_000));
            refused(AdminError.BAD_ARGUMENT, () -> admin.prepareMembers(1, NONE, NONE, 5_000));
            e = refused(AdminError.UNKNOWN_NODE, () -> admin.prepareMembers(1, new int[]{1, 2, 3, 8}, NONE, 5_000));
            assertTrue(e.getMessage().contains("node 8"), e.getMessage());
            refused(AdminError.CONFLICT, () -> admin.commitMembers(1, new int[]{1, 2}, NONE, 5_000));
            refused(AdminError.BAD_ARGUMENT, () -> admin.addNode(1, 5, "no-port"));
            refused(AdminError.BAD_ARGUMENT, () -> admin.removeNode(1, 1));
            refused(AdminError.NODE_IN_USE, () -> admin.removeNode(1, 2));
            refused(AdminError.UNKNOWN_NODE, () -> admin.addGroup(1, 5, new int[]{1, 9}, NONE));
            // the configuration did not move
            assertArrayEquals(new int[]{1, 2, 3}, admin.leaderStatus(1, 5_000).voters());
            // a node that is down cannot be reached (tried again until the request timeout)
            c.stopNode(3);
            AdminClientConfig quick = new AdminClientConfig().node(3, c.adminAddress(3));
            quick.requestTimeoutMillis = 1_000;
            try (AdminClient a = new AdminClient(quick)) {
                a.start();
                NetConnectionException nc = assertThrows(NetConnectionException.class, () -> a.nodeStatus(3));
                assertTrue(nc.getMessage().contains("node 3"), nc.getMessage());
            }
        }
    }

    @Test
    void aServerListThatNumbersTheNodesWronglyIsRefusedNotFollowed() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            c.waitForLeader(1);
            // nodes 2 and 3 listed as 1 and 2, as "h2,h3" without ids would number them
            AdminClientConfig misnumbered = new AdminClientConfig().node(1, c.adminAddress(2)).node(2, c.adminAddress(3));
            try (AdminClient a = new AdminClient(misnumbered)) {
                a.start();
                NodeIdMismatchException e = assertThrows(NodeIdMismatchException.class, () -> a.nodeStatus(1));
                assertEquals(1, e.listedId());
                assertEquals(2, e.answeredId());
                assertTrue(e.getMessage().contains("list the servers with their ids (2=" + c.adminAddress(2)),
                        e.getMessage());
                // a leader command fails with it too, instead of going to the machine the wrong id names
                assertThrows(NodeIdMismatchException.class, () -> a.findLeader(1));
                assertThrows(NodeIdMismatchException.class, () -> a.leaderStatus(1, 5_000));
            }
            // listed with their ids, the same addresses work
            AdminClientConfig right = new AdminClientConfig().node(2, c.adminAddress(2)).node(3, c.adminAddress(3));
            try (AdminClient a = new AdminClient(right)) {
                a.start();
                assertEquals(2, a.nodeStatus(2).nodeId());
            }
        }
    }

    @Test
    void aServerWithoutAStateMachineFactoryRefusesToAddAGroup() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1)) {
            c.runtimeGroups = false;
            c.start();
            try (AdminClient admin = admin(c, 1)) {
                RaftAdminException e = refused(AdminError.UNSUPPORTED,
                        () -> admin.addGroup(1, 5, new int[]{1, 2, 3}, NONE));
                assertTrue(e.getMessage().contains("stateMachineFactory"), e.getMessage());
            }
        }
    }

    @Test
    void aGroupIsAddedUsedAndRemovedOnARunningThreeNodeCluster() {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            c.waitForLeader(1);
            for (int n = 1; n <= 3; n++) {
                admin.addGroup(n, 7, new int[]{1, 2, 3}, NONE);
                assertArrayEquals(new int[]{1, 7}, admin.nodeStatus(n).groupIds());
            }
            // the new group elects a leader: leaderStatus waits for one (within its timeout)
            GroupStatus first = admin.leaderStatus(7, 10_000);
            assertEquals(RaftRole.LEADER, first.role());
            assertEquals(first.nodeId(), admin.findLeader(7));
            for (long v = 1; v <= 200; v++) {
                c.write(7, v);
                c.write(1, 1_000 + v);
            }
            assertEquals(200, c.checkIdentical(7).length);
            assertEquals(200, c.checkIdentical(1).length);
            GroupStatus s = admin.leaderStatus(7, 10_000);
            assertTrue(s.lastApplied() >= 200, s.toString());
            admin.transferLeader(7, s.nodeId() % 3 + 1, 10_000);

            for (int n = 1; n <= 3; n++) {
                admin.removeGroup(n, 7, true);
                assertArrayEquals(new int[]{1}, admin.nodeStatus(n).groupIds());
                assertFalse(Files.exists(dir.resolve("node-" + n).resolve("group-7")), "group 7's data on node " + n);
                refused(AdminError.NO_SUCH_GROUP, () -> admin.groupStatus(1, 7));
            }
            // group 1 went on unharmed
            c.write(1, 5_000);
            assertEquals(201, c.checkIdentical(1).length);
            for (int n = 1; n <= 3; n++) {
                RaftGroup g = c.group(n, 1);
                assertTrue(g.failure() == null, "group 1 failed on node " + n);
            }
        }
    }

    @Test
    void aGroupRestartedThroughTheAdminClientRecoversItsFilesAndCatchesUp() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            int leader = c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            RaftGroup old = c.group(leader, 1);
            admin.restartGroup(leader, 1);
            RaftGroup fresh = c.group(leader, 1);
            assertTrue(fresh != old, "the group on node " + leader + " was not replaced");
            // the new group (with a new state machine) applies the entries again, from its log and the leader's
            RaftCluster.waitFor("the restarted group to apply the first 100 writes", () -> fresh.lastApplied() >= 100);
            for (long v = 101; v <= 150; v++) {
                c.write(1, v);
            }
            assertEquals(150, c.checkIdentical(1).length);
            RaftAdminException e = refused(AdminError.NO_SUCH_GROUP, () -> admin.restartGroup(leader, 7));
            assertTrue(e.getMessage().contains("does not host raft group 7"), e.getMessage());
        }
    }

    @Test
    void aGroupThatFailedIsShownByStatusAndRefusesChanges() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start(); AdminClient admin = admin(c, 1, 2, 3)) {
            c.waitForLeader(1);
            c.write(1, 1);
            int leader = admin.leaderStatus(1, 10_000).nodeId();   // the client now knows the leader
            // the state machine throws on every node that applies this entry: the group fails there
            // (a node that never learns the entry committed stays healthy, leaderless)
            c.group(leader, 1).submit(0, TestStateMachine.body(TestStateMachine.POISON), 5_000);
            RaftCluster.waitFor("the group to fail on the leader", () -> c.group(leader, 1).failure() != null);
            GroupStatus s = admin.groupStatus(leader, 1);
            assertTrue(s.failure().contains("poison"), s.toString());
            assertTrue(s.role() != RaftRole.LEADER, s.toString());
            // a command for the group's leader reaches the node that led it: refused, saying what to do
            RaftAdminException e = refused(AdminError.GROUP_FAILED,
                    () -> admin.transferLeader(1, leader % 3 + 1, 2_000));
            assertTrue(e.getMessage().contains("restart"), e.getMessage());
            // the client looks for the leader again after a refusal, so the last refusal may come from
            // another node the poison reached (one that applied it and then named itself or was named
            // leader): whichever node refused, the group failed there
            assertTrue(e.nodeId() >= 1 && e.nodeId() <= 3, e.getMessage());
            assertTrue(c.group(e.nodeId(), 1).failure() != null,
                    "node " + e.nodeId() + " refused GROUP_FAILED but its group has not failed");
        }
    }
}
