package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node listening on every interface (host = 0.0.0.0) is known by its servers.properties address. */
class WildcardHostTest {

    @TempDir
    Path tmp;

    @Test
    void aNodeOnTheWildcardHostReportsItsServersAddressNotTheWildcard() throws Exception {
        PoyangNode node = InProcessNodes.singleNode(tmp.resolve("config.properties"), tmp.resolve("data"),
                java.util.Collections.singletonMap("host", "0.0.0.0"));
        node.start();
        try {
            String self = node.raftServer().selfAddress();
            assertTrue(self.startsWith("127.0.0.1:"), "its own address: " + self);
            assertEquals(node.raftServer().replicationPort(), Integer.parseInt(self.substring(self.indexOf(':') + 1)));
            String ready = node.readyLine();
            assertTrue(ready.contains("service 127.0.0.1:" + node.servicePort() + ","), ready);
            assertTrue(!ready.contains("0.0.0.0"), "the ready line names no wildcard address: " + ready);
            try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + node.servicePort()))) {
                kv.start();
                kv.put("k", "v");
                assertEquals("v", kv.getString("k"));
            }
        } finally {
            node.stop();
        }
    }
}
