package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the builder refuses before anything starts, naming the node at fault. */
class RaftServerConfigTest {

    @TempDir
    Path dir;

    private RaftServerConfig.Builder oneGroupOnTwoNodes() {
        return RaftServer.builder().nodeId(1).dataDir(dir).raftConfig(RaftCluster.testConfig())
                .group(1, TestStateMachine::new, 1, 2)
                .node(1, "127.0.0.1:0");
    }

    @Test
    void aMalformedAddressOrANonPositiveIdOfAnotherNodeIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> oneGroupOnTwoNodes().node(2, "h:94x1").buildConfig());
        assertTrue(e.getMessage().startsWith("the replication address of node 2: "), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> oneGroupOnTwoNodes().node(2, "h2").buildConfig());
        assertTrue(e.getMessage().contains("node 2") && e.getMessage().contains("host:port"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> oneGroupOnTwoNodes().node(2, "h2:9431").node(0, "h0:9431").buildConfig());
        assertEquals("node ids are positive: node(0, \"h0:9431\")", e.getMessage());
    }

    @Test
    void aPreferredLeaderMustBeAVotingMemberOfAListedGroup() {
        RaftServerConfig ok = oneGroupOnTwoNodes().node(2, "h2:9431").preferredLeader(1, 2).buildConfig();
        assertEquals(2, ok.groups().get(0).preferredLeaderId());
        assertEquals(0, oneGroupOnTwoNodes().node(2, "h2:9431").buildConfig().groups().get(0).preferredLeaderId());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> oneGroupOnTwoNodes().node(2, "h2:9431").node(3, "h3:9431").preferredLeader(1, 3).buildConfig());
        assertEquals("the preferred leader of group 1, node 3, is not one of its members [1, 2]; only a voting member"
                + " can lead", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> oneGroupOnTwoNodes().preferredLeader(7, 1));
        assertTrue(e.getMessage().contains("group 7 is not listed"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> oneGroupOnTwoNodes().preferredLeader(1, -1));
        assertTrue(e.getMessage().contains("a node id, or 0 for none"), e.getMessage());
    }

    @Test
    void aRunningServerRefusesAMalformedAddressAndKeepsTheOldOne() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            String before = c.server(1).nodeAddresses().get(2);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> c.server(1).setNodeAddress(2, "h:94x1"));
            assertTrue(e.getMessage().startsWith("the replication address of node 2: "), e.getMessage());
            assertEquals(before, c.server(1).nodeAddresses().get(2));
            c.write(1, 1);
            assertEquals(1, c.checkIdentical(1).length);
        }
    }

    @Test
    void portZeroStandsForAnAddressLearnedLater() {
        RaftServerConfig c = oneGroupOnTwoNodes().node(2, "127.0.0.1:0").buildConfig();
        assertEquals("127.0.0.1:0", c.nodes().get(2));
    }
}
