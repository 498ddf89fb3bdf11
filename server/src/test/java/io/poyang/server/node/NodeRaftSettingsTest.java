package io.poyang.server.node;

import io.poyang.raft.server.RaftServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The raft server settings of config.properties reach the node's raft server; left out, the log
 * journal and batched appends are on for a node that starts with several groups, off with one.
 */
class NodeRaftSettingsTest {

    @TempDir
    Path dir;

    @Test
    void logJournalAndBatchAppendsFromTheConfigFileReachTheRaftServer() throws Exception {
        try (InProcessNodes nodes = new InProcessNodes(dir, 1, Map.of("logJournal", "true", "batchAppends", "true"))) {
            RaftServerConfig c = nodes.nodes().get(0).raftServer().config();
            assertTrue(c.logJournal(), "logJournal");
            assertTrue(c.batchAppends(), "batchAppends");
        }
    }

    @Test
    void theLogJournalsShapeFromTheConfigFileReachesTheRaftServerAndItsFiles() throws Exception {
        try (InProcessNodes nodes = new InProcessNodes(dir, 1, Map.of("logJournal", "true", "logJournalFiles", "3",
                "logJournalFileMiB", "4"))) {
            RaftServerConfig c = nodes.nodes().get(0).raftServer().config();
            assertEquals(3, c.logJournalFiles());
            assertEquals(4L << 20, c.logJournalFileBytes());
        }
        try (java.util.stream.Stream<Path> found = java.nio.file.Files.walk(dir)) {
            java.util.List<Path> journalFiles = found.filter(p -> p.getFileName().toString().startsWith("journal-"))
                    .collect(java.util.stream.Collectors.toList());
            assertEquals(3, journalFiles.size(), String.valueOf(journalFiles));
            for (Path p : journalFiles) {
                assertEquals(4L << 20, java.nio.file.Files.size(p), p.toString());
            }
        }
    }

    @Test
    void bothAreOffForANodeWithOneGroupWhenTheConfigFileLeavesThemOut() throws Exception {
        try (InProcessNodes nodes = new InProcessNodes(dir, 1, Map.of())) {
            RaftServerConfig c = nodes.nodes().get(0).raftServer().config();
            assertFalse(c.logJournal(), "logJournal");
            assertFalse(c.batchAppends(), "batchAppends");
        }
    }

    @Test
    void bothAreOnForANodeWithTwoGroupsWhenTheConfigFileLeavesThemOut() throws Exception {
        RaftServerConfig c = configOfTwoGroupNode(Map.of());
        assertTrue(c.logJournal(), "logJournal");
        assertTrue(c.batchAppends(), "batchAppends");
    }

    @Test
    void falseKeepsThemOffForANodeWithTwoGroups() throws Exception {
        RaftServerConfig c = configOfTwoGroupNode(Map.of("logJournal", "false"));
        assertFalse(c.logJournal(), "logJournal");
        assertFalse(c.batchAppends(), "batchAppends follows the journal");
        c = configOfTwoGroupNode(Map.of("batchAppends", "false"));
        assertTrue(c.logJournal(), "logJournal");
        assertFalse(c.batchAppends(), "batchAppends");
    }

    /** The raft server settings of a single node hosting groups 1 and 2, started and stopped. */
    private RaftServerConfig configOfTwoGroupNode(Map<String, String> settings) throws Exception {
        Path run = Files.createTempDirectory(dir, "run");
        Path confFile = run.resolve("config.properties");
        PropertiesFile p = PropertiesFile.empty(confFile);
        p.set("nodeId", "1");
        p.set("replicationPort", "0");
        p.set("servicePort", "0");
        p.set("metricsPort", "-1");
        p.set("dispatchers", "1");
        p.set("dataDir", run.resolve("data").toString());
        for (Map.Entry<String, String> s : settings.entrySet()) {
            p.set(s.getKey(), s.getValue());
        }
        p.writeAtomically();
        TreeMap<Integer, ServersConfig.Group> groups = new TreeMap<>();
        groups.put(1, new ServersConfig.Group(1, new int[]{1}, new int[0]));
        groups.put(2, new ServersConfig.Group(2, new int[]{1}, new int[0]));
        ServersConfig servers = new ServersConfig(new TreeMap<>(Map.of(1, "127.0.0.1:0")), groups);
        PoyangNode node = new PoyangNode(NodeConfig.load(confFile), servers, null);
        node.start();
        try {
            return node.raftServer().config();
        } finally {
            node.stop();
        }
    }
}
