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
 * Sides that both name a cluster and name different ones do not connect: the server answers
 * WRONG_CLUSTER and closes, a client drops a server of another cluster, and the peer says why. A
 * side that names none is taken at its address.
 */
class ClusterNameHandshakeTest {

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

    private static NioServer startNode(int nodeId, String cluster) {
        NioServerConfig sc = serverConfig();
        sc.nodeId = nodeId;
        sc.clusterName = cluster;
        return startEchoServer(sc);
    }

    private static NioClient startClient(int nodeId, String cluster) {
        NioClientConfig cc = new NioClientConfig();
        cc.nodeId = nodeId;
        cc.clusterName = cluster;
        cc.stopTimeoutMillis = 1000;
        cc.reconnectMinBackoffMillis = 20;
        cc.reconnectMaxBackoffMillis = 100;
        NioClient c = new NioClient(cc);
        c.start();
        return c;
    }

    @Test
    void aServerRefusesANodeOfAnotherClusterEvenWithTheNodeIdItMeant() throws Exception {
        server = startNode(2, "prod");
        client = startClient(1, "staging");
        Peer peer = client.addPeer("127.0.0.1:" + server.port(), 2);
        waitUntil("the refusal to reach the client", 5000, () -> peer.wrongNode() != null);
        assertEquals("the address 127.0.0.1:" + server.port() + " of node 2 reaches a node of another cluster,"
                + " which says: this is node 2 of cluster 'prod', not a node of cluster 'staging'", peer.wrongNode());
        Throwable t = causeOf(client.sendRequest(peer, echo(new byte[]{1}), BytesDecoder.FACTORY, 2000), 5000);
        assertInstanceOf(NetException.class, t);
        assertNotEquals(Peer.Status.CONNECTED, peer.status());
        assertEquals(0, server.traffic().requestsReceived(), "no request got past the refused handshake");
    }

    @Test
    void theRefusalSaysWrongClusterWithTheServersNodeIdThenTheConnectionCloses() throws Exception {
        server = startNode(3, "prod");
        try (RawConnection raw = RawConnection.connect(server.port())) {
            WritePacket hs = WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC,
                    Handshake.MAJOR_VERSION, Handshake.MINOR_VERSION, 1, 2, 1 << 20, 1000, 1 << 20, 0, 0, "dev"));
            hs.seq = 1;
            hs.timeoutNanos = 1_000_000_000L;
            raw.sendPacket(hs);
            RawConnection.Decoded answer = raw.readPacket();
            assertEquals(ResponseCode.WRONG_CLUSTER, answer.responseCode);
            assertEquals(3, answer.bizCode);
            assertEquals("this is node 3 of cluster 'prod', not a node of cluster 'dev'", answer.message);
            assertTrue(raw.closedByPeer(5000), "the server closes the refused connection");
        }
    }

    @Test
    void aClientDropsAServerOfAnotherCluster() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            // a server that does not check the client's cluster, and names its own
            CompletableFuture<Boolean> serverSide = CompletableFuture.supplyAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    RawConnection.Decoded hs = raw.readPacket();
                    WritePacket answer = WritePacket.response(new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION,
                            Handshake.MINOR_VERSION, 1, 2, 1 << 20, 100, 1 << 20, 4, 0, "staging"));
                    answer.command = Commands.HANDSHAKE;
                    answer.seq = hs.seq;
                    raw.sendPacket(answer);
                    return raw.closedByPeer(10_000);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }, OWN_THREAD);
            client = startClient(1, "prod");
            Peer peer = client.addPeer("127.0.0.1:" + fake.getLocalPort(), 4);
            assertTrue(serverSide.get(10, TimeUnit.SECONDS), "the client closed the connection");
            waitUntil("the client to name the cluster that answered", 5000, () -> peer.wrongNode() != null);
            assertEquals("the address 127.0.0.1:" + fake.getLocalPort() + " of node 4 reaches node 4 of cluster"
                    + " 'staging', not of cluster 'prod'", peer.wrongNode());
        }
    }

    @Test
    void theSameClusterOrASideThatNamesNoneConnects() throws Exception {
        server = startNode(2, "prod");
        client = startClient(1, "prod");
        Peer same = client.addPeer("127.0.0.1:" + server.port(), 2);
        client.waitForConnected(5000);
        assertEquals("prod", same.remoteHandshake().clusterName());
        assertArrayEquals(new byte[]{7}, client.sendRequest(same, echo(new byte[]{7}), BytesDecoder.FACTORY, 3000)
                .get(5, TimeUnit.SECONDS));
        NioClient unnamed = startClient(0, null);
        try {
            Peer p = unnamed.addPeer("127.0.0.1:" + server.port(), 2);
            unnamed.waitForConnected(5000);
            assertArrayEquals(new byte[]{8}, unnamed.sendRequest(p, echo(new byte[]{8}), BytesDecoder.FACTORY, 3000)
                    .get(5, TimeUnit.SECONDS));
            assertNull(p.wrongNode());
        } finally {
            stopQuietly(unnamed);
        }
        NioServer unnamedServer = startNode(3, null);
        try {
            Peer three = client.addPeer("127.0.0.1:" + unnamedServer.port(), 3);
            waitUntil("connected to the unnamed server", 5000, () -> three.status() == Peer.Status.CONNECTED);
            assertEquals("", three.remoteHandshake().clusterName());
        } finally {
            stopQuietly(unnamedServer);
        }
    }

    @Test
    void theNameTravelsInTheHandshakeAndBadNamesAreRefused() {
        Handshake h = new Handshake(Handshake.MAGIC, 1, 2, 1, 2, 1024, 10, 4096, 3, 0, "prod-eu.1");
        Handshake back = io.poyang.codec.PbParser.parse(RawConnection.encode(h), new Handshake.Decoder());
        assertEquals("prod-eu.1", back.clusterName());
        assertNull(back.otherCluster("prod-eu.1"));
        assertNull(back.otherCluster(null), "a side that names none accepts any");
        assertEquals("prod-eu.1", back.otherCluster("dev"));
        assertNull(Handshake.checkClusterName(null));
        assertNull(Handshake.checkClusterName(""));
        assertNotNull(Handshake.checkClusterName("two words"));
        assertNotNull(Handshake.checkClusterName("caf\u00e9"));
        assertNotNull(Handshake.checkClusterName(new String(new char[65]).replace('\0', 'x')));
        NioClientConfig cc = new NioClientConfig();
        cc.clusterName = "two words";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new NioClient(cc).start());
        assertTrue(e.getMessage().contains("clusterName"), e.getMessage());
    }
}
