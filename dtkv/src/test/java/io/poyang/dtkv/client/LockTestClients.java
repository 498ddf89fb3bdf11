package io.poyang.dtkv.client;

import io.poyang.dtkv.server.LocalKvCluster;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

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
        withTwoClients(new KvClientConfig(), 10_000, test);
    }

    /** {@link #withTwoClients(KvClientConfig, long, TwoClients)} with a's callbacks on {@code aCallbacks}. */
    static void withTwoClients(Executor aCallbacks, long timeoutMillis, TwoClients test) throws Exception {
        withTwoClients(new KvClientConfig().callbackExecutor(aCallbacks), timeoutMillis, test);
    }

    /**
     * Two clients of one single-node cluster, with {@code timeoutMillis} each, closed after
     * {@code test}; a is made from {@code aConfig} (its servers and timeout set here).
     */
    static void withTwoClients(KvClientConfig aConfig, long timeoutMillis, TwoClients test) throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(aConfig.servers(cluster.serviceAddresses()).timeoutMillis(timeoutMillis));
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

    interface ThreeClients {
        void run(KvClient a, KvClient b, KvClient c) throws Exception;
    }

    /** {@link #withThreeClients(KvClientConfig, Consumer, ThreeClients)} with nothing done to a before it starts. */
    static void withThreeClients(KvClientConfig aConfig, ThreeClients test) throws Exception {
        withThreeClients(aConfig, a -> {
        }, test);
    }

    /**
     * Three clients of one single-node cluster (10 s timeouts), closed after {@code test}; a is made
     * from {@code aConfig} (its servers and timeout set here) and handed to {@code aBeforeStart}
     * before the clients start (a push processor of a test must be registered before).
     */
    static void withThreeClients(KvClientConfig aConfig, Consumer<KvClient> aBeforeStart, ThreeClients test)
            throws Exception {
        try (LocalKvCluster cluster = LocalKvCluster.singleNode().start()) {
            cluster.waitForLeader(1, 30_000);
            KvClient a = new KvClient(aConfig.servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            aBeforeStart.accept(a);
            KvClient b = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            KvClient c = new KvClient(new KvClientConfig().servers(cluster.serviceAddresses()).timeoutMillis(10_000));
            a.start();
            b.start();
            c.start();
            try {
                test.run(a, b, c);
            } finally {
                a.close();
                b.close();
                c.close();
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
