package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbParser;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static io.poyang.net.RawConnection.hex;
import static org.junit.jupiter.api.Assertions.*;

/** The bytes on the wire are what protoc produces and accepts (vectors made by protoc 3.25.3). */
class PacketWireTest {

    private static final Map<String, String> VECTORS = loadVectors();
    private NioServer server;
    private NioClient client;

    private static Map<String, String> loadVectors() {
        Map<String, String> m = new HashMap<>();
        try (InputStream in = PacketWireTest.class.getResourceAsStream("packet-vectors.txt");
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("#") || line.trim().isEmpty()) {
                    continue;
                }
                String[] parts = line.split("\\|");
                m.put(parts[0], parts[parts.length - 1]);
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return m;
    }

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count());
    }

    private static Handshake referenceHandshake() {
        return new Handshake(Handshake.MAGIC, 1, 0, 0x0102030405060708L, 0x1112131415161718L, 8388608, 100000, 536870912);
    }

    @Test
    void encodingMatchesProtoc() {
        assertEquals(VECTORS.get("handshake"), hex(RawConnection.encode(referenceHandshake())));

        WritePacket hs = WritePacket.request(Commands.HANDSHAKE, referenceHandshake());
        hs.seq = 1;
        hs.timeoutNanos = 5_000_000_000L;
        assertEquals(VECTORS.get("handshake_request"), hex(RawConnection.encode(hs)));

        WritePacket echo = echo("hello".getBytes(StandardCharsets.UTF_8));
        echo.seq = 7;
        echo.timeoutNanos = 3_000_000_000L;
        assertEquals(VECTORS.get("echo_request"), hex(RawConnection.encode(echo)));

        WritePacket resp = WritePacket.response(new BytesBody("hello".getBytes(StandardCharsets.UTF_8)));
        resp.command = 3;
        resp.seq = 7;
        assertEquals(VECTORS.get("echo_response"), hex(RawConnection.encode(resp)));

        WritePacket biz = WritePacket.bizError(42, "no such key: app.db").extra("trace-1".getBytes(StandardCharsets.UTF_8));
        biz.command = 300;
        biz.seq = 123456;
        assertEquals(VECTORS.get("biz_error"), hex(RawConnection.encode(biz)));

        assertEquals(VECTORS.get("one_way"), hex(RawConnection.encode(WritePacket.oneWay(2, null).extra(new byte[]{1, 2}))));

        Handshake withIds = new Handshake(Handshake.MAGIC, 1, 1, 0x0102030405060708L, 0x1112131415161718L, 8388608,
                100000, 536870912, 3, 0).expecting(2);
        assertEquals(VECTORS.get("handshake_node_ids"), hex(RawConnection.encode(withIds)));

        WritePacket wrongNode = WritePacket.error(ResponseCode.WRONG_NODE, 3, "this is node 3, not node 2");
        wrongNode.command = Commands.HANDSHAKE;
        wrongNode.seq = 1;
        assertEquals(VECTORS.get("wrong_node"), hex(RawConnection.encode(wrongNode)));

        Handshake named = new Handshake(Handshake.MAGIC, 1, 2, 0x0102030405060708L, 0x1112131415161718L, 8388608,
                100000, 536870912, 3, 0, "prod").expecting(2);
        assertEquals(VECTORS.get("handshake_cluster_name"), hex(RawConnection.encode(named)));

        WritePacket wrongCluster = WritePacket.error(ResponseCode.WRONG_CLUSTER, 3,
                "this is node 3 of cluster 'prod', not a node of cluster 'dev'");
        wrongCluster.command = Commands.HANDSHAKE;
        wrongCluster.seq = 1;
        assertEquals(VECTORS.get("wrong_cluster"), hex(RawConnection.encode(wrongCluster)));

        WritePacket neg = WritePacket.request(-5, null);
        neg.seq = Integer.MAX_VALUE;
        neg.timeoutNanos = 1;
        assertEquals(VECTORS.get("negative_command"), hex(RawConnection.encode(neg)));
    }

    @Test
    void resumableEncodingInTinyBuffersGivesTheSameBytes() {
        WritePacket biz = WritePacket.bizError(42, "no such key: app.db").extra("trace-1".getBytes(StandardCharsets.UTF_8));
        biz.command = 300;
        biz.seq = 123456;
        int size = biz.prepareSize();
        ByteBuffer all = ByteBuffer.allocate(size);
        EncodeContext c = new EncodeContext();
        boolean done = false;
        while (!done) {
            ByteBuffer small = ByteBuffer.allocate(EncodeContext.MIN_BUFFER_BYTES);
            done = biz.encode(c, small);
            small.flip();
            all.put(small);
        }
        assertEquals(VECTORS.get("biz_error"), hex(all.array()));
    }

    @Test
    void handshakeDecodesFromProtocBytes() {
        Handshake h = PbParser.parse(RawConnection.hex(VECTORS.get("handshake")), new Handshake.Decoder());
        assertNull(h.incompatibility());
        assertEquals(0x0102030405060708L, h.uuidMost());
        assertEquals(0x1112131415161718L, h.uuidLeast());
        assertEquals(8388608, h.maxFrameBytes());
        assertEquals(100000, h.maxInFlightRequests());
        assertEquals(536870912L, h.maxInFlightBytes());
        assertEquals(0, h.nodeId(), "minor version 0 sends no node ids");
        assertEquals(0, h.expectedNodeId());

        Handshake ids = PbParser.parse(RawConnection.hex(VECTORS.get("handshake_node_ids")), new Handshake.Decoder());
        assertEquals(1, ids.minorVersion());
        assertEquals(3, ids.nodeId());
        assertEquals(2, ids.expectedNodeId());
        assertEquals(536870912L, ids.maxInFlightBytes());
        assertEquals("", ids.clusterName(), "minor version 1 names no cluster");

        Handshake named = PbParser.parse(RawConnection.hex(VECTORS.get("handshake_cluster_name")), new Handshake.Decoder());
        assertNull(named.incompatibility());
        assertEquals(2, named.minorVersion());
        assertEquals("prod", named.clusterName());
        assertEquals(3, named.nodeId());
    }

    @Test
    void serverAcceptsProtocFramesAndAnswersWithProtocBytes() throws Exception {
        server = startEchoServer(serverConfig());
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.sendFrame(RawConnection.hex(VECTORS.get("handshake_request")));
            RawConnection.Decoded hs = raw.readPacket();
            assertEquals(PacketType.RESPONSE, hs.type);
            assertEquals(1, hs.seq);
            Handshake serverHs = PbParser.parse(hs.body, new Handshake.Decoder());
            assertNull(serverHs.incompatibility());
            assertEquals(server.uuid().getLeastSignificantBits(), serverHs.uuidLeast());

            raw.sendFrame(RawConnection.hex(VECTORS.get("echo_request")));
            assertEquals(VECTORS.get("echo_response"), hex(raw.readFrame()));
        }
    }

    @Test
    void requestSplitAtEveryByteIsDecoded() throws Exception {
        server = startEchoServer(serverConfig());
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            byte[] frame = RawConnection.frame(RawConnection.hex(VECTORS.get("echo_request")));
            for (int i = 0; i < 3; i++) {
                for (byte b : frame) {
                    raw.send(new byte[]{b});
                }
                assertEquals(VECTORS.get("echo_response"), hex(raw.readFrame()));
            }
        }
    }

    @Test
    void requestBodyBeforeTheHeaderIsDecoded() throws Exception {
        server = startEchoServer(serverConfig());
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            // body (15) first, then seq (3), timeout (7), command (2), type (1): legal protobuf
            byte[] packet = RawConnection.hex("7a0568656c6c6f" + "1807" + "3880bcc1960b" + "1003" + "0801");
            raw.sendFrame(packet);
            RawConnection.Decoded d = raw.readPacket();
            assertEquals(PacketType.RESPONSE, d.type);
            assertEquals(7, d.seq);
            assertEquals(ResponseCode.SUCCESS, d.responseCode);
            assertEquals("hello", d.bodyText());
        }
    }

    @Test
    void responseBodyBeforeTheSeqIsDecodedByTheClient() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    RawConnection.Decoded hs = raw.readPacket();
                    WritePacket answer = WritePacket.response(referenceHandshake());
                    answer.command = Commands.HANDSHAKE;
                    answer.seq = hs.seq;
                    raw.sendPacket(answer);
                    RawConnection.Decoded req = raw.readPacket();
                    byte[] body = req.body;
                    // body first, then type and seq
                    ByteBuffer b = ByteBuffer.allocate(64);
                    b.put((byte) 0x7a).put((byte) body.length).put(body);
                    b.put((byte) 0x08).put((byte) 2).put((byte) 0x18).put((byte) req.seq);
                    raw.sendFrame(java.util.Arrays.copyOf(b.array(), b.position()));
                    assertTrue(raw.closedByPeer(10_000));
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }, OWN_THREAD);
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + fake.getLocalPort());
            client = startClient(cc);
            byte[] back = client.sendRequest(null, echo("early".getBytes(StandardCharsets.UTF_8)), BytesDecoder.FACTORY, 5000)
                    .get(10, TimeUnit.SECONDS);
            assertEquals("early", new String(back, StandardCharsets.UTF_8));
            client.stop();
            serverSide.get(10, TimeUnit.SECONDS);
        }
    }
}
