package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import io.poyang.common.FlowControlException;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * What a connection that cannot be written to costs: answers made one per worker loop go on in
 * the last out buffer, so the memory held stays close to the bytes owed (before, each loop took a
 * fresh 64 KiB buffer for a 12-byte answer, past every backlog cap, until direct memory ran out
 * and the worker died with all its connections), and requests that time out in the write queue
 * of such a connection let go of their bodies at once, not when the queue is next walked.
 */
class BlockedConnectionMemoryTest {

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
    @Test
    void requestsThatTimeOutQueuedBehindAStalledConnectionLetGoOfTheirBodies() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        try (ServerSocket fake = new ServerSocket()) {
            fake.setReceiveBufferSize(4096);
            fake.bind(new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    raw.answerHandshake();
                    done.await();   // reads nothing more: the client's writes block
                } catch (Exception e) {
                    // the client hung up
                }
            }, OWN_THREAD);
            NioClientConfig cc = new NioClientConfig();
            cc.servers.add("127.0.0.1:" + fake.getLocalPort());
            cc.maxWriteBacklogBytes = 64 * 1024;
            cc.maxPendingRequests = 10;
            cc.writeStallTimeoutMillis = 60_000;
            cc.heartbeatIntervalMillis = 0;
            cc.stopTimeoutMillis = 500;
            client = new NioClient(cc);
            client.start();
            client.waitForConnected(5000);
            // a caller that keeps its window full, each request timing out after 50 ms, as a retrying
            // client does against a server that stopped reading
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int sent = 0;
            while (System.nanoTime() - end < 0) {
                try {
                    client.sendRequest(null, echo(new byte[32 * 1024]), BytesDecoder.FACTORY, 50, CallOptions.DEFAULT,
                            ignoring());
                    sent++;
                } catch (FlowControlException full) {
                    Thread.sleep(5);   // the window is full: the next timeout frees it
                }
            }
            NioWorker w = client.workers[0];
            CompletableFuture<int[]> queued = new CompletableFuture<>();
            w.execute(() -> {
                int packets = 0;
                int bodies = 0;
                NioConnection c = client.peers().get(0).connection;
                for (WritePacket p = c.queueHead; p != null; p = p.next) {
                    packets++;
                    if (p.body != null) {
                        bodies++;
                    }
                }
                queued.complete(new int[]{packets, bodies});
            });
            int[] q = queued.get(5, TimeUnit.SECONDS);
            assertTrue(sent > 100, "only " + sent + " requests were sent: the window never timed out?");
            assertTrue(q[1] <= cc.maxPendingRequests + 2, q[1] + " bodies held by " + q[0]
                    + " requests in the write queue of a connection that takes nothing, for a window of "
                    + cc.maxPendingRequests + " (" + sent + " sent)");
            done.countDown();
            client.stop();
            serverSide.get(10, TimeUnit.SECONDS);
        }
    }
}
