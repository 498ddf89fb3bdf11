package io.poyang.server.node;

import io.poyang.server.Await;
import io.poyang.server.config.PropertiesFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code group.<id>.preferredLeader} in servers.properties: the group started from the file ends up
 * led by that node, and a preference changed at run time is what the node writes back.
 */
class PreferredLeaderNodeTest {

    @TempDir
    Path tmp;

    @Test
    void aGroupStartedFromServersPropertiesIsLedByItsPreferredNode() throws Exception {
        try (InProcessNodes cluster = new InProcessNodes(tmp, 3, Collections.emptyMap(), 3)) {
            PoyangNode third = cluster.nodes().get(2);
            Await.until("node 3 to lead group 1", 30_000, () -> third.raftServer().group(1).isLeader()
                    && cluster.nodes().get(0).raftServer().group(1).leaderId() == 3
                    && cluster.nodes().get(1).raftServer().group(1).leaderId() == 3);
            Path file = tmp.resolve("conf-1").resolve("servers.properties");
            assertEquals("3", PropertiesFile.read(file).get("group.1.preferredLeader"));
            // changed at run time on node 1: its file follows (the node's once-a-second sync)
            cluster.nodes().get(0).raftServer().group(1).setPreferredLeader(2);
            Await.until("node 1's servers.properties to prefer node 2", 30_000,
                    () -> "2".equals(PropertiesFile.read(file).get("group.1.preferredLeader")));
        }
    }
}
