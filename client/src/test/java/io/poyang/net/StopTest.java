package io.poyang.net;

import io.poyang.common.LifeCycle;
import io.poyang.common.StoppedException;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

class StopTest {

    private static final int HELD = 60;
    private final Holding held = new Holding();
    private NioServer server;
    private NioClient client;

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() throws Exception {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count());
        waitUntil("no net thread left", 10_000, () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.isAlive() && (t.getName().startsWith("NioServer-") || t.getName().startsWith("NioClient-"))));
    }

    private NioServer startHoldingServer(long stopTimeoutMillis) {
        NioServerConfig sc = serverConfig();
        sc.stopTimeoutMillis = stopTimeoutMillis;
        NioServer s = new NioServer(sc);
        s.register(Commands.ECHO, new EchoProcessor());
        s.register(HELD, held);
        s.start();
        return s;
    }


    @Test
    void aPeerThatNeverAnswersTheHandshakeDoesNotHoldTheStop() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());   // and never read or answer
                    }
                } catch (java.io.IOException e) {
                    // closed at the end of the test
                }
            }, "silent-peer");
            acceptor.start();
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + silent.getLocalPort());
            cc.stopTimeoutMillis = 5_000;
            client = new NioClient(cc);
            client.start();
            waitUntil("the connection to the silent peer", 5_000, () -> !accepted.isEmpty());
            CompletableFuture<byte[]> waiting = client.sendRequest(null, WritePacket.request(Commands.ECHO, null),
                    BytesDecoder.FACTORY, 20_000);
            long start = System.nanoTime();
            client.stop();
            long stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(stopMillis < 4_000, "the stop took " + stopMillis + " ms of its 5,000 ms timeout");
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(1, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof StoppedException, e.getCause().toString());
            silent.close();
            acceptor.join(5_000);
            for (java.net.Socket s : accepted) {
                s.close();
            }
        }
    }

    @Test
    void aClientDoesNotWaitForThePushesItIsStillHandling() throws Exception {
        NioServerConfig sc = serverConfig();
        NioServer pushing = new NioServer(sc);
        CompletableFuture<NioConnection> connected = new CompletableFuture<>();
        pushing.setConnectionListener(new ConnectionListener() {
            @Override
            public void onConnected(NioConnection connection) {
                connected.complete(connection);
            }

            @Override
            public void onClosed(NioConnection connection) {
            }
        });
        pushing.start();
        server = pushing;
        NioClientConfig cc = clientConfig(pushing);
        cc.stopTimeoutMillis = 5_000;
        client = new NioClient(cc);
        client.register(HELD, held);   // a push the client's handler never finishes, like a stuck listener
        client.start();
        client.waitForConnected(5_000);
        NioConnection toClient = connected.get(5, TimeUnit.SECONDS);
        CompletableFuture<Object> answer = new CompletableFuture<>();
        pushing.sendRequest(toClient, WritePacket.request(HELD, null), IgnoreBodyDecoder.factory(), 20_000,
                CallOptions.IO_THREAD_CALLBACK, RpcCallback.completing(answer));
        waitUntil("the push held by the client", 5_000, () -> held.size() == 1);
        long start = System.nanoTime();
        client.stop();
        long stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(stopMillis < 4_000, "the client's stop took " + stopMillis + " ms of its 5,000 ms timeout");
        ExecutionException e = assertThrows(ExecutionException.class, () -> answer.get(5, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof NetConnectionException, "the server hears the connection go: " + e.getCause());
    }

    @Test
    void gracefulStopLetsRequestsInFlightFinishAndRefusesNewOnes() throws Exception {
        server = startHoldingServer(10_000);
        client = startClient(clientConfig(server));
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fs.add(client.sendRequest(null, WritePacket.request(HELD, null), BytesDecoder.FACTORY, 20_000));
        }
        waitUntil("twenty held", 5000, () -> held.size() == 20);
        CompletableFuture<Void> stopping = CompletableFuture.runAsync(server::stop, OWN_THREAD);
        waitUntil("stopping", 5000, () -> server.status() == LifeCycle.Status.STOPPING);
        // a new request during the stop is refused with STOPPING (once the worker has seen the stop)
        RemoteException refused = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (refused == null && System.nanoTime() < deadline) {
            try {
                client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                refused = (RemoteException) e.getCause();
            }
        }
        assertNotNull(refused, "no request was refused during the stop");
        assertEquals(ResponseCode.STOPPING, refused.responseCode());
        assertFalse(stopping.isDone(), "stop must wait for the requests in flight");
        held.releaseAll(new byte[]{1});
        for (CompletableFuture<byte[]> f : fs) {
            assertArrayEquals(new byte[]{1}, f.get(5, TimeUnit.SECONDS));
        }
        stopping.get(10, TimeUnit.SECONDS);
        assertEquals(LifeCycle.Status.STOPPED, server.status());
    }

    @Test
    void stopFailsWhatIsStillInFlightAfterItsTimeout() throws Exception {
        server = startHoldingServer(300);
        client = startClient(clientConfig(server));
        CompletableFuture<byte[]> f = client.sendRequest(null, WritePacket.request(HELD, null), BytesDecoder.FACTORY, 60_000);
        waitUntil("held", 5000, () -> held.size() == 1);
        long start = System.nanoTime();
        server.stop();
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis >= 250 && tookMillis < 5000, "stop took " + tookMillis + " ms");
        assertInstanceOf(NetConnectionException.class, causeOf(f));
        // answering after the stop is harmless
        held.releaseAll(null);
    }

    @Test
    void clientStopFailsItsPendingRequestsAndRefusesNewOnes() throws Exception {
        server = startHoldingServer(1000);
        NioClientConfig cc = clientConfig(server);
        cc.stopTimeoutMillis = 200;
        client = startClient(cc);
        CompletableFuture<byte[]> f = client.sendRequest(null, WritePacket.request(HELD, null), BytesDecoder.FACTORY, 60_000);
        waitUntil("held", 5000, () -> held.size() == 1);
        client.stop();
        assertInstanceOf(StoppedException.class, causeOf(f));
        assertThrows(StoppedException.class, () -> client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY,
                1000, CallOptions.DEFAULT, ignoring()));
        assertInstanceOf(StoppedException.class, causeOf(client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 1000)));
        held.releaseAll(null);
    }

    @Test
    void clientStopWaitsForPendingResponses() throws Exception {
        server = startHoldingServer(1000);
        NioClientConfig cc = clientConfig(server);
        cc.stopTimeoutMillis = 10_000;
        client = startClient(cc);
        CompletableFuture<byte[]> f = client.sendRequest(null, WritePacket.request(HELD, null), BytesDecoder.FACTORY, 60_000);
        waitUntil("held", 5000, () -> held.size() == 1);
        CompletableFuture<Void> stopping = CompletableFuture.runAsync(client::stop, OWN_THREAD);
        waitUntil("stopping", 5000, () -> client.status() == LifeCycle.Status.STOPPING);
        assertFalse(stopping.isDone());
        held.releaseAll(new byte[]{3});
        assertArrayEquals(new byte[]{3}, f.get(5, TimeUnit.SECONDS));
        stopping.get(10, TimeUnit.SECONDS);
    }

    @Test
    void stopCalledFromACallbackOnTheIoThreadDoesNotDeadlock() throws Exception {
        server = startHoldingServer(1000);
        NioClientConfig cc = clientConfig(server);
        cc.stopTimeoutMillis = 200;
        client = startClient(cc);
        CompletableFuture<String> stoppedFrom = new CompletableFuture<>();
        client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 3000, CallOptions.IO_THREAD_CALLBACK,
                new RpcCallback<byte[]>() {
                    @Override
                    public void onSuccess(byte[] body) {
                        long start = System.nanoTime();
                        client.stop();
                        stoppedFrom.complete(Thread.currentThread().getName() + " in "
                                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
                    }

                    @Override
                    public void onFailure(Throwable error) {
                        stoppedFrom.completeExceptionally(error);
                    }
                });
        String how = stoppedFrom.get(10, TimeUnit.SECONDS);
        assertTrue(how.startsWith("NioClient-io-"), how);
        assertEquals(LifeCycle.Status.STOPPED, client.status());
    }
}
