package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * Connections the acceptor hands to an I/O worker whose loop has ended (here: crashed) are closed,
 * so their clients learn at once and their file descriptors are given back; they used to stay open
 * with nobody reading them, one leaked descriptor per connection.
 */
class AcceptAfterWorkerEndTest {

    private NioServer server;

    @AfterEach
    void stop() {
        stopQuietly(server);
        ImpossibleStates.reset();   // the crash below is reported as one, on purpose
    }

    @Test
    @Timeout(20)
    void connectionsAcceptedAfterTheWorkerEndedAreClosedNotLeaked() throws Exception {
        ImpossibleStates.reset();
        server = startEchoServer(serverConfig());
        NioWorker worker = server.workers[0];
        worker.execute(() -> {
            throw new IllegalStateException("a deliberate crash of the I/O worker, for the test");
        });
        assertTrue(worker.awaitTermination(5_000_000_000L), "the worker did not end after its crash");
        assertEquals(1, ImpossibleStates.count(), "the crash was not reported");

        try (RawConnection raw = RawConnection.connect(server.port())) {
            assertTrue(raw.closedByPeer(5_000), "a connection accepted for an ended worker was left open");
        }
    }
}
