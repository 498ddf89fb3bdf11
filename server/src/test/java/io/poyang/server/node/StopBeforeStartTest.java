package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;
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
        Path conf = tmp.resolve("config.properties");
        PropertiesFile p = PropertiesFile.empty(conf);
        p.set("nodeId", "1");
        p.set("replicationPort", "0");
        p.set("servicePort", "0");
        p.set("metricsPort", "-1");
        p.set("dataDir", tmp.resolve("data").toString());
        p.writeAtomically();
        PoyangNode node = new PoyangNode(NodeConfig.load(conf), ServersConfig.singleNode(1, "127.0.0.1:0"), null);
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
