package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A second watch of a key the client already watches starts from the client's copy of the key.
 * That copy must be read when the watch's first events run, on the event executor: a change
 * queued there before the watch was made (a notification waiting behind a listener) reaches the
 * new watch too, and a copy taken at {@code watch()} time, delivered after it, would leave the
 * watch with an older state than the key has.
 */
class KvWatchSecondWatchTest {

    @Test
    @Timeout(60)
    void aSecondWatchOfAWatchedKeyEndsWithTheLatestStateWhenAChangeWaitsOnTheEventExecutor() throws Exception {
        ExecutorService callbacks = Executors.newCachedThreadPool();   // the gate below blocks one of its threads
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000)
                    .callbackExecutor(callbacks));
            // notes each notification once the client has queued it on the event executor
            List<String> queued = new CopyOnWriteArrayList<>();
            ReqProcessor<KvWatchNotify> real = a.shared.watches.processor();
            a.shared.raft.network().register(KvCommands.KV_WATCH_NOTIFY, new ReqProcessor<KvWatchNotify>() {
                @Override
                public PbCallback<KvWatchNotify> createDecoder() {
                    return real.createDecoder();
                }

                @Override
                public WritePacket process(ReqContext context, KvWatchNotify notify) {
                    WritePacket p = real.process(context, notify);
                    for (KvWatchEvent e : notify.events()) {
                        if (e.node() != null && e.node().exists()) {
                            queued.add(e.node().key() + "=" + e.node().valueAsString());
                        }
                    }
                    return p;
                }
            });
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            a.start();
            b.start();
            try {
                b.put("cfg", "v1");
                List<String> first = new CopyOnWriteArrayList<>();
                KvWatch h1 = a.watch((k, n) -> first.add(n.valueAsString()), "cfg");
                Await.until("the first watch's state v1", () -> first.contains("v1"));

                // the event executor is busy (a slow listener, say) ...
                CountDownLatch busy = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                a.shared.eventExecutor.execute(() -> {
                    busy.countDown();
                    await(release);
                });
                assertTrue(busy.await(10, TimeUnit.SECONDS));
                // ... while the change to v2 arrives and waits there
                b.put("cfg", "v2");
                Await.until("the notification of v2 to be queued on the event executor", () -> queued.contains("cfg=v2"));

                // a second watch of the same key, made now
                List<String> second = new CopyOnWriteArrayList<>();
                KvWatch h2 = a.watch((k, n) -> second.add(n.valueAsString()), "cfg");
                release.countDown();
                CountDownLatch ran = new CountDownLatch(1);
                a.shared.eventExecutor.execute(ran::countDown);   // after everything queued before it
                assertTrue(ran.await(10, TimeUnit.SECONDS));

                assertEquals(Collections.singletonList("v2"), second,
                        "the second watch must hear the key's latest state (once), not the client's older copy after it");
                assertEquals("v2", first.get(first.size() - 1));
                h1.close();
                h2.close();
            } finally {
                a.close();
                b.close();
            }
        } finally {
            callbacks.shutdownNow();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
