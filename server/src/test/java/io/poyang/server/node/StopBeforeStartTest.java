package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An embedding's cleanup may stop a node it never started (its start failed earlier, say). */
class StopBeforeStartTest {

    @TempDir
    Path tmp;

    @Test
    void stopBeforeStartDoesNothingAndTheNodeStillStarts() throws Exception {
        PoyangNode node = InProcessNodes.singleNode(tmp.resolve("config.properties"), tmp.resolve("data"),
                java.util.Collections.emptyMap());
        node.stop();
        assertFalse(node.isStopped(), "nothing ran, so nothing was stopped");
        node.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + node.servicePort()))) {
            kv.start();
            kv.put("k", "v");
            assertEquals("v", kv.getString("k"));
        } finally {
            node.stop();
        }
        assertTrue(node.isStopped());
    }
}
