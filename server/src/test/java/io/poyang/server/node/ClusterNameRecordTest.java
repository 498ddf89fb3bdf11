package io.poyang.server.node;

import io.poyang.server.config.PropertiesFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node records its cluster's name in its data directory, and a later start whose config names
 * another cluster (or none) is refused before it opens a port: a config copied from another cluster
 * cannot make the node join that cluster with this node's data.
 */
class ClusterNameRecordTest {

    @TempDir
    Path tmp;

    @Test
    void aNodeRestartedWithAnotherClusterNameIsRefusedAndTheRightNameStillStarts() throws Exception {
        Path data = tmp.resolve("data");
        InProcessNodes.runAndStop(node(data, "prod"));
        assertEquals("prod", PropertiesFile.read(data.resolve(DataDir.NODE_FILE)).get("clusterName"));

        NodeStartException other = assertThrows(NodeStartException.class, () -> node(data, "staging").start());
        assertTrue(other.getMessage().contains("cluster 'prod'") && other.getMessage().contains("'staging'"),
                other.getMessage());
        NodeStartException none = assertThrows(NodeStartException.class, () -> node(data, null).start());
        assertTrue(none.getMessage().contains("names no cluster"), none.getMessage());

        InProcessNodes.runAndStop(node(data, "prod"));
    }

    private PoyangNode node(Path data, String clusterName) throws Exception {
        return InProcessNodes.singleNode(tmp.resolve("config.properties"), data, clusterName == null
                ? Collections.emptyMap() : Collections.singletonMap("clusterName", clusterName));
    }
}
