package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * The write-stall check on the side that connected: a server that stops reading it (as a server
 * does on purpose while it owes this client a backlog) but keeps sending to it is alive, and the
 * connection stays; once nothing arrives either, the stall closes it.
 */
class ConnectingSideStallTest {

    private static final long STALL_MILLIS = 300;
    private NioClient client;

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client);
        assertEquals(0, ImpossibleStates.count());
    }

    @Test
    void aServerThatStopsReadingButKeepsSendingIsNotTakenForStalled() throws Exception {
        AtomicBoolean sending = new AtomicBoolean(true);
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    raw.answerHandshake();
                    // from now on it reads nothing, and sends an answer nobody waits for every 30 ms
                    while (sending.get()) {
                        WritePacket stray = WritePacket.response(new BytesBody(new byte[100]));
                        stray.command = Commands.ECHO;
                        stray.seq = Integer.MAX_VALUE;
                        raw.sendPacket(stray);
                        Thread.sleep(30);   // the thing under test: a server that keeps sending, well within the stall
                    }
                    raw.closedByPeer(10_000);
                } catch (IOException e) {
                    // the client hung up
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, OWN_THREAD);
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + fake.getLocalPort());
            cc.writeStallTimeoutMillis = STALL_MILLIS;
            cc.heartbeatIntervalMillis = 0;
            cc.reconnectMinBackoffMillis = 5_000;
            cc.reconnectMaxBackoffMillis = 5_000;
            cc.stopTimeoutMillis = 500;
            client = new NioClient(cc);
            client.start();
            client.waitForConnected(5000);
            Peer peer = client.peers().get(0);
            // more than the kernel buffers hold: the client's writes block (frames under the 1 MiB
            // the fake server's handshake allows)
            for (int i = 0; i < 64; i++) {
                client.sendRequest(peer, echo(new byte[512 * 1024]), BytesDecoder.FACTORY, 30_000);
            }
            NioWorker w = peer.worker;
            waitUntil("the client's writes to block", 10_000, () -> w.unwrittenBytesForTest() > 0);
            // five stall timeouts with writes blocked, and bytes arriving all along
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5 * STALL_MILLIS);
            while (System.nanoTime() < end) {
                assertEquals(Peer.Status.CONNECTED, peer.status(), "closed while the server sent: " + peer.lastFailure());
                Thread.sleep(20);   // sampling the status, not a synchronisation
            }
            assertTrue(w.unwrittenBytesForTest() > 0, "the writes stayed blocked throughout");
            // nothing arrives any more: now it is a stall
            sending.set(false);
            waitUntil("the stall to close the connection", 10_000, () -> peer.status() != Peer.Status.CONNECTED);
            assertTrue(peer.lastFailure().contains("read nothing"), peer.lastFailure());
            serverSide.get(10, TimeUnit.SECONDS);
        }
    }
}
