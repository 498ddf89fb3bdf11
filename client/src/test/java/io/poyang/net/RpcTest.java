package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

class RpcTest {

    private NioServer server;
    private NioClient client;

    @BeforeEach
    void resetImpossibleStates() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported");
    }

    @Test
    void echoReturnsTheBody() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        byte[] data = "hello poyang".getBytes(StandardCharsets.UTF_8);
        byte[] back = client.sendRequest(null, echo(data), BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS);
        assertArrayEquals(data, back);
        assertEquals(Peer.Status.CONNECTED, client.peers().get(0).status());
        assertEquals(server.uuid().getMostSignificantBits(), client.peers().get(0).remoteHandshake().uuidMost());
    }

    @Test
    void emptyAndLargeBodiesRoundTrip() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        assertArrayEquals(new byte[0], client.sendRequest(null, echo(new byte[0]), BytesDecoder.FACTORY, 3000).get());
        byte[] big = new byte[3 * 1024 * 1024 + 7];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        assertArrayEquals(big, client.sendRequest(null, echo(big), BytesDecoder.FACTORY, 10000).get(20, TimeUnit.SECONDS));
    }

    @Test
    void aResponseOverTheClientsFrameLimitIsAnsweredWithAnErrorNotDropped() throws Exception {
        server = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxFrameBytes = 64 * 1024;
        client = startClient(cc);
        long start = System.nanoTime();
        // the request fits the server's limit; its echo does not fit the client's
        java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> client.sendRequest(null, echo(new byte[100_000]), BytesDecoder.FACTORY, 20_000)
                        .get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RemoteException, e.getCause().toString());
        assertTrue(e.getCause().getMessage().contains("frame limit"), e.getCause().getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "answered, not left to time out");
        // and the connection goes on
        assertArrayEquals(new byte[]{7}, client.sendRequest(null, echo(new byte[]{7}), BytesDecoder.FACTORY, 3000)
                .get(5, TimeUnit.SECONDS));
    }

    @Test
    void hundredThousandPipelinedRequestsOnOneConnectionAreAllAnsweredAndMatched() throws Exception {
        server = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingRequests = 200_000;
        client = startClient(cc);
        int n = 100_000;
        AtomicInteger matched = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        for (int i = 0; i < n; i++) {
            byte[] body = Integer.toString(i).getBytes(StandardCharsets.UTF_8);
            client.sendRequest(null, echo(body), BytesDecoder.FACTORY, 60_000, CallOptions.IO_THREAD_CALLBACK,
                    new RpcCallback<byte[]>() {
                        @Override
                        public void onSuccess(byte[] b) {
                            if (java.util.Arrays.equals(body, b)) {
                                matched.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                        }

                        @Override
                        public void onFailure(Throwable error) {
                            firstError.compareAndSet(null, error);
                            failed.incrementAndGet();
                        }
                    });
        }
        waitUntil("all answers", 60_000, () -> matched.get() + failed.get() == n);
        assertNull(firstError.get());
        assertEquals(n, matched.get());
        assertEquals(0, client.pendingRequests());
        assertEquals(1, server.workers[0].pendingConnectionsForTest());
    }

    @Test
    void concurrentCallersFromManyThreads() throws Exception {
        NioServerConfig sc = serverConfig();
        sc.ioThreads = 2;
        server = startEchoServer(sc);
        client = startClient(clientConfig(server));
        int threads = 8;
        int perThread = 2000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(CompletableFuture.supplyAsync(() -> {
                    int ok = 0;
                    for (int i = 0; i < perThread; i++) {
                        byte[] body = (thread + ":" + i).getBytes(StandardCharsets.UTF_8);
                        try {
                            byte[] back = client.sendRequest(null, echo(body), BytesDecoder.FACTORY, 10_000).get();
                            if (java.util.Arrays.equals(body, back)) {
                                ok++;
                            }
                        } catch (InterruptedException | ExecutionException e) {
                            throw new AssertionError(e);
                        }
                    }
                    return ok;
                }, pool));
            }
            for (CompletableFuture<Integer> r : results) {
                assertEquals(perThread, r.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static final int SILENT = 50;
    private static final int BIZ = 51;
    private static final int THROWS = 52;
    private static final int NOT_LEADER_CMD = 53;
    private static final int LATER = 53;
    private static final int NOTE = 54;
    private static final int PUSH = 55;

    /** Registers test processors on a server config and starts it. */
    private NioServer startServer(NioServerConfig c, java.util.function.Consumer<NioServer> extra) {
        NioServer s = new NioServer(c);
        s.register(Commands.ECHO, new EchoProcessor());
        extra.accept(s);
        s.start();
        return s;
    }



    @Test
    void requestWithoutAnswerFailsWithTimeout() throws Exception {
        server = startServer(serverConfig(), s -> s.register(SILENT, processor((ctx, b) -> null)));
        client = startClient(clientConfig(server));
        long start = System.nanoTime();
        Throwable t = causeOf(client.sendRequest(null, WritePacket.request(SILENT, null), BytesDecoder.FACTORY, 200));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertInstanceOf(NetTimeoutException.class, t);
        assertTrue(tookMillis >= 190 && tookMillis < 3000, "timed out after " + tookMillis + " ms");
        assertEquals(0, client.pendingRequests());
    }

    @Test
    void serverDropsARequestThatExpiredBeforeItsExecutorGotToIt() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor();
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger processed = new AtomicInteger();
        try {
            server = startServer(serverConfig(), s -> s.register(LATER, processor((ctx, b) -> {
                if ("block".equals(new String(b, StandardCharsets.UTF_8))) {
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                processed.incrementAndGet();
                return WritePacket.response(null);
            }), single));
            client = startClient(clientConfig(server));
            CompletableFuture<byte[]> blocker = client.sendRequest(null, WritePacket.request(LATER,
                    new BytesBody("block".getBytes(StandardCharsets.UTF_8))), BytesDecoder.FACTORY, 10_000);
            waitUntil("the blocker runs", 5000, () -> server.workers[0].inFlightRequestsForTest() == 1);
            CompletableFuture<byte[]> late = client.sendRequest(null, WritePacket.request(LATER,
                    new BytesBody("late".getBytes(StandardCharsets.UTF_8))), BytesDecoder.FACTORY, 100);
            waitUntil("the late request reaches the server", 5000,
                    () -> server.workers[0].inFlightRequestsForTest() == 2);
            // The server's deadline is its receipt time plus 100 ms, a little later than the client's;
            // open the gate only once it has surely passed, or the executor may still see it alive.
            long receivedBy = System.nanoTime();
            Throwable t = causeOf(late);
            assertInstanceOf(NetTimeoutException.class, t);
            waitUntil("the server-side deadline passes", 5000,
                    () -> System.nanoTime() - receivedBy > TimeUnit.MILLISECONDS.toNanos(150));
            gate.countDown();
            blocker.get(5, TimeUnit.SECONDS);
            waitUntil("the expired request is dropped", 5000, () -> server.workers[0].inFlightRequestsForTest() == 0);
            assertEquals(1, processed.get(), "only the blocker was processed");
            assertEquals(1, server.workers[0].droppedExpiredForTest());
        } finally {
            gate.countDown();
            single.shutdownNow();
        }
    }

    @Test
    void aProcessorThatDropsAnExpiredRequestWithoutAnsweringFreesItsInFlightRoom() throws Exception {
        java.util.concurrent.ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger dropped = new AtomicInteger();
        try {
            // like a DtKV read that waited for its turn past its deadline: the processor sees the
            // request expired and returns, as isExpired's documentation says it may
            server = startServer(serverConfig(), s -> s.register(LATER, processor((ctx, b) -> {
                Runnable serve = new Runnable() {
                    @Override
                    public void run() {
                        if (ctx.isExpired()) {
                            dropped.incrementAndGet();
                            return;
                        }
                        later.schedule(this, 20, TimeUnit.MILLISECONDS);
                    }
                };
                later.schedule(serve, 20, TimeUnit.MILLISECONDS);
                return null;
            })));
            client = startClient(clientConfig(server));
            for (int i = 0; i < 5; i++) {
                assertInstanceOf(NetTimeoutException.class, causeOf(client.sendRequest(null,
                        WritePacket.request(LATER, null), BytesDecoder.FACTORY, 100)));
            }
            waitUntil("the processor to drop the five requests", 5000, () -> dropped.get() == 5);
            waitUntil("their in-flight room to be freed", 5000, () -> server.workers[0].inFlightRequestsForTest() == 0);
            assertEquals(5, server.workers[0].droppedExpiredForTest());
        } finally {
            later.shutdownNow();
        }
    }

    @Test
    void remoteErrorsCarryTheirCodeAndMessage() throws Exception {
        server = startServer(serverConfig(), s -> {
            s.register(BIZ, processor((ctx, b) -> WritePacket.bizError(42, "key not found")));
            s.register(NOT_LEADER_CMD, processor((ctx, b) -> WritePacket.error(ResponseCode.NOT_LEADER, 3, "ask node 3")));
            s.register(THROWS, processor((ctx, b) -> {
                throw new IllegalStateException("boom");
            }));
        });
        client = startClient(clientConfig(server));
        RemoteException biz = (RemoteException) causeOf(client.sendRequest(null, WritePacket.request(BIZ, null),
                BytesDecoder.FACTORY, 3000));
        assertEquals(ResponseCode.BIZ_ERROR, biz.responseCode());
        assertEquals(42, biz.bizCode());
        assertEquals("key not found", biz.remoteMessage());
        RemoteException notLeader = (RemoteException) causeOf(client.sendRequest(null,
                WritePacket.request(NOT_LEADER_CMD, null), BytesDecoder.FACTORY, 3000));
        assertEquals(ResponseCode.NOT_LEADER, notLeader.responseCode());
        assertEquals(3, notLeader.bizCode());
        assertEquals("ask node 3", notLeader.remoteMessage());
        RemoteException missing = (RemoteException) causeOf(client.sendRequest(null, WritePacket.request(999, null),
                BytesDecoder.FACTORY, 3000));
        assertEquals(ResponseCode.COMMAND_NOT_FOUND, missing.responseCode());
        RemoteException sys = (RemoteException) causeOf(client.sendRequest(null, WritePacket.request(THROWS, null),
                BytesDecoder.FACTORY, 3000));
        assertEquals(ResponseCode.SYS_ERROR, sys.responseCode());
        assertTrue(sys.remoteMessage().contains("boom"), sys.remoteMessage());
        // the connection survives errors
        assertArrayEquals(new byte[]{1}, client.sendRequest(null, echo(new byte[]{1}), BytesDecoder.FACTORY, 3000).get());
    }

    @Test
    void processorOnAnExecutorAnswersLaterFromAnotherThread() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        java.util.concurrent.ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try {
            AtomicReference<String> processorThread = new AtomicReference<>();
            server = startServer(serverConfig(), s -> s.register(LATER, processor((ctx, b) -> {
                processorThread.set(Thread.currentThread().getName());
                later.schedule(() -> ctx.respond(WritePacket.response(new BytesBody(b))), 20, TimeUnit.MILLISECONDS);
                return null;
            }), pool));
            client = startClient(clientConfig(server));
            List<CompletableFuture<byte[]>> fs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                fs.add(client.sendRequest(null, WritePacket.request(LATER, new BytesBody(new byte[]{(byte) i})),
                        BytesDecoder.FACTORY, 5000));
            }
            for (int i = 0; i < 100; i++) {
                assertArrayEquals(new byte[]{(byte) i}, fs.get(i).get(10, TimeUnit.SECONDS));
            }
            assertFalse(processorThread.get().contains("-io-"), processorThread.get());
            waitUntil("nothing in flight", 5000, () -> server.workers[0].inFlightRequestsForTest() == 0);
        } finally {
            pool.shutdownNow();
            later.shutdownNow();
        }
    }

    @Test
    void oneWayMessagesReachTheProcessor() throws Exception {
        java.util.concurrent.ConcurrentLinkedQueue<String> got = new java.util.concurrent.ConcurrentLinkedQueue<>();
        server = startServer(serverConfig(), s -> s.register(NOTE, processor((ctx, b) -> {
            assertTrue(ctx.isOneWay());
            got.add(new String(b, StandardCharsets.UTF_8));
            return null;
        })));
        client = startClient(clientConfig(server));
        for (int i = 0; i < 10; i++) {
            client.sendOneWay(null, WritePacket.oneWay(NOTE, new BytesBody(("n" + i).getBytes(StandardCharsets.UTF_8))), 3000);
        }
        waitUntil("ten notes", 5000, () -> got.size() == 10);
        assertEquals("n0", got.peek());
        waitUntil("one-way flow released", 5000, () -> client.pendingRequests() == 0);
        assertEquals(0, server.workers[0].inFlightRequestsForTest());
    }

    @Test
    void serverPushesRequestsAndOneWayMessagesToTheClient() throws Exception {
        AtomicReference<NioConnection> subscriber = new AtomicReference<>();
        server = startServer(serverConfig(), s -> s.register(BIZ, processor((ctx, b) -> {
            subscriber.set(ctx.connection());
            return WritePacket.response(null);
        })));
        java.util.concurrent.ConcurrentLinkedQueue<String> pushed = new java.util.concurrent.ConcurrentLinkedQueue<>();
        NioClient c = new NioClient(clientConfig(server));
        c.register(PUSH, processor((ctx, b) -> {
            pushed.add((ctx.isOneWay() ? "one-way:" : "request:") + new String(b, StandardCharsets.UTF_8));
            return ctx.isOneWay() ? null : WritePacket.response(new BytesBody("ack".getBytes(StandardCharsets.UTF_8)));
        }));
        c.start();
        client = c;
        c.waitForConnected(5000);
        c.sendRequest(null, WritePacket.request(BIZ, null), BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS);
        NioConnection conn = subscriber.get();
        assertNotNull(conn);
        byte[] ack = server.sendRequest(conn, WritePacket.request(PUSH, new BytesBody("watch-event".getBytes(StandardCharsets.UTF_8))),
                BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS);
        assertEquals("ack", new String(ack, StandardCharsets.UTF_8));
        server.sendOneWay(conn, WritePacket.oneWay(PUSH, new BytesBody("lock-granted".getBytes(StandardCharsets.UTF_8))), 3000);
        waitUntil("both pushes", 5000, () -> pushed.size() == 2);
        assertTrue(pushed.contains("request:watch-event"));
        assertTrue(pushed.contains("one-way:lock-granted"));
    }

    @Test
    void callbacksRunOnTheExecutorUnlessTheCallerAsksForTheIoThread() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        AtomicReference<String> onIo = new AtomicReference<>();
        AtomicReference<String> onExecutor = new AtomicReference<>();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(2);
        client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 3000, CallOptions.IO_THREAD_CALLBACK, callback(onIo, done));
        client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 3000, CallOptions.DEFAULT, callback(onExecutor, done));
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertTrue(onIo.get().startsWith("NioClient-io-"), onIo.get());
        assertFalse(onExecutor.get().contains("-io-"), onExecutor.get());
    }

    private static RpcCallback<byte[]> callback(AtomicReference<String> thread, java.util.concurrent.CountDownLatch done) {
        return new RpcCallback<byte[]>() {
            @Override
            public void onSuccess(byte[] body) {
                thread.set(Thread.currentThread().getName());
                done.countDown();
            }

            @Override
            public void onFailure(Throwable error) {
                thread.set("failed: " + error);
                done.countDown();
            }
        };
    }

    @Test
    void pingIsAnsweredByEveryServer() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        assertNull(client.sendRequest(null, WritePacket.request(Commands.PING, null), IgnoreBodyDecoder.factory(), 3000)
                .get(5, TimeUnit.SECONDS));
    }
}
