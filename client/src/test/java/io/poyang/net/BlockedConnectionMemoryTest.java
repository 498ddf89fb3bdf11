package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.Socket;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * What a connection that cannot be written to costs: answers made one per worker loop go on in
 * the last out buffer, so the memory held stays close to the bytes owed (before, each loop took a
 * fresh 64 KiB buffer for a 12-byte answer, past every backlog cap, until direct memory ran out
 * and the worker died with all its connections).
 */
class BlockedConnectionMemoryTest {

    private NioServer server;

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(server);
        assertEquals(0, ImpossibleStates.count());
    }

    /** Sends a ping and waits until the server read it: one ping per worker loop, each answer encoded in a flush of its own. */
    private void ping(RawConnection raw, int seq) throws Exception {
        long before = server.traffic().requestsReceived();
        WritePacket ping = WritePacket.request(Commands.PING, null);
        ping.seq = seq;
        ping.timeoutNanos = 60_000_000_000L;
        raw.sendPacket(ping);
        waitUntil("ping " + seq + " to be read", 5000, () -> server.traffic().requestsReceived() > before);
    }

    @Test
    void smallAnswersToAClientThatStopsReadingHoldAboutWhatTheyWeigh() throws Exception {
        NioServerConfig sc = serverConfig();
        server = startEchoServer(sc);
        NioWorker w = server.workers[0];
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        try (RawConnection raw = new RawConnection(s)) {
            raw.handshake();
            // answers the client never reads: the kernel buffers fill, the server's writes block
            for (int i = 0; i < 8; i++) {
                WritePacket e = echo(new byte[900 * 1024]);
                e.seq = 10 + i;
                e.timeoutNanos = 60_000_000_000L;
                raw.sendPacket(e);
            }
            waitUntil("the echoes to be read", 10_000, () -> server.traffic().requestsReceived() == 8);
            ping(raw, 99);   // read in a later loop than the echoes: they are encoded by now
            waitUntil("the server to hold unwritten answers", 10_000, () -> w.unwrittenBytesForTest() > 1024 * 1024);
            long heldBefore = w.heldOutBufferBytesForTest();
            int pings = 300;
            for (int i = 0; i < pings; i++) {
                ping(raw, 100 + i);
            }
            long held = w.heldOutBufferBytesForTest() - heldBefore;
            assertTrue(held <= 2 * sc.writeBufferBytes, held + " more bytes of buffers held for " + pings
                    + " answers of about 12 bytes (" + w.unwrittenBytesForTest() + " bytes owed in all)");
        }
    }
}
