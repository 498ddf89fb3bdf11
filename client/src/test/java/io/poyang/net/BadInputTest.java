package io.poyang.net;

import io.poyang.codec.PbCallback;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * Each kind of bad input gets an error response or a closed connection within a bounded time, and
 * the server goes on serving a well-behaved client. Raw sockets play the bad clients.
 */
class BadInputTest {

    /** A command whose body is protobuf-decoded (a Handshake message), so a corrupt body is detectable. */
    private static final int STRICT = 70;
    private static final int MAX_FRAME = 64 * 1024;
    private NioServer server;
    private NioClient goodClient;

    @BeforeEach
    void start() throws Exception {
        ImpossibleStates.reset();
        NioServerConfig sc = serverConfig();
        sc.maxFrameBytes = MAX_FRAME;
        sc.handshakeTimeoutMillis = 300;
        sc.idleTimeoutMillis = 500;
        sc.writeStallTimeoutMillis = 700;
        sc.maxWriteBacklogBytes = 1024 * 1024;
        server = new NioServer(sc);
        server.register(Commands.ECHO, new EchoProcessor());
        server.register(STRICT, new ReqProcessor<Handshake>() {
            @Override
            public PbCallback<Handshake> createDecoder() {
                return new Handshake.Decoder();
            }

            @Override
            public WritePacket process(ReqContext context, Handshake body) {
                return WritePacket.response(null);
            }
        });
        server.start();
        NioClientConfig cc = clientConfig(server);
        cc.heartbeatIntervalMillis = 100; // well inside the server's short idle timeout
        goodClient = startClient(cc);
    }

    @AfterEach
    void stop() throws Exception {
        try {
            assertServerStillServes();
        } finally {
            stopQuietly(goodClient, server);
        }
        assertEquals(0, ImpossibleStates.count());
    }

    private void assertServerStillServes() throws Exception {
        byte[] body = {4, 2};
        assertArrayEquals(body, goodClient.sendRequest(null, echo(body), BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS));
    }

    private static byte[] lengthPrefix(int length) {
        return ByteBuffer.allocate(4).putInt(length).array();
    }

