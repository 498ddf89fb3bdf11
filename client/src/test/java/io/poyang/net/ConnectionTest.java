package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

class ConnectionTest {

    private static final int SILENT = 50;
    private NioServer server;
    private NioServer server2;
    private NioClient client;

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server, server2);
        assertEquals(0, ImpossibleStates.count());
    }

    private static NioServer startSilentServer(NioServerConfig c) {
        NioServer s = new NioServer(c);
        s.register(Commands.ECHO, new EchoProcessor());
        s.register(SILENT, processor((ctx, body) -> null)); // never answers
        s.start();
        return s;
    }


    @Test
    void serverKilledMidFlightFailsPendingCallsFastWithAConnectionError() throws Exception {
        NioServerConfig sc = serverConfig();
        sc.stopTimeoutMillis = 0;
        server = startSilentServer(sc);
        client = startClient(clientConfig(server));
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            fs.add(client.sendRequest(null, WritePacket.request(SILENT, null), BytesDecoder.FACTORY, 60_000));
        }
        waitUntil("all 100 requests in flight on the server", 5000, () -> server.workers[0].inFlightRequestsForTest() == 100);
        long start = System.nanoTime();
        server.stop();
        for (CompletableFuture<byte[]> f : fs) {
            Throwable t = causeOf(f, 5000);
            assertInstanceOf(NetConnectionException.class, t);
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis < 5000, "pending calls took " + tookMillis + " ms to fail");
        assertEquals(0, client.pendingRequests());
        // while disconnected, new calls fail at once instead of waiting for their timeout
        waitUntil("the peer notices", 5000, () -> client.peers().get(0).status() == Peer.Status.NOT_CONNECTED);
        Throwable t = causeOf(client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 60_000), 1000);
        assertInstanceOf(NetConnectionException.class, t);
    }

    @Test
    void clientReconnectsWhenTheServerComesBack() throws Exception {
        server = startEchoServer(serverConfig());
        int port = server.port();
        NioClientConfig cc = clientConfig(server);
        cc.reconnectMinBackoffMillis = 20;
        cc.reconnectMaxBackoffMillis = 200;
        client = startClient(cc);
        assertArrayEquals(new byte[]{1}, client.sendRequest(null, echo(new byte[]{1}), BytesDecoder.FACTORY, 3000).get());
        server.stop();
        Peer peer = client.peers().get(0);
        waitUntil("disconnected", 5000, () -> peer.status() != Peer.Status.CONNECTED);
        NioServerConfig again = serverConfig();
        again.port = port;
        server = startEchoServer(again);
        client.waitForConnected(10_000);
        assertArrayEquals(new byte[]{2}, client.sendRequest(null, echo(new byte[]{2}), BytesDecoder.FACTORY, 3000).get());
    }

    @Test
    void requestsSentWhileConnectingWaitForTheHandshake() throws Exception {
        server = startEchoServer(serverConfig());
        client = new NioClient(clientConfig(server));
        client.start();
        // no waitForConnected: the peer is still connecting
        assertArrayEquals(new byte[]{7}, client.sendRequest(null, echo(new byte[]{7}), BytesDecoder.FACTORY, 5000)
                .get(10, TimeUnit.SECONDS));
    }

    @Test
    void unreachableServerFailsCallsWithAConnectionError() throws Exception {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort();
        }
        NioClientConfig cc = new NioClientConfig();
        cc.servers.add("127.0.0.1:" + deadPort);
        cc.reconnectMinBackoffMillis = 500;
        client = new NioClient(cc);
        client.start();
        Throwable t = causeOf(client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 60_000), 5000);
        assertInstanceOf(NetConnectionException.class, t);
        NetConnectionException e = assertThrows(NetConnectionException.class, () -> client.waitForConnected(100));
        assertTrue(e.getMessage().contains(String.valueOf(deadPort)), e.getMessage());
    }

    @Test
    void aRequestWaitingForTheHandshakeTimesOutAtItsOwnDeadline() throws Exception {
        try (ServerSocket mute = new ServerSocket(0)) {   // accepts (the kernel does), never answers the handshake
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + mute.getLocalPort());
            client = new NioClient(cc);
            client.start();
            long start = System.nanoTime();
            Throwable t = causeOf(client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 200), 5000);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertInstanceOf(NetTimeoutException.class, t);
            assertTrue(((NetTimeoutException) t).neverSent(), "it waited for the connection: never sent");
            assertTrue(tookMillis < 4000, "failed after " + tookMillis + " ms, not at its 200 ms deadline");
        }
    }

    @Test
    void aRequestThatNeverLeftFailsAsNotSentWhenTheConnectionCloses() throws Exception {
        try (ServerSocket hangsUp = new ServerSocket(0)) {   // accepts, never answers the handshake, then closes
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + hangsUp.getLocalPort());
            client = new NioClient(cc);
            client.start();
            CompletableFuture<byte[]> f = client.sendRequest(null, echo(new byte[1]), BytesDecoder.FACTORY, 10_000);
            hangsUp.accept().close();
            Throwable t = causeOf(f, 5000);
            // certainly not received, so a caller may send it again (RaftClient retries it within its deadline)
            assertInstanceOf(NetNotSentException.class, t);
        }
    }

    @Test
    void aBodyThatFailsToEncodeFailsItsRequestAndTheClientGoesOn() throws Exception {
        server = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.reconnectMinBackoffMillis = 20;
        client = startClient(cc);
        io.poyang.codec.Encodable broken = new io.poyang.codec.Encodable() {
            @Override
            public int encodedSize() {
                return 100;
            }

            @Override
            public boolean encode(io.poyang.codec.EncodeContext context, java.nio.ByteBuffer dest) {
                dest.put((byte) 1);
                throw new IllegalStateException("a bug in the body (injected)");
            }
        };
        Throwable t = causeOf(client.sendRequest(null, WritePacket.request(Commands.ECHO, broken), BytesDecoder.FACTORY,
                5000), 5000);
        assertInstanceOf(NetException.class, t);
        assertTrue(t.getMessage().contains("could not encode"), t.getMessage());
        // the connection went (its byte stream was broken), the I/O worker lives on: the client
        // reconnects and serves calls again
        waitUntil("an echo through the reconnected client", 10_000, () -> {
            try {
                return client.sendRequest(null, echo(new byte[]{3}), BytesDecoder.FACTORY, 1000)
                        .get(2, TimeUnit.SECONDS)[0] == 3;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void callsGoToTheServerThatIsStillUp() throws Exception {
        server = startEchoServer(serverConfig());
        server2 = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server, server2);
        cc.reconnectMinBackoffMillis = 1000;
        client = startClient(cc);
        for (int i = 0; i < 10; i++) {
            client.sendRequest(null, echo(new byte[]{(byte) i}), BytesDecoder.FACTORY, 3000).get();
        }
        server.stop();
        waitUntil("one peer down", 5000, () -> client.peers().stream().filter(Peer::isConnected).count() == 1);
        for (int i = 0; i < 20; i++) {
            assertArrayEquals(new byte[]{(byte) i}, client.sendRequest(null, echo(new byte[]{(byte) i}),
                    BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void aRemovedPeerFailsItsCallsAndIsNotReconnected() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        Peer peer = client.peers().get(0);
        client.removePeer(peer);
        waitUntil("removed", 5000, () -> peer.status() == Peer.Status.REMOVED);
        assertTrue(client.peers().isEmpty());
        Throwable t = causeOf(client.sendRequest(peer, echo(new byte[1]), BytesDecoder.FACTORY, 3000), 5000);
        assertInstanceOf(NetConnectionException.class, t);
    }
}
