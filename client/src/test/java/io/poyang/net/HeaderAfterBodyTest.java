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
 * A packet's body is decoded by the header as it stands when the body starts, and the packet is
 * handled by the header at its end: a field repeated after the body with another value (only a
 * buggy or hostile peer writes one) makes the packet malformed, not a success of something else
 * (review of the net layer, #8). Raw sockets play the peer; protobuf lets a field repeat, and the
 * last value wins, so the extra field is appended to a well-formed packet.
 */
class HeaderAfterBodyTest {

    /** Field 2 (command), a varint. */
    private static final int COMMAND_TAG = 0x10;
    /** Field 4 (response code), a varint. */
    private static final int RESPONSE_CODE_TAG = 0x20;

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

    private static byte[] withField(byte[] packet, int tag, int smallValue) {
        byte[] b = java.util.Arrays.copyOf(packet, packet.length + 2);
        b[packet.length] = (byte) tag;
        b[packet.length + 1] = (byte) smallValue;
        return b;
    }

    @Test
    void aRequestWhoseCommandChangesAfterItsBodyIsAnsweredBadRequestAndTheConnectionGoesOn() throws Exception {
        server = new NioServer(serverConfig());
        server.register(Commands.ECHO, new EchoProcessor());
        int other = 71;
        server.register(other, processor((ctx, body) -> WritePacket.response(new BytesBody(new byte[]{42}))));
        server.start();
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            WritePacket p = echo(new byte[]{1, 2, 3});
            p.seq = 5;
            p.timeoutNanos = 1_000_000_000L;
            raw.sendFrame(withField(RawConnection.encode(p), COMMAND_TAG, other));
            RawConnection.Decoded d = raw.readPacket();
            assertEquals(5, d.seq);
            assertEquals(ResponseCode.BAD_REQUEST, d.responseCode, d.message);
            assertTrue(d.message.contains("changed after its body"), d.message);
            WritePacket e = echo(new byte[]{9});
            e.seq = 6;
            e.timeoutNanos = 1_000_000_000L;
            raw.sendPacket(e);
            RawConnection.Decoded again = raw.readPacket();
            assertEquals(6, again.seq);
            assertEquals(ResponseCode.SUCCESS, again.responseCode);
        }
    }

    @Test
    void aResponseWhoseErrorCodeIsClearedAfterItsBodyFailsTheRequest() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    raw.answerHandshake();
                    RawConnection.Decoded req = raw.readPacket();
                    // an error answer (its body is skipped), then the code set back to success
                    WritePacket resp = WritePacket.response(new BytesBody(new byte[]{1, 2}));
                    resp.responseCode = ResponseCode.FLOW_CONTROL;
                    resp.command = req.command;
                    resp.seq = req.seq;
                    raw.sendFrame(withField(RawConnection.encode(resp), RESPONSE_CODE_TAG, ResponseCode.SUCCESS));
                    raw.closedByPeer(10_000);
                } catch (IOException e) {
                    // the client hung up
                }
            }, OWN_THREAD);
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + fake.getLocalPort());
            cc.stopTimeoutMillis = 500;
            client = new NioClient(cc);
            client.start();
            client.waitForConnected(5000);
            Throwable t = causeOf(client.sendRequest(null, echo(new byte[]{1, 2}), BytesDecoder.FACTORY, 5000), 10_000);
            assertInstanceOf(NetException.class, t);
            assertTrue(t.getMessage().contains("changed after its body"), t.getMessage());
            client.stop();
            serverSide.get(15, TimeUnit.SECONDS);
        }
    }
}
