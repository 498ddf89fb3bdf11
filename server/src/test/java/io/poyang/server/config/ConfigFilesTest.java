package io.poyang.server.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** config.properties and servers.properties: parsing, the errors, and servers.properties rewritten in place. */
class ConfigFilesTest {

    @TempDir
    Path tmp;

    private Path file(String name, String text) throws Exception {
        Path p = tmp.resolve(name);
        Files.write(p, text.getBytes(StandardCharsets.UTF_8));
        return p;
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        NodeConfig c = NodeConfig.defaults();
        assertEquals(1, c.nodeId);
        assertEquals("127.0.0.1", c.host);
        assertEquals(9431, c.replicationPort);
        assertEquals(9432, c.servicePort);
        assertEquals(9433, c.metricsPort);
        assertEquals("data", c.dataDir.normalize().toString());
        assertEquals(1000, c.raft.electionTimeoutMillis());
        assertTrue(c.raft.syncForce());
    }

    @Test
    void everySampleConfigurationLoads() throws Exception {
        Path samples = java.nio.file.Paths.get("conf");
        for (String dir : new String[]{"single", "three-nodes/node1", "three-nodes/node2", "three-nodes/node3"}) {
            NodeConfig c = NodeConfig.load(samples.resolve(dir).resolve("config.properties"));
            ServersConfig s = ServersConfig.load(samples.resolve(dir).resolve("servers.properties"));
            assertEquals(c.host + ":" + c.replicationPort, s.nodes().get(c.nodeId), dir);
            assertEquals(1, s.groupsOf(c.nodeId).size(), dir);
        }
    }

