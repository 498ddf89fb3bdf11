package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A renewal's answer is recorded on the client's I/O thread. An application that synchronizes on
 * its KvLock object (say, to act only while {@code isHeld()}) must not stall that thread, and with
 * it every other request of the client: the lock guards its state with a private monitor.
 */
class KvLockMonitorTest {

    @Test
    void anApplicationHoldingTheLockObjectsMonitorDoesNotStallTheClient() throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient kv = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(3_000));
            kv.start();
            try {
                KvLock lock = kv.lock("job");
                assertTrue(lock.tryLock(60_000, 0));
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                Thread app = new Thread(() -> {
                    synchronized (lock) {
                        holding.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }, "app-holding-the-lock-object");
                app.start();
                try {
                    assertTrue(holding.await(5, TimeUnit.SECONDS));
                    CompletableFuture<Void> renewed = lock.updateLeaseAsync(60_000);
                    renewed.get(3, TimeUnit.SECONDS);
                    // the I/O thread is free: later requests are answered while the monitor is still held
                    kv.put("after-renewal", "x".getBytes(StandardCharsets.UTF_8));
                    assertTrue(kv.get("after-renewal").exists());
                    assertTrue(lock.isHeld());
                } finally {
                    release.countDown();
                    app.join(5_000);
                }
                lock.unlock();
            } finally {
                kv.close();
            }
        }
    }
}