    @Test
    void randomBytesBeforeTheHandshakeCloseTheConnection() throws Exception {
        byte[] junk = new byte[4096];
        new Random(42).nextBytes(junk);
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.send(junk);
            assertTrue(raw.closedByPeer(5000));
        }
    }

    @Test
    void randomBytesAfterTheHandshakeCloseTheConnection() throws Exception {
        byte[] junk = new byte[4096];
        new Random(7).nextBytes(junk);
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            raw.send(junk);
            assertTrue(raw.closedByPeer(5000));
        }
    }

    @Test
    void lengthOverTheLimitClosesTheConnection() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            raw.send(lengthPrefix(MAX_FRAME + 1));
            raw.send(new byte[100]);
            assertTrue(raw.closedByPeer(5000));
        }
        // before the handshake the limit is much smaller: no big allocation for strangers
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.send(lengthPrefix(PacketReader.HANDSHAKE_MAX_FRAME_BYTES + 1));
            assertTrue(raw.closedByPeer(5000));
        }
    }

    @Test
    void negativeOrZeroLengthClosesTheConnection() throws Exception {
        for (int len : new int[]{-1, Integer.MIN_VALUE, 0}) {
            try (RawConnection raw = RawConnection.connect(server.port())) {
                raw.handshake();
                raw.send(lengthPrefix(len));
                assertTrue(raw.closedByPeer(5000), "length " + len);
            }
        }
    }

    @Test
    void truncatedFrameFollowedByCloseIsCleanedUp() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            raw.send(lengthPrefix(100));
            raw.send(new byte[]{0x08, 0x01, 0x10});
            raw.socket.shutdownOutput();
            assertTrue(raw.closedByPeer(5000));
        }
        waitUntil("only the good client's connection is left", 5000,
                () -> server.workers[0].pendingConnectionsForTest() == 1);
    }

    @Test
    void truncatedFrameLeftHangingIsClosedByTheIdleTimeout() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            raw.send(lengthPrefix(100));
            raw.send(new byte[]{0x08, 0x01});
            long start = System.nanoTime();
            assertTrue(raw.closedByPeer(5000));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(400));
        }
    }

    @Test
    void unknownCommandGetsCommandNotFoundAndTheConnectionLivesOn() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            WritePacket p = WritePacket.request(4242, new BytesBody(new byte[]{1, 2, 3}));
            p.seq = 5;
            raw.sendPacket(p);
            RawConnection.Decoded d = raw.readPacket();
            assertEquals(5, d.seq);
            assertEquals(ResponseCode.COMMAND_NOT_FOUND, d.responseCode);
            WritePacket e = echo(new byte[]{9});
            e.seq = 6;
            raw.sendPacket(e);
            assertEquals(6, raw.readPacket().seq);
        }
    }

    @Test
    void corruptBodyGetsBadRequestAndTheConnectionLivesOn() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            // a Handshake body whose field 1 (fixed64) arrives as a varint, then a varint that never ends
            byte[][] bodies = {RawConnection.hex("0801"), RawConnection.hex("10ffffffffffffffffffff01")};
            int seq = 10;
            for (byte[] body : bodies) {
                WritePacket p = WritePacket.request(STRICT, new BytesBody(body));
                p.seq = seq;
                raw.sendPacket(p);
                RawConnection.Decoded d = raw.readPacket();
                assertEquals(seq, d.seq);
                assertEquals(ResponseCode.BAD_REQUEST, d.responseCode, d.message);
                assertNotNull(d.message);
                seq++;
            }
            WritePacket e = echo(new byte[]{9});
            e.seq = seq;
            raw.sendPacket(e);
            assertEquals(seq, raw.readPacket().seq);
        }
    }

    @Test
    void corruptHeaderThatCannotBeAnsweredClosesTheConnection() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            // field 1 (packet type, a varint) sent as fixed32: nobody to answer, so close
            raw.sendFrame(RawConnection.hex("0d01000000"));
            assertTrue(raw.closedByPeer(5000));
        }
    }

    @Test
    void clientThatNeverCompletesTheHandshakeIsClosed() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            long start = System.nanoTime();
            assertTrue(raw.closedByPeer(5000));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis >= 250 && tookMillis < 3000, "closed after " + tookMillis + " ms");
        }
    }

    @Test
    void firstPacketOtherThanAHandshakeClosesTheConnection() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            WritePacket e = echo(new byte[]{1});
            e.seq = 1;
            raw.sendPacket(e);
            assertTrue(raw.closedByPeer(5000));
        }
        try (RawConnection raw = RawConnection.connect(server.port())) {
            WritePacket hs = WritePacket.request(Commands.HANDSHAKE, new Handshake(0xBADL, 1, 0, 1, 2, 1024, 1, 1));
            hs.seq = 1;
            raw.sendPacket(hs);
            assertTrue(raw.closedByPeer(5000), "a bad magic is refused");
        }
    }

    @Test
    void clientThatSendsWithoutReadingIsBoundedAndThenClosed() throws Exception {
        Socket s = new Socket();
        s.setReceiveBufferSize(16 * 1024);
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        try (RawConnection raw = new RawConnection(s)) {
            raw.handshake();
            byte[] body = new byte[32 * 1024];
            AtomicLong maxBacklog = new AtomicLong();
            CompletableFuture<Long> writer = CompletableFuture.supplyAsync(() -> {
                long sent = 0;
                try {
                    for (int seq = 100; ; seq++) {
                        WritePacket p = echo(body);
                        p.seq = seq;
                        raw.sendPacket(p);
                        sent += body.length;
                    }
                } catch (IOException e) {
                    return sent; // the server closed us: expected
                }
            }, OWN_THREAD);
            long start = System.nanoTime();
            while (!writer.isDone()) {
                maxBacklog.accumulateAndGet(server.workers[0].unwrittenBytesForTest(), Math::max);
                assertServerStillServes();
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "not closed in time");
                Thread.sleep(5); // sampling interval of the backlog, not a synchronisation
            }
            long sent = writer.get(1, TimeUnit.SECONDS);
            assertTrue(sent > 1024 * 1024, "sent only " + sent + " bytes");
            assertTrue(maxBacklog.get() <= 2 * 1024 * 1024, "backlog grew to " + maxBacklog.get() + " bytes");
            assertTrue(raw.closedByPeer(5000));
        }
        waitUntil("the backlog is released", 5000, () -> server.workers[0].unwrittenBytesForTest() == 0);
    }

    @Test
    void requestThatArrivesPastItsDeadlineIsDropped() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            WritePacket late = echo(new byte[]{1});
            late.seq = 20;
            late.timeoutNanos = -1;
            raw.sendPacket(late);
            WritePacket onTime = echo(new byte[]{2});
            onTime.seq = 21;
            onTime.timeoutNanos = 1_000_000_000L;
            raw.sendPacket(onTime);
            assertEquals(21, raw.readPacket().seq, "the expired request got no answer");
            assertEquals(1, server.workers[0].droppedExpiredForTest());
        }
    }

    /** A header field of a frame (1 type, 2 command, 3 seq) as the server side reads it. */
    private static final class Header extends PbCallback<Header> {
        long type;
        long seq;

        @Override
        protected int wireTypeOf(int field) {
            return field <= 5 || field == 7 ? io.poyang.codec.PbWireType.VARINT : io.poyang.codec.PbWireType.UNKNOWN;
        }

        @Override
        protected void readVarint(int field, long value) {
            if (field == 1) {
                type = value;
            } else if (field == 3) {
                seq = value;
            }
        }

        @Override
        protected Header end() {
            return this;
        }
    }

    private static byte[] readFrame(java.io.DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }

    private static void writeFrame(java.io.OutputStream out, ByteBuffer m) throws IOException {
        m.flip();
        java.io.DataOutputStream d = new java.io.DataOutputStream(out);
        d.writeInt(m.remaining());
        d.write(m.array(), 0, m.remaining());
        d.flush();
    }

    @Test
    void aResponseWhoseSeqChangesWithinTheFrameLeavesNoRequestBehind() throws Exception {
        try (java.net.ServerSocket fake = new java.net.ServerSocket(0, 5, java.net.InetAddress.getLoopbackAddress())) {
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + fake.getLocalPort());
            cc.heartbeatIntervalMillis = 0;
            NioClient c = new NioClient(cc);
            c.start();
            try (Socket s = fake.accept()) {
                java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
                Header hs = io.poyang.codec.PbParser.parse(readFrame(in), new Header());
                ByteBuffer m = ByteBuffer.allocate(256);
                io.poyang.codec.PbUtil.writeInt32Field(m, 1, PacketType.RESPONSE);
                io.poyang.codec.PbUtil.writeInt32Field(m, 2, Commands.HANDSHAKE);
                io.poyang.codec.PbUtil.writeInt32Field(m, 3, (int) hs.seq);
                io.poyang.codec.PbUtil.writeBytesField(m, 15, io.poyang.codec.EncodeContext.encodeToArray(
                        new Handshake(Handshake.MAGIC, 1, 0, 1, 2, 0, 0, 0)));
                writeFrame(s.getOutputStream(), m);
                c.waitForConnected(5_000);
                CompletableFuture<byte[]> a = c.sendRequest(null, WritePacket.request(Commands.ECHO,
                        new BytesBody(new byte[]{1})), BytesDecoder.FACTORY, 1_000);
                CompletableFuture<byte[]> b = c.sendRequest(null, WritePacket.request(Commands.ECHO,
                        new BytesBody(new byte[]{2})), BytesDecoder.FACTORY, 1_000);
                Header ra = io.poyang.codec.PbParser.parse(readFrame(in), new Header());
                Header rb = io.poyang.codec.PbParser.parse(readFrame(in), new Header());
                // A's seq, a body, then B's seq again after it
                m = ByteBuffer.allocate(256);
                io.poyang.codec.PbUtil.writeInt32Field(m, 1, PacketType.RESPONSE);
                io.poyang.codec.PbUtil.writeInt32Field(m, 3, (int) ra.seq);
                io.poyang.codec.PbUtil.writeBytesField(m, 15, new byte[]{42});
                io.poyang.codec.PbUtil.writeInt32Field(m, 3, (int) rb.seq);
                writeFrame(s.getOutputStream(), m);
                assertThrows(java.util.concurrent.ExecutionException.class, () -> a.get(5, TimeUnit.SECONDS),
                        "a malformed answer is not a result");
                // B was not answered: it ends with its own timeout, and nothing stays pending
                java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                        () -> b.get(5, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof NetTimeoutException, e.getCause().toString());
                waitUntil("no request pending", 5_000, () -> c.pendingRequests() == 0);
            } finally {
                c.stop();
            }
        }
    }
}
