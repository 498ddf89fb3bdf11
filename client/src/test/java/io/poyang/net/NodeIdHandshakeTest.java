package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * A peer added for a node id reaches only that node: the handshake names the id meant, a server
 * with another id refuses it with WRONG_NODE and closes, and a client drops a server that says it
 * is another node. Nothing is sent on such a connection, and the peer says why.
 */
class NodeIdHandshakeTest {

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

    private static NioServer startNode(int nodeId) {
        NioServerConfig sc = serverConfig();
        sc.nodeId = nodeId;
        return startEchoServer(sc);
    }

    private static NioClient startEmptyClient() {
        NioClientConfig cc = new NioClientConfig();
        cc.stopTimeoutMillis = 1000;
        cc.reconnectMinBackoffMillis = 20;
        cc.reconnectMaxBackoffMillis = 100;
        NioClient c = new NioClient(cc);
        c.start();
        return c;
    }

    @Test
    void aServerRefusesAConnectionMeantForAnotherNodeAndSaysWhichNodeItIs() throws Exception {
        server = startNode(3);
        client = startEmptyClient();
        Peer peer = client.addPeer("127.0.0.1:" + server.port(), 2);
        waitUntil("the refusal to reach the client", 5000, () -> peer.wrongNode() != null);
        assertEquals("the address 127.0.0.1:" + server.port() + " of node 2 reaches node 3", peer.wrongNode());
        // reconnecting with back-off, and refused again each time: never connected meanwhile (the
        // server's packets are the handshakes it read, the first one included)
        waitUntil("the client to try twice more", 5000, () -> {
            assertNotEquals(Peer.Status.CONNECTED, peer.status(), "a reconnect reached the wrong node");
            return server.traffic().packetsReceived() >= 3;
        });
        // a request fails, the echo never runs
        Throwable t = causeOf(client.sendRequest(peer, echo(new byte[]{1}), BytesDecoder.FACTORY, 2000), 5000);
        assertInstanceOf(NetException.class, t);
        assertEquals(0, server.traffic().requestsReceived(), "no request got past the refused handshake");
    }

    @Test
    void theRefusalIsAnsweredThenTheConnectionClosesAndLaterPacketsAreNotRead() throws Exception {
        server = startNode(3);
        try (RawConnection raw = RawConnection.connect(server.port())) {
            WritePacket hs = WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC,
                    Handshake.MAJOR_VERSION, Handshake.MINOR_VERSION, 1, 2, 1 << 20, 1000, 1 << 20, 0, 2));
            hs.seq = 1;
            hs.timeoutNanos = 1_000_000_000L;
            WritePacket after = echo(new byte[]{1});
            after.seq = 2;
            after.timeoutNanos = 1_000_000_000L;
            // the echo is pipelined behind the handshake: it must not be answered
            raw.send(concat(RawConnection.frame(RawConnection.encode(hs)), RawConnection.frame(RawConnection.encode(after))));
            RawConnection.Decoded answer = raw.readPacket();
            assertEquals(PacketType.RESPONSE, answer.type);
            assertEquals(1, answer.seq);
            assertEquals(ResponseCode.WRONG_NODE, answer.responseCode);
            assertEquals("this is node 3, not node 2", answer.message);
            assertEquals(3, answer.bizCode, "the detail field: the id of the node there");
            assertTrue(raw.closedByPeer(5000), "the server closes the refused connection");
        }
        assertEquals(0, server.traffic().requestsReceived());
        waitUntil("the refused connection to be gone", 5000, () -> server.traffic().connections() == 0);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void theRightNodeIdAConnectionForAnyNodeAndAServerWithoutAnIdAreAccepted() throws Exception {
        server = startNode(3);
        client = startEmptyClient();
        Peer three = client.addPeer("127.0.0.1:" + server.port(), 3);
        Peer any = client.addPeer("127.0.0.1:" + server.port());
        assertNotSame(three, any, "one address, two expectations: two peers");
        client.waitForConnected(5000);
        assertEquals(3, three.remoteHandshake().nodeId());
        assertArrayEquals(new byte[]{7}, client.sendRequest(three, echo(new byte[]{7}), BytesDecoder.FACTORY, 3000)
                .get(5, TimeUnit.SECONDS));
        assertArrayEquals(new byte[]{8}, client.sendRequest(any, echo(new byte[]{8}), BytesDecoder.FACTORY, 3000)
                .get(5, TimeUnit.SECONDS));
        assertNull(three.wrongNode());

        // a server that is no cluster node (or speaks minor version 0) is taken at its address
        NioServer plain = startNode(0);
        try {
            Peer two = client.addPeer("127.0.0.1:" + plain.port(), 2);
            client.waitForConnected(5000);
            assertEquals(0, two.remoteHandshake().nodeId());
            assertArrayEquals(new byte[]{9}, client.sendRequest(two, echo(new byte[]{9}), BytesDecoder.FACTORY, 3000)
                    .get(5, TimeUnit.SECONDS));
        } finally {
            stopQuietly(plain);
        }
    }

    @Test
    void aClientDropsAServerThatAnswersAsAnotherNode() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            // a server that does not check the id it was meant for, and says it is node 5
            CompletableFuture<Boolean> serverSide = CompletableFuture.supplyAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    RawConnection.Decoded hs = raw.readPacket();
                    WritePacket answer = WritePacket.response(new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION,
                            Handshake.MINOR_VERSION, 1, 2, 1 << 20, 100, 1 << 20, 5, 0));
                    answer.command = Commands.HANDSHAKE;
                    answer.seq = hs.seq;
                    raw.sendPacket(answer);
                    return raw.closedByPeer(10_000);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }, OWN_THREAD);
            client = startEmptyClient();
            Peer peer = client.addPeer("127.0.0.1:" + fake.getLocalPort(), 4);
            assertTrue(serverSide.get(10, TimeUnit.SECONDS), "the client closed the connection");
            waitUntil("the client to name the node that answered", 5000, () -> peer.wrongNode() != null);
            assertEquals("the address 127.0.0.1:" + fake.getLocalPort() + " of node 4 reaches node 5", peer.wrongNode());
            assertNotEquals(Peer.Status.CONNECTED, peer.status());
        }
    }

    @Test
    void theNodeIdsTravelInTheHandshake() {
        Handshake h = new Handshake(Handshake.MAGIC, 1, 1, 1, 2, 1024, 10, 4096, 3, 0).expecting(7);
        Handshake back = io.poyang.codec.PbParser.parse(RawConnection.encode(h), new Handshake.Decoder());
        assertEquals(3, back.nodeId());
        assertEquals(7, back.expectedNodeId());
        assertNull(back.misaddressedTo(7));
        assertNull(back.misaddressedTo(0), "a side with no node id accepts any");
        assertEquals("this is node 6, not node 7", back.misaddressedTo(6));
        assertEquals("negative node id in the handshake",
                new Handshake(Handshake.MAGIC, 1, 1, 1, 2, 1024, 10, 4096, -1, 0).incompatibility());
    }
}
