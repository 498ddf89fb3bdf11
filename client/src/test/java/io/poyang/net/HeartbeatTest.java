package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * The client's heartbeat judges a connection by what it reads: a server that stopped answering is
 * found while the client keeps sending, and a connection whose answers arrive slowly is kept even
 * when the ping's own answer is queued behind them.
 */
class HeartbeatTest {

    private static final long HEARTBEAT_MILLIS = 200;
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

    private NioClient startClient(ServerSocket fake) throws Exception {
        NioClientConfig cc = new NioClientConfig();
        cc.servers.add("127.0.0.1:" + fake.getLocalPort());
        cc.heartbeatIntervalMillis = HEARTBEAT_MILLIS;
        cc.reconnectMinBackoffMillis = 5_000;   // one connection for the whole test
        cc.reconnectMaxBackoffMillis = 5_000;
        cc.stopTimeoutMillis = 500;
        NioClient c = new NioClient(cc);
        c.start();
        return c;
    }

    @Test
    void aBusyClientClosesAConnectionOnWhichNothingArrivesAnyMore() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            // a server host cut off without a reset: it reads, it never answers
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    raw.answerHandshake();
                    raw.closedByPeer(30_000);   // reads and drops everything until the client hangs up
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }, OWN_THREAD);
            client = startClient(fake);
            client.waitForConnected(5000);
            Peer peer = client.peers().get(0);
            // a request every 50 ms: the connection always has something recent sent
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (peer.status() == Peer.Status.CONNECTED && System.nanoTime() < deadline) {
                client.sendRequest(peer, echo(new byte[10]), BytesDecoder.FACTORY, 100);
                Thread.sleep(50);   // the thing under test: a busy client, sending well within the heartbeat
            }
            assertNotEquals(Peer.Status.CONNECTED, peer.status(), "a connection that read nothing for 20 s is still open");
            assertTrue(peer.lastFailure().contains("nothing read within " + HEARTBEAT_MILLIS + " ms of a heartbeat"),
                    peer.lastFailure());
            serverSide.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anAnswerArrivingSlowlyForLongerThanTheHeartbeatKeepsTheConnection() throws Exception {
        byte[] big = new byte[40 * 1024];
        Arrays.fill(big, (byte) 7);
        try (ServerSocket fake = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            // a slow link: the answer comes 1 KiB every 30 ms (about 1.2 s, six heartbeat intervals),
            // and the pings sent meanwhile are answered only after it
            CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> {
                try (RawConnection raw = new RawConnection(fake.accept())) {
                    raw.answerHandshake();
                    RawConnection.Decoded req = raw.readPacket();
                    WritePacket answer = WritePacket.response(new BytesBody(big));
                    answer.command = req.command;
                    answer.seq = req.seq;
                    byte[] frame = RawConnection.frame(RawConnection.encode(answer));
                    for (int off = 0; off < frame.length; off += 1024) {
                        raw.send(Arrays.copyOfRange(frame, off, Math.min(frame.length, off + 1024)));
                        Thread.sleep(30);   // the thing under test: a slow link
                    }
                    while (true) {   // then answer the pings, until the client hangs up
                        RawConnection.Decoded p = raw.readPacket();
                        if (p.command == Commands.PING) {
                            WritePacket pong = WritePacket.response(null);
                            pong.command = p.command;
                            pong.seq = p.seq;
                            raw.sendPacket(pong);
                        }
                    }
                } catch (IOException e) {
                    // the client hung up: done
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, OWN_THREAD);
            client = startClient(fake);
            client.waitForConnected(5000);
            Peer peer = client.peers().get(0);
            byte[] back = client.sendRequest(peer, echo(new byte[1]), BytesDecoder.FACTORY, 20_000).get(30, TimeUnit.SECONDS);
            assertArrayEquals(big, back);
            assertEquals(Peer.Status.CONNECTED, peer.status());
            assertNull(peer.lastFailure(), "the connection was closed on the way");
            client.stop();
            serverSide.get(10, TimeUnit.SECONDS);
        }
    }
}
