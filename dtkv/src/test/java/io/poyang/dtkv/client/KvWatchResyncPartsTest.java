package io.poyang.dtkv.client;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A directory resync in parts, and a connection closing while they come: the client asks for a new
 * resync and sets the unfinished parts aside. A later part of the old resync must not make the keys
 * it lacks look removed (they were in the parts set aside).
 */
class KvWatchResyncPartsTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aLaterPartOfAResyncSetAsideReportsNoKeyGone() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient kv = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            kv.start();
            try {
                kv.mkdir("d");
                kv.put("d.a", b("1"));
                long last = kv.put("d.b", b("2"));
                List<String> seen = new CopyOnWriteArrayList<>();
                kv.watch((watchKey, node) -> seen.add(node.key() + "=" + (node.exists() ? node.valueAsString() : "absent")),
                        "d");
                Await.until("the watch's first states", () -> seen.contains("d.a=1") && seen.contains("d.b=2"));
                seen.clear();

                // the last part of a resync whose first part (with d.a) the client set aside
                KvNode b = KvNode.of("d.b", b("2"), false, last, last);
                kv.shared.watches.onNotify(new KvWatchNotify(1, last + 10, Collections.singletonList(
                        new KvWatchEvent("d", null, true, Collections.singletonList(b), false, true))));
                assertTrue(seen.stream().noneMatch(s -> s.equals("d.a=absent")), "d.a reported gone: " + seen);

                // a whole resync (a first part) that lacks d.a does say it is gone
                kv.shared.watches.onNotify(new KvWatchNotify(1, last + 20, Collections.singletonList(
                        new KvWatchEvent("d", KvNode.of("d", null, true, 1, 1), true, Arrays.asList(b), false, false))));
                assertTrue(seen.contains("d.a=absent"), "a whole resync without d.a: " + seen);
            } finally {
                kv.close();
            }
        }
    }
}
