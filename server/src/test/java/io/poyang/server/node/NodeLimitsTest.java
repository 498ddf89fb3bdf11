package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvWatch;
import io.poyang.dtkv.client.KvWatchListener;
import io.poyang.server.Await;
import io.poyang.server.config.ConfigException;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The limits config.properties sets beyond raft's: the group start bound and the watches per connection. */
class NodeLimitsTest {

    @TempDir
    Path dir;

    /** Records what a watch hears. */
    private static final class Recorder implements KvWatchListener {
        final List<String> changes = new CopyOnWriteArrayList<>();
        final List<KvException> errors = new CopyOnWriteArrayList<>();

        @Override
        public void onChange(String watchKey, KvNode node) {
            changes.add(node.key());
        }

        @Override
        public void onError(KvException error) {
            errors.add(error);
        }
    }

    @Test
    void theLimitsDefaultToTheirFormerFixedValuesAndRefuseValuesOutOfRange() {
        NodeConfig d = NodeConfig.defaults();
        assertEquals(600, d.groupStartTimeoutSeconds);
        assertEquals(100_000, d.maxWatchesPerConnection);
        PropertiesFile p = PropertiesFile.empty(null);
        p.set("groupStartTimeoutSeconds", "0");
        ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.from(p, false));
        assertEquals("groupStartTimeoutSeconds", e.key());
        PropertiesFile q = PropertiesFile.empty(null);
        q.set("maxWatchesPerConnection", "0");
        e = assertThrows(ConfigException.class, () -> NodeConfig.from(q, false));
        assertEquals("maxWatchesPerConnection", e.key());
    }

    @Test
    void maxWatchesPerConnectionFromTheConfigFileLimitsAClientConnection() throws Exception {
        try (InProcessNodes nodes = new InProcessNodes(dir, 1, Map.of("maxWatchesPerConnection", "2"));
             KvClient client = new KvClient(nodes.clientConfig())) {
            client.start();
            Recorder within = new Recorder();
            KvWatch first = client.watch(within, "a", "b");
            Await.until("the current state of a and b", 10_000, () -> within.changes.size() == 2);
            Recorder over = new Recorder();
            KvWatch second = client.watch(over, "c");   // a third key on the connection
            Await.until("the refusal to reach the listener", 10_000, () -> !over.errors.isEmpty());
            assertEquals(KvCode.TOO_MANY_WATCHES, over.errors.get(0).kvCode());
            assertTrue(over.errors.get(0).getMessage().contains("limit of 2"), over.errors.get(0).getMessage());
            assertTrue(within.errors.isEmpty(), "the watches within the limit were told of an error: " + within.errors);
            second.close();
            first.close();
        }
    }
}
