package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Clients of a single-node cluster for the lock tests of this package, and a callback thread they can block. */
final class LockTestClients {

    private LockTestClients() {
    }

    interface TwoClients {
        void run(KvClient a, KvClient b) throws Exception;
    }

    /** Two clients of one single-node cluster (10 s timeouts), closed after {@code test}. */
    static void withTwoClients(TwoClients test) throws Exception {
        withTwoClients(null, 10_000, test);
    }

    /**
     * Two clients of one single-node cluster, with {@code timeoutMillis} each, closed after
     * {@code test}; a's callbacks run on {@code aCallbacks} (null: the client's default).
     */
    static void withTwoClients(Executor aCallbacks, long timeoutMillis, TwoClients test) throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClientConfig aConfig = new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(timeoutMillis);
            if (aCallbacks != null) {
                aConfig.callbackExecutor(aCallbacks);
            }
            KvClient a = new KvClient(aConfig);
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(timeoutMillis));
            a.start();
            b.start();
            try {
                test.run(a, b);
            } finally {
                a.close();
                b.close();
            }
        }
    }

    /**
     * An application's callback executor of one thread ({@code app-callbacks}), which a test blocks
     * with a task of its own ({@link #block()}) until {@link #unblock()}. Closing it unblocks it and
     * shuts it down.
     */
    static final class BlockableCallbacks implements AutoCloseable {
        final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "app-callbacks"));
        private final CountDownLatch unblock = new CountDownLatch(1);

        /** Blocks the thread with a task that waits for {@link #unblock()}; returns once the task runs. */
        void block() throws InterruptedException {
            CountDownLatch blocking = new CountDownLatch(1);
            executor.execute(() -> {
                blocking.countDown();
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(blocking.await(5, TimeUnit.SECONDS));
        }

        void unblock() {
            unblock.countDown();
        }

        @Override
        public void close() {
            unblock.countDown();
            executor.shutdownNow();
        }
    }
}