    @Test
    void valuesAreCheckedWithKeyLineAndReason() throws Exception {
        ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c1",
                "nodeId = 1\n# comment\nheartbeatIntervalMillis = 2000\n")));
        assertEquals("heartbeatIntervalMillis", e.key());
        assertTrue(e.getMessage().contains("c1:3: "), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c2", "nodeId = 1\nsyncForce = yes\n")));
        assertTrue(e.getMessage().endsWith("syncForce = 'yes': must be true or false"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c3", "host = 127.0.0.1\n")));
        assertTrue(e.getMessage().contains("nodeId is missing"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c4", "nodeId = 1\nnodeId = 2\n")));
        assertTrue(e.getMessage().contains("c4:2: nodeId is set twice (also on line 1)"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c5", "nodeId = 1\nservicePort = 9431\n")));
        assertTrue(e.getMessage().contains("the same port as replicationPort"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c6", "nodeId\n")));
        assertTrue(e.getMessage().contains("c6:1: expected 'key = value'"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("c7", "nodeId = 1\ndrainTimeoutMillis = 60000\n")));
        assertTrue(e.getMessage().contains("must be shorter than shutdownTimeoutMillis"), e.getMessage());
        assertEquals(" (did you mean 'snapshotsToKeep'?)", NodeConfig.suggestion("snapshotToKeep"));
        assertEquals("", NodeConfig.suggestion("color"));
    }

    @Test
    void theJournalAndBatchAppendsAreAutoByDefaultAndTakeTrueFalseOrAuto() throws Exception {
        NodeConfig d = NodeConfig.defaults();
        assertEquals(AutoSwitch.AUTO, d.logJournal);
        assertEquals(AutoSwitch.AUTO, d.batchAppends);
        assertFalse(d.logJournal(1), "one group: no journal");
        assertFalse(d.batchAppends(1), "one group: no batches");
        assertTrue(d.logJournal(2), "two groups: the journal");
        assertTrue(d.batchAppends(4), "four groups: batches");
        NodeConfig noSync = NodeConfig.load(file("b5", "nodeId = 1\nsyncForce = false\n"));
        assertFalse(noSync.logJournal(4), "no fsyncs to share: no journal");
        assertFalse(noSync.batchAppends(4), "batching follows the journal");
        NodeConfig journal = NodeConfig.load(file("b0", "nodeId = 1\nlogJournal = true\n"));
        assertTrue(journal.logJournal(1));
        assertTrue(journal.batchAppends(1), "auto batchAppends follows the journal");
        NodeConfig on = NodeConfig.load(file("b1", "nodeId = 1\nlogJournal = TRUE\nbatchAppends = true\n"));
        assertEquals(AutoSwitch.ON, on.batchAppends);
        assertEquals(AutoSwitch.ON, on.logJournal);
        NodeConfig off = NodeConfig.load(file("b2", "nodeId = 1\nbatchAppends = false\nlogJournal = false\n"));
        assertFalse(off.batchAppends(8));
        assertFalse(off.logJournal(8));
        assertEquals(AutoSwitch.AUTO, NodeConfig.load(file("b4", "nodeId = 1\nlogJournal = Auto\n")).logJournal);
        ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("b3", "nodeId = 1\nbatchAppends = on\n")));
        assertEquals("batchAppends", e.key());
        assertTrue(e.getMessage().endsWith("batchAppends = 'on': must be true, false or auto"), e.getMessage());
    }

    @Test
    void recycledSegmentsDefaultsToTheLogStoresAndIsChecked() throws Exception {
        assertEquals(io.poyang.raft.store.LogStoreConfig.DEFAULT_RECYCLED_SEGMENTS, NodeConfig.defaults().raft.recycledSegments());
        assertEquals(0, NodeConfig.load(file("r0", "nodeId = 1\nrecycledSegments = 0\n")).raft.recycledSegments());
        assertEquals(16, NodeConfig.load(file("r1", "nodeId = 1\nrecycledSegments = 16\n")).raft.recycledSegments());
        for (String bad : new String[] {"-1", "1025", "four"}) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> NodeConfig.load(file("r2", "nodeId = 1\nrecycledSegments = " + bad + "\n")), bad);
            assertEquals("recycledSegments", e.key());
            assertTrue(e.getMessage().contains("r2:2: recycledSegments"), e.getMessage());
        }
    }

    /** Before, the node had no keys for the journal's shape: every node with it zero-filled 8 x 16 MiB. */
    @Test
    void theLogJournalsShapeHasKeysWithTheRaftServersDefaultsAndCheckedBounds() throws Exception {
        NodeConfig d = NodeConfig.defaults();
        assertEquals(io.poyang.raft.server.RaftServerConfig.DEFAULT_LOG_JOURNAL_FILES, d.logJournalFiles);
        assertEquals(io.poyang.raft.server.RaftServerConfig.DEFAULT_LOG_JOURNAL_FILE_BYTES, (long) d.logJournalFileMiB << 20);
        NodeConfig small = NodeConfig.load(file("j0", "nodeId = 1\nlogJournal = true\nlogJournalFiles = 3\n"
                + "logJournalFileMiB = 4\n"));
        assertEquals(3, small.logJournalFiles);
        assertEquals(4, small.logJournalFileMiB);
        String[][] bad = {
                {"logJournalFiles = 2", "at least 3 files"},
                {"logJournalFiles = 0", "at least 3 files"},
                {"logJournalFiles = 1025", "out of range"},
                {"logJournalFileMiB = 3", "at least 4 MiB"},
                {"logJournalFileMiB = 1025", "out of range"},
                {"logJournalFileMiB = 16m", "not a whole number"},
        };
        for (String[] b : bad) {
            String key = b[0].substring(0, b[0].indexOf(' '));
            ConfigException e = assertThrows(ConfigException.class,
                    () -> NodeConfig.load(file("j1", "nodeId = 1\nlogJournal = true\n" + b[0] + "\n")), b[0]);
            assertEquals(key, e.key());
            assertTrue(e.getMessage().contains("j1:3: " + key) && e.getMessage().contains(b[1]), e.getMessage());
        }
    }

    @Test
    void theClusterNameIsOptionalAndChecked() throws Exception {
        assertEquals(null, NodeConfig.defaults().clusterName);
        assertEquals(null, NodeConfig.load(file("n0", "nodeId = 1\n")).clusterName);
        assertEquals("prod-eu", NodeConfig.load(file("n1", "nodeId = 1\nclusterName = prod-eu\n")).clusterName);
        ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.load(file("n2",
                "nodeId = 1\nclusterName = caf\u00e9\n")));
        assertEquals("clusterName", e.key());
        assertTrue(e.getMessage().contains("printable ASCII"), e.getMessage());
    }

    @Test
    void serversFileIsChecked() throws Exception {
        ConfigException e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s1",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.1.observers = 1\n")));
        assertTrue(e.getMessage().contains("node 1 is also a voting member"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s2", "node.x = h:1\n")));
        assertTrue(e.getMessage().contains("node ids are positive integers"), e.getMessage());
        assertTrue(e.getMessage().contains("found 'x'"), e.getMessage());
        // node.01 and node.+1 would be node 1 a second time, silently replacing the first line
        for (String dup : new String[]{"node.01", "node.+1"}) {
            e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("dup",
                    "node.1 = h:1\n" + dup + " = h:2\n")));
            assertTrue(e.getMessage().contains("found '" + dup.substring(5) + "'"), e.getMessage());
        }
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("dupg",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.01.members = 1\n")));
        assertTrue(e.getMessage().contains("group ids are positive integers"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s3", "node.1 = h\n")));
        assertTrue(e.getMessage().contains("expected host:port"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s3b", "node.1 = h:1,g:2\n")));
        assertTrue(e.getMessage().contains("is not one host:port"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s4", "node.1 = h:1\nnode.2 = h:1\n")));
        assertTrue(e.getMessage().contains("another node has the same address"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s5", "node.1 = h:1\ngroup.1.voters = 1\n")));
        assertTrue(e.getMessage().contains("unknown key 'group.1.voters'"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s6", "group.1.members = 1\n")));
        assertTrue(e.getMessage().contains("no nodes; list every node"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("s7", "node.1 = h:1\ngroup.1.members = 1,2\n")));
        assertTrue(e.getMessage().contains("s7:2: group.1.members = '1,2': node 2 has no node.2 line"), e.getMessage());
    }

    @Test
    void nonMembersRunTheGroupWithoutBeingInItsConfiguration() throws Exception {
        ServersConfig s = ServersConfig.load(file("nm", "node.1 = h:1\nnode.2 = h:2\nnode.3 = h:3\n"
                + "group.1.members = 1,2\ngroup.1.nonMembers = 3\n"));
        ServersConfig.Group g = s.groups().get(1);
        assertArrayEquals(new int[]{1, 2}, g.members);
        assertArrayEquals(new int[]{3}, g.nonMembers);
        assertTrue(g.hosts(3));
        assertFalse(g.isMember(3));
        assertEquals(1, s.groupsOf(3).size(), "node 3 runs group 1");
        ConfigException e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("nm2",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.1.nonMembers = 1\n")));
        assertTrue(e.getMessage().contains("node 1 is also a member or an observer"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("nm3",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.1.nonMembers = 4\n")));
        assertTrue(e.getMessage().contains("node 4 has no node.4 line"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("nm4",
                "node.1 = h:1\nnode.2 = h:2\ngroup.1.nonMembers = 2\n")));
        assertTrue(e.getMessage().contains("group 1 has nonMembers but no group.1.members line"), e.getMessage());
        // written back: the line goes when the list empties
        Path f = file("nm5", "node.1 = h:1\nnode.2 = h:2\ngroup.1.members = 1\ngroup.1.nonMembers = 2\n");
        Map<Integer, ServersConfig.Group> groups = new TreeMap<>();
        groups.put(1, new ServersConfig.Group(1, new int[]{1, 2}, new int[0]));
        new ServersConfig(ServersConfig.load(f).nodes(), groups).writeTo(f);
        assertEquals("node.1 = h:1\nnode.2 = h:2\ngroup.1.members = 1,2\n",
                new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
    }

    @Test
    void aPreferredLeaderIsReadCheckedAndWrittenBack() throws Exception {
        ServersConfig s = ServersConfig.load(file("pl1", "node.1 = h:1\nnode.2 = h:2\nnode.3 = h:3\n"
                + "group.1.members = 1,2\ngroup.1.observers = 3\ngroup.1.preferredLeader = 2\ngroup.2.members = 1\n"));
        assertEquals(2, s.groups().get(1).preferredLeader);
        assertEquals(0, s.groups().get(2).preferredLeader, "none when the line is missing");
        ConfigException e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("pl2",
                "node.1 = h:1\nnode.3 = h:3\ngroup.1.members = 1\ngroup.1.observers = 3\ngroup.1.preferredLeader = 3\n")));
        assertEquals("group.1.preferredLeader", e.key());
        assertTrue(e.getMessage().contains("pl2:5: ") && e.getMessage().contains("node 3 is not one of the group's"
                + " members (group.1.members = 1); only a voting member can lead"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("pl3",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.1.preferredLeader = one\n")));
        assertTrue(e.getMessage().contains("node ids are positive integers"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ServersConfig.load(file("pl4",
                "node.1 = h:1\ngroup.1.members = 1\ngroup.2.preferredLeader = 1\n")));
        assertTrue(e.getMessage().contains("group 2 has preferredLeader but no group.2.members line"), e.getMessage());
        // written back in place; dropped when the group has none any more
        Path f = file("pl5", "node.1 = h:1\nnode.2 = h:2\n# prefer node 1\ngroup.1.preferredLeader = 1\n"
                + "group.1.members = 1,2\n");
        ServersConfig loaded = ServersConfig.load(f);
        Map<Integer, ServersConfig.Group> groups = new TreeMap<>(loaded.groups());
        groups.put(1, groups.get(1).withPreferredLeader(2));
        new ServersConfig(loaded.nodes(), groups).writeTo(f);
        assertEquals("node.1 = h:1\nnode.2 = h:2\n# prefer node 1\ngroup.1.preferredLeader = 2\ngroup.1.members = 1,2\n",
                new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
        assertEquals(new ServersConfig(loaded.nodes(), groups), ServersConfig.load(f));
        groups.put(1, groups.get(1).withPreferredLeader(0));
        new ServersConfig(loaded.nodes(), groups).writeTo(f);
        assertEquals("node.1 = h:1\nnode.2 = h:2\n# prefer node 1\ngroup.1.members = 1,2\n",
                new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
        assertFalse(groups.get(1).withNonMember(3).withPreferredLeader(2).equals(groups.get(1).withNonMember(3)));
        assertEquals(2, groups.get(1).withPreferredLeader(2).withNonMember(3).preferredLeader, "kept by withNonMember");
    }

    @Test
    void aRewriteKeepsCommentsAndOrderAndLeavesNoTempFile() throws Exception {
        Path f = file("servers.properties", "# the cluster\nnode.1 = h:1\n\n# old node\nnode.2 = h:2\n"
                + "# groups\ngroup.1.members = 1,2\n");
        ServersConfig s = ServersConfig.load(f);
        Map<Integer, String> nodes = new TreeMap<>(s.nodes());
        nodes.remove(2);
        nodes.put(3, "h:3");
        Map<Integer, ServersConfig.Group> groups = new TreeMap<>();
        groups.put(1, new ServersConfig.Group(1, new int[]{3, 1}, new int[0]));
        groups.put(2, new ServersConfig.Group(2, new int[]{1}, new int[]{3}));
        new ServersConfig(nodes, groups).writeTo(f);
        assertEquals("# the cluster\nnode.1 = h:1\n\n# old node\n# groups\ngroup.1.members = 1,3\nnode.3 = h:3\n"
                + "group.2.members = 1\ngroup.2.observers = 3\n", new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
        assertEquals(new ServersConfig(nodes, groups), ServersConfig.load(f));
        assertFalse(Files.exists(tmp.resolve("servers.properties.tmp")), "no temp file left");
    }

    @Test
    void atomicWriteReplacesTheWholeFileOverALeftoverTempFile() throws Exception {
        Path f = file("x.properties", "a = 1\nc = 3\n");
        // what a crash in the middle of an earlier rewrite leaves: a partial temp file beside it
        Files.write(tmp.resolve("x.properties.tmp"), "b = 2\nc = garbage from an older".getBytes(StandardCharsets.UTF_8));
        PropertiesFile.writeAtomically(f, "b = 2\n".getBytes(StandardCharsets.UTF_8));
        assertArrayEquals("b = 2\n".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(f));
        assertFalse(Files.exists(tmp.resolve("x.properties.tmp")), "no temp file left");
    }

    @Test
    void aRewriteThatFailsLeavesTheOldContentWhole() throws Exception {
        Path f = file("y.properties", "a = 1\n");
        // the temp file cannot be created: a directory holds its name
        Files.createDirectory(tmp.resolve("y.properties.tmp"));
        assertThrows(IOException.class,
                () -> PropertiesFile.writeAtomically(f, "b = 2\n".getBytes(StandardCharsets.UTF_8)));
        assertArrayEquals("a = 1\n".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(f));
    }

    @Test
    void aByteOrderMarkBeforeTheFirstKeyIsNotPartOfIt() throws Exception {
        ServersConfig s = ServersConfig.load(file("bom", "\uFEFFnode.1 = h:1\ngroup.1.members = 1\n"));
        assertEquals(java.util.Collections.singletonMap(1, "h:1"), s.nodes());
    }

    @Test
    void aCommentAfterAValueIsNamedAsTheCause() throws Exception {
        // as docs/operations.md writes its servers.properties example
        Path servers = file("servers-inline.properties", "node.1 = 127.0.0.1:9431          # every node: replication"
                + " address\ngroup.1.members = 1\n");
        ConfigException e = assertThrows(ConfigException.class, () -> ServersConfig.load(servers));
        assertTrue(e.getMessage().contains(":1: node.1 = "), e.getMessage());
        assertTrue(e.getMessage().contains("put comments on lines of their own"), e.getMessage());
        Path config = file("config-inline.properties", "nodeId = 1   # this node\n");
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(config));
        assertTrue(e.getMessage().contains("not a whole number (a '#' after a value is part of the value"),
                e.getMessage());
        // a value that merely holds a '#' gets no such note
        Path plain = file("config-plain.properties", "nodeId = 1#2\n");
        e = assertThrows(ConfigException.class, () -> NodeConfig.load(plain));
        assertFalse(e.getMessage().contains("comments"), e.getMessage());
    }
}
