package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * Mistakes and rare states that must cost one request, never a worker or another request: a
 * processor that answers with a packet that is not a response, and a seq that wraps onto a request
 * still pending.
 */
class WorkerRobustnessTest {

    private static final int WRONG_ANSWER = 60;
    private static final int HELD = 61;
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

    @Test
    void aProcessorThatAnswersWithARequestPacketGivesItsCallerSysErrorAndTheWorkerGoesOn() throws Exception {
        NioServerConfig sc = serverConfig();
        server = new NioServer(sc);
        server.register(Commands.ECHO, new EchoProcessor());
        server.register(WRONG_ANSWER, processor((ctx, body) -> WritePacket.request(Commands.ECHO, null)));
        server.start();
        client = startClient(clientConfig(server));
        Throwable t = causeOf(client.sendRequest(null, WritePacket.request(WRONG_ANSWER, null), BytesDecoder.FACTORY, 5000));
        assertInstanceOf(RemoteException.class, t);
        assertEquals(ResponseCode.SYS_ERROR, ((RemoteException) t).responseCode(), t.getMessage());
        assertTrue(t.getMessage().contains("not a response"), t.getMessage());
        assertEquals(0, server.crashedWorkers());
        // the same connection serves the next request
        assertArrayEquals(new byte[]{5}, client.sendRequest(null, echo(new byte[]{5}), BytesDecoder.FACTORY, 5000)
                .get(10, TimeUnit.SECONDS));
    }

    @Test
    void aSeqThatWrapsOntoAPendingRequestIsSkippedAndBothRequestsEndOnTheirOwn() throws Exception {
        NioServerConfig sc = serverConfig();
        server = new NioServer(sc);
        server.register(Commands.ECHO, new EchoProcessor());
        Holding held = new Holding();
        server.register(HELD, held);
        server.start();
        client = startClient(clientConfig(server));
        Peer peer = client.peers().get(0);
        CompletableFuture<byte[]> a = client.sendRequest(peer, WritePacket.request(HELD, null), BytesDecoder.FACTORY, 1500);
        waitUntil("a to be held on the server", 5000, () -> held.size() == 1);
        int seqOfA = held.held.peek().seq;
        // 2^31 requests later: the connection's next seq is a's again
        NioConnection c = peer.connection;
        Field next = NioConnection.class.getDeclaredField("nextSeq");
        next.setAccessible(true);
        CompletableFuture<Void> set = new CompletableFuture<>();
        peer.worker.execute(() -> {
            try {
                next.setInt(c, seqOfA);
                set.complete(null);
            } catch (IllegalAccessException e) {
                set.completeExceptionally(e);
            }
        });
        set.get(5, TimeUnit.SECONDS);
        CompletableFuture<byte[]> b = client.sendRequest(peer, echo(new byte[]{9}), BytesDecoder.FACTORY, 5000);
        assertArrayEquals(new byte[]{9}, b.get(10, TimeUnit.SECONDS), "b got its own answer");
        assertInstanceOf(NetTimeoutException.class, causeOf(a, 10_000), "a still times out at its deadline");
    }
}
