package io.poyang.dtkv.client;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What docs/dtkv.md says of repeated states: when the client registers its watches again, the
 * leader sends every watched directory whole and every watched missing key as absent, changed or
 * not, and the client passes them on when anything was applied since.
 */
class KvWatchRepeatedStatesTest {

    @Test
    @Timeout(60)
    void aReRegistrationSendsAWatchedDirectoryAndAMissingKeyAgainUnchanged() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient kv = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            kv.start();
            try {
                kv.mkdir("d");
                kv.put("d.x", "1");
                List<String> heard = new CopyOnWriteArrayList<>();
                kv.watch((k, n) -> heard.add(state(n)), "d", "missing");
                Await.until("the first states", () -> heard.contains("d.x=1") && heard.contains("missing=absent"));
                kv.put("elsewhere", "1");   // something applied since (a new leader's first entry, say)
                heard.clear();

                // the node tells the client to register again (as when it stops leading)
                kv.shared.watches.onNotify(new KvWatchNotify(1, 0, Collections.emptyList(), true));
                Await.until("d.x and the missing key again, unchanged (heard " + heard + ")",
                        () -> heard.contains("d.x=1") && heard.contains("missing=absent"));
            } finally {
                kv.close();
            }
        }
    }

    private static String state(KvNode n) {
        return n.key() + "=" + (n.exists() ? n.valueAsString() : "absent");
    }
}
