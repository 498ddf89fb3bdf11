package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/** {@link NioServerConfig#maxConnections}: connections past it are closed at once; closing one makes room. */
class ConnectionLimitTest {

    private NioServer server;

    @AfterEach
    void stop() {
        stopQuietly(server);
        assertEquals(0, ImpossibleStates.count());
    }

    @Test
    @Timeout(20)
    void connectionsPastMaxConnectionsAreClosedAtOnceAndRoomReturnsWhenOneCloses() throws Exception {
        ImpossibleStates.reset();
        NioServerConfig c = serverConfig();
        c.maxConnections = 3;
        server = startEchoServer(c);
        assertEquals(3, server.connectionLimit());
        List<RawConnection> served = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RawConnection raw = RawConnection.connect(server.port());
                served.add(raw);
                raw.handshake();
            }
            try (RawConnection fourth = RawConnection.connect(server.port())) {
                assertTrue(fourth.closedByPeer(5_000), "a connection past the limit was not closed");
            }
            served.remove(0).close();
            // the worker gives the room back when it sees the close: a few tries may come before
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (true) {
                RawConnection next = RawConnection.connect(server.port());
                served.add(next);
                try {
                    next.handshake();
                    break;
                } catch (java.io.IOException e) {
                    assertTrue(System.nanoTime() - deadline < 0, "no room for a new connection after one closed");
                    served.remove(next);
                    next.close();
                }
            }
            for (RawConnection raw : served) {
                raw.sendPacket(echoWithSeq(7, new byte[]{7}));
                assertEquals(7, raw.readPacket().seq, "a served connection does not echo");
            }
        } finally {
            for (RawConnection raw : served) {
                raw.close();
            }
        }
    }

    @Test
    void theDefaultLimitIsTheDescriptorLimitLessAQuarterOfItAtLeast64() {
        assertEquals(64, NioServer.resolveConnectionLimit(0, 128));
        assertEquals(768, NioServer.resolveConnectionLimit(0, 1024));
        assertEquals(49_152, NioServer.resolveConnectionLimit(0, 65_536));
        assertEquals(Integer.MAX_VALUE, NioServer.resolveConnectionLimit(0, Long.MAX_VALUE));
        assertEquals(1, NioServer.resolveConnectionLimit(0, 10), "a tiny descriptor limit still lets one in");
        assertEquals(0, NioServer.resolveConnectionLimit(0, 0), "an unknown descriptor limit means no limit");
        assertEquals(0, NioServer.resolveConnectionLimit(-1, 1024), "-1 means no limit");
        assertEquals(5, NioServer.resolveConnectionLimit(5, 1024));
    }

    private static WritePacket echoWithSeq(int seq, byte[] data) {
        WritePacket p = WritePacket.request(Commands.ECHO, new BytesBody(data));
        p.seq = seq;
        return p;
    }
}
