package io.poyang.server.node;

import io.poyang.raft.server.RaftServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The raft server settings of config.properties reach the node's raft server. */
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
    void bothAreOffWhenTheConfigFileLeavesThemOut() throws Exception {
        try (InProcessNodes nodes = new InProcessNodes(dir, 1, Map.of())) {
            RaftServerConfig c = nodes.nodes().get(0).raftServer().config();
            assertFalse(c.logJournal(), "logJournal");
            assertFalse(c.batchAppends(), "batchAppends");
        }
    }
}
