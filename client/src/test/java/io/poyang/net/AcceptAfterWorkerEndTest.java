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
        assertEquals(0, server.crashedWorkers());
        worker.execute(() -> {
            throw new IllegalStateException("a deliberate crash of the I/O worker, for the test");
        });
        assertTrue(worker.awaitTermination(5_000_000_000L), "the worker did not end after its crash");
        assertEquals(1, ImpossibleStates.count(), "the crash was not reported");
        assertEquals(1, server.crashedWorkers(), "the crash is not counted for health checks");

        try (RawConnection raw = RawConnection.connect(server.port())) {
            assertTrue(raw.closedByPeer(5_000), "a connection accepted for an ended worker was left open");
        }
    }

    @Test
    @Timeout(20)
    void newConnectionsGoToTheWorkersThatStillRun() throws Exception {
        ImpossibleStates.reset();
        NioServerConfig c = serverConfig();
        c.ioThreads = 2;
        server = startEchoServer(c);
        NioWorker crashed = server.workers[0];
        crashed.execute(() -> {
            throw new IllegalStateException("a deliberate crash of the I/O worker, for the test");
        });
        assertTrue(crashed.awaitTermination(5_000_000_000L), "the worker did not end after its crash");
        assertEquals(1, server.crashedWorkers());
        assertEquals(2, server.workerCount());
        // with the work dealt in turn, every other one of these would have gone to the crashed worker
        for (int i = 0; i < 6; i++) {
            try (RawConnection raw = RawConnection.connect(server.port())) {
                raw.handshake();   // answered: served by the worker that runs
            }
        }
    }

    @Test
    @Timeout(20)
    void workersStoppedWithTheServerAreNotCountedAsCrashed() throws Exception {
        server = startEchoServer(serverConfig());
        NioWorker worker = server.workers[0];
        server.stop();
        assertTrue(worker.awaitTermination(5_000_000_000L), "the worker did not end with the server");
        assertEquals(0, server.crashedWorkers());
    }
}
