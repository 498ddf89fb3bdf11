package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * {@link WritePacket#onDone()} is called exactly once for every packet the net layer was given,
 * whichever way it ends (sent, failed before it left, refused), and a response whose body cannot
 * be sized is answered with an error in its place (review of the net layer, #4 and #11), and an
 * answered request is not kept alive by the connection's reader.
 */
class PacketDoneTest {

    private static final int BROKEN_RESPONSE = 51;

    private NioServer server;
    private NioClient client;

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count());
    }

    /** An echo request that counts its onDone calls, as a subclass holding a pooled buffer would. */
    private static WritePacket countingEcho(AtomicInteger done) {
        return new WritePacket(PacketType.REQUEST, Commands.ECHO, new BytesBody(new byte[]{1})) {
            @Override
            protected void onDone() {
                done.incrementAndGet();
            }
        };
    }

    @Test
    void aRequestThatIsSentAndAnsweredIsDoneOnce() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        AtomicInteger done = new AtomicInteger();
        client.sendRequest(null, countingEcho(done), BytesDecoder.FACTORY, 5000).get(10, TimeUnit.SECONDS);
        client.stop();
        assertEquals(1, done.get());
    }

    @Test
    void aRequestFailedWhenItsConnectionClosesBeforeItLeftIsDoneOnce() throws Exception {
        try (ServerSocket hangsUp = new ServerSocket(0)) {   // accepts, never answers the handshake, then closes
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + hangsUp.getLocalPort());
            client = new NioClient(cc);
            client.start();
            AtomicInteger done = new AtomicInteger();
            CompletableFuture<byte[]> f = client.sendRequest(null, countingEcho(done), BytesDecoder.FACTORY, 10_000);
            hangsUp.accept().close();
            assertInstanceOf(NetNotSentException.class, causeOf(f, 5000));
            waitUntil("onDone of the failed request", 5000, () -> done.get() >= 1);
            client.stop();
            assertEquals(1, done.get());
        }
    }

    @Test
    void aRequestWaitingForAConnectionWhenTheClientStopsIsDoneOnce() throws Exception {
        try (ServerSocket mute = new ServerSocket(0)) {   // accepts (the kernel does), never answers the handshake
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + mute.getLocalPort());
            client = new NioClient(cc);
            client.start();
            AtomicInteger done = new AtomicInteger();
            CompletableFuture<byte[]> f = client.sendRequest(null, countingEcho(done), BytesDecoder.FACTORY, 60_000);
            client.stop();
            assertNotNull(causeOf(f, 5000));
            assertEquals(1, done.get());
        }
    }

    @Test
    void aRequestToARemovedPeerIsDoneOnce() throws Exception {
        try (ServerSocket mute = new ServerSocket(0)) {
            NioClientConfig cc = new NioClientConfig();
            client = new NioClient(cc);
            client.start();
            Peer peer = client.addPeer("127.0.0.1:" + mute.getLocalPort());
            AtomicInteger done = new AtomicInteger();
            CompletableFuture<byte[]> f = client.sendRequest(peer, countingEcho(done), BytesDecoder.FACTORY, 60_000);
            client.removePeer(peer);
            assertNotNull(causeOf(f, 5000));
            waitUntil("onDone of the request to the removed peer", 5000, () -> done.get() >= 1);
            client.stop();
            assertEquals(1, done.get());
        }
    }

    @Test
    void aResponseThatCannotBeSizedIsAnsweredWithAnErrorNotLeftToTimeOut() throws Exception {
        Encodable unsizable = new Encodable() {
            @Override
            public int encodedSize() {
                throw new IllegalStateException("a bug in the response body (injected)");
            }

            @Override
            public boolean encode(EncodeContext context, ByteBuffer dest) {
                throw new AssertionError("never encoded: sizing failed first");
            }
        };
        server = new NioServer(serverConfig());
        server.register(Commands.ECHO, new EchoProcessor());
        server.register(BROKEN_RESPONSE, processor((ctx, body) -> WritePacket.response(unsizable)));
        server.start();
        client = startClient(clientConfig(server));
        long start = System.nanoTime();
        Throwable t = causeOf(client.sendRequest(null, WritePacket.request(BROKEN_RESPONSE, null),
                BytesDecoder.FACTORY, 20_000), 30_000);
        assertInstanceOf(RemoteException.class, t);
        assertEquals(ResponseCode.SYS_ERROR, ((RemoteException) t).responseCode());
        assertTrue(t.getMessage().contains("could not encode its response"), t.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "answered, not left to time out");
        // the byte stream was intact: the same connection goes on
        assertArrayEquals(new byte[]{7}, client.sendRequest(null, echo(new byte[]{7}), BytesDecoder.FACTORY, 3000)
                .get(5, TimeUnit.SECONDS));
    }
    @Test
    void anAnsweredRequestIsNotKeptByTheConnectionsReader() throws Exception {
        server = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.heartbeatIntervalMillis = 0;   // a quiet connection: no frame comes after the answer
        client = startClient(cc);
        java.lang.ref.WeakReference<Object> held = sendAndForget();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (held.get() != null) {
            assertTrue(System.nanoTime() < deadline, "the answered request (and its callback) is still referenced");
            System.gc();
            Thread.sleep(20);   // polling interval of a deadline-bound wait
        }
    }

    /** Sends an echo whose callback is only referenced by the request; returns a weak reference to it. */
    private java.lang.ref.WeakReference<Object> sendAndForget() throws Exception {
        CompletableFuture<byte[]> answered = new CompletableFuture<>();
        RpcCallback<byte[]> cb = new RpcCallback<byte[]>() {
            @Override
            public void onSuccess(byte[] body) {
                answered.complete(body);
            }

            @Override
            public void onFailure(Throwable error) {
                answered.completeExceptionally(error);
            }
        };
        client.sendRequest(null, echo(new byte[]{1}), BytesDecoder.FACTORY, 5000, CallOptions.IO_THREAD_CALLBACK, cb);
        answered.get(10, TimeUnit.SECONDS);
        return new java.lang.ref.WeakReference<>(cb);
    }
}
