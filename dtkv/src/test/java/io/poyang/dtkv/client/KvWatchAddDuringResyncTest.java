package io.poyang.dtkv.client;

import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A full re-sync (sync_all) replaces the node's watches of the client with the ones it lists. It is
 * taken under the client's monitor and sent after; a watch made in between is not in it, and its
 * own registration can reach the node first (sent before the re-sync left, or routed faster while
 * the client looks for the leader). The re-sync then drops it on the node: the client must notice
 * and register again, or that watch hears nothing until the next re-sync.
 */
class KvWatchAddDuringResyncTest {

    @Test
    @Timeout(60)
    void aWatchRegisteredWhileAResyncIsOnItsWayStillHearsChangesAfterTheResync() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient kv = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            kv.start();
            CountDownLatch timerGate = new CountDownLatch(1);
            try {
                KvWatches watches = kv.shared.watches;
                kv.put("a", "1");
                List<String> heardA = new CopyOnWriteArrayList<>();
                kv.watch((k, n) -> heardA.add(state(n.key(), n)), "a");
                Await.until("a's first state", () -> heardA.contains("a=1"));

                // hold the client's timer (it runs the scheduled re-syncs) so that the test sends this one
                kv.shared.timer.execute(() -> await(timerGate));
                // the node tells the client to register again (it no longer leads, say) ...
                watches.onNotify(new KvWatchNotify(1, 0, Collections.emptyList(), true));
                // ... and the client takes its re-sync: "a" only
                List<KvWatches.SyncAll> resync = watches.takeSyncAlls();
                assertEquals(1, resync.size());
                assertEquals(Collections.singletonList("a"), resync.get(0).req.keys());

                // a new watch, registered (and its first state heard) before the re-sync reaches the node
                List<String> heardB = new CopyOnWriteArrayList<>();
                kv.watch((k, n) -> heardB.add(state(n.key(), n)), "b");
                Await.until("b's first state", () -> heardB.contains("b=absent"));
                watches.sendSyncAlls(resync);
                // one more watch: its registration follows the re-sync on the one connection, and the
                // node serves them in order, so once c's first state is heard the re-sync was applied
                List<String> heardC = new CopyOnWriteArrayList<>();
                kv.watch((k, n) -> heardC.add(state(n.key(), n)), "c");
                Await.until("c's first state", () -> heardC.contains("c=absent"));
                timerGate.countDown();

                kv.put("b", "2");
                Await.until("the watch of b, made while the re-sync was on its way, to hear b=2 (heard "
                        + heardB + ")", () -> heardB.contains("b=2"));
            } finally {
                timerGate.countDown();
                kv.close();
            }
        }
    }

    private static String state(String key, io.poyang.dtkv.KvNode n) {
        return key + "=" + (n.exists() ? n.valueAsString() : "absent");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
