package io.poyang.net;

import io.poyang.codec.PbCallback;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Starting servers and clients on loopback, and waiting for conditions with deadlines. */
final class NetTestSupport {

    /**
     * Runs each task on a thread of its own, for test tasks that block (a fake peer reading its
     * socket, a stop waiting for requests). Not the common pool: on two cores it has one thread, and
     * on newer JDKs (Temurin 25; not JDK 17) CompletableFuture's default async executor is that pool
     * even then, so a blocked task there starves the clients' callbacks, which run on it by default.
     */
    static final java.util.concurrent.Executor OWN_THREAD = task -> {
        Thread t = new Thread(task, "test-blocking-task");
        t.setDaemon(true);
        t.start();
    };

    private NetTestSupport() {
    }

    static NioServerConfig serverConfig() {
        NioServerConfig c = new NioServerConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.ioThreads = 1;
        c.stopTimeoutMillis = 1000;
        return c;
    }

    static NioServer startEchoServer(NioServerConfig c) {
        NioServer s = new NioServer(c);
        s.register(Commands.ECHO, new EchoProcessor());
        s.start();
        return s;
    }

    static NioClientConfig clientConfig(NioServer... servers) {
        NioClientConfig c = new NioClientConfig();
        for (NioServer s : servers) {
            c.servers.add("127.0.0.1:" + s.port());
        }
        c.stopTimeoutMillis = 1000;
        return c;
    }

    static NioClient startClient(NioClientConfig c) throws InterruptedException {
        NioClient client = new NioClient(c);
        client.start();
        client.waitForConnected(5000);
        return client;
    }

    static void stopQuietly(io.poyang.common.LifeCycle... things) {
        for (io.poyang.common.LifeCycle t : things) {
            if (t != null) {
                t.stop();
            }
        }
    }

    /** Polls {@code condition} until it holds; fails with {@code what} after the timeout. */
    static void waitUntil(String what, long timeoutMillis, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeoutMillis + " ms waiting for: " + what);
            }
            Thread.sleep(2); // polling interval of a deadline-bound wait, not a synchronisation sleep
        }
    }

    static WritePacket echo(byte[] data) {
        return WritePacket.request(Commands.ECHO, new BytesBody(data));
    }

    /** A processor of raw-bytes bodies made from a function. */
    static ReqProcessor<byte[]> processor(BiFunction<ReqContext, byte[], WritePacket> f) {
        return new ReqProcessor<byte[]>() {
            @Override
            public PbCallback<byte[]> createDecoder() {
                return new BytesDecoder();
            }

            @Override
            public WritePacket process(ReqContext context, byte[] body) {
                return f.apply(context, body);
            }
        };
    }

    /** A processor that keeps every request unanswered until the test releases it. */
    static final class Holding implements ReqProcessor<byte[]> {
        final ConcurrentLinkedQueue<ReqContext> held = new ConcurrentLinkedQueue<>();

        @Override
        public PbCallback<byte[]> createDecoder() {
            return new BytesDecoder();
        }

        @Override
        public WritePacket process(ReqContext context, byte[] body) {
            held.add(context);
            return null;
        }

        int size() {
            return held.size();
        }

        /**
         * Answers the requests held when called with {@code body} (may be null). Not the ones that
         * come meanwhile: an answer can free room for a caller whose request then arrives while this
         * still runs, and a test that waits to see that request held must find it there.
         */
        void releaseAll(byte[] body) {
            for (int n = held.size(); n > 0; n--) {
                ReqContext ctx = held.poll();
                if (ctx == null) {
                    return;
                }
                ctx.respond(WritePacket.response(body == null ? null : new BytesBody(body)));
            }
        }
    }

    /** The error a future failed with; fails the test if it succeeds or does not complete in 10 s. */
    static Throwable causeOf(CompletableFuture<?> f) throws Exception {
        return causeOf(f, 10_000);
    }

    /** The error a future failed with; fails the test unless it fails within {@code timeoutMillis}. */
    static Throwable causeOf(CompletableFuture<?> f, long timeoutMillis) throws Exception {
        try {
            f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the future succeeded");
    }

    static <T> RpcCallback<T> ignoring() {
        return new RpcCallback<T>() {
            @Override
            public void onSuccess(T body) {
            }

            @Override
            public void onFailure(Throwable error) {
            }
        };
    }
}
