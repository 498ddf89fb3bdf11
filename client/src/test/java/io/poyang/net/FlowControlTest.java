package io.poyang.net;

import io.poyang.common.FlowControlException;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

class FlowControlTest {

    private static final int HELD = 60;
    private NioServer server;
    private NioClient client;
    /** Keeps HELD requests unanswered until the test releases them. */
    private final Holding held = new Holding();

    @BeforeEach
    void reset() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count());
    }

    private NioServer startHoldingServer(NioServerConfig c) {
        NioServer s = new NioServer(c);
        s.register(HELD, held);
        s.start();
        return s;
    }

    private void releaseHeld() {
        held.releaseAll(null);
    }

    private static WritePacket heldRequest(int bodyBytes) {
        return WritePacket.request(HELD, new BytesBody(new byte[bodyBytes]));
    }

    @Test
    void clientFailsAtOnceWhenItsPendingLimitIsFull() throws Exception {
        server = startHoldingServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingRequests = 10;
        client = startClient(cc);
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            fs.add(client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000));
        }
        FlowControlException e = assertThrows(FlowControlException.class, () -> client.sendRequest(null,
                heldRequest(1), BytesDecoder.FACTORY, 10_000, CallOptions.DEFAULT, ignoring()));
        assertTrue(e.getMessage().contains("maxPendingRequests"), e.getMessage());
        CompletableFuture<byte[]> f = client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000);
        ExecutionException ee = assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertInstanceOf(FlowControlException.class, ee.getCause());
        waitUntil("ten held", 5000, () -> held.size() == 10);
        releaseHeld();
        for (CompletableFuture<byte[]> x : fs) {
            x.get(5, TimeUnit.SECONDS);
        }
        assertEquals(0, client.pendingRequests());
        client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000);
    }

    @Test
    void clientLimitsPendingBytes() throws Exception {
        server = startHoldingServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingBytes = 1000;
        client = startClient(cc);
        client.sendRequest(null, heldRequest(600), BytesDecoder.FACTORY, 10_000);
        assertThrows(FlowControlException.class, () -> client.sendRequest(null, heldRequest(600), BytesDecoder.FACTORY,
                10_000, CallOptions.DEFAULT, ignoring()));
        // one request larger than the whole bound still goes when nothing else is pending
        waitUntil("held", 5000, () -> held.size() == 1);
        releaseHeld();
        waitUntil("drained", 5000, () -> client.pendingRequests() == 0);
        CompletableFuture<byte[]> big = client.sendRequest(null, heldRequest(5000), BytesDecoder.FACTORY, 10_000);
        waitUntil("big held", 5000, () -> held.size() == 1);
        releaseHeld();
        big.get(5, TimeUnit.SECONDS);
    }

    @Test
    void blockingCallerWaitsForRoomAndGivesUpAtItsTimeout() throws Exception {
        server = startHoldingServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingRequests = 1;
        client = startClient(cc);
        CompletableFuture<byte[]> first = client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000);
        waitUntil("first held", 5000, () -> held.size() == 1);

        // gives up after its timeout
        long start = System.nanoTime();
        assertThrows(FlowControlException.class, () -> client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY,
                200, CallOptions.BLOCK_WHEN_FULL, ignoring()));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(190));

        // goes ahead once a response frees room
        AtomicReference<Throwable> error = new AtomicReference<>();
        CompletableFuture<Void> sent = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            try {
                client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000, CallOptions.BLOCK_WHEN_FULL, ignoring());
                sent.complete(null);
            } catch (Throwable t) {
                error.set(t);
                sent.completeExceptionally(t);
            }
        });
        caller.start();
        waitUntil("the caller blocks", 5000, () -> caller.getState() == Thread.State.TIMED_WAITING);
        assertFalse(sent.isDone());
        releaseHeld();
        first.get(5, TimeUnit.SECONDS);
        sent.get(5, TimeUnit.SECONDS);
        assertNull(error.get());
        waitUntil("second held", 5000, () -> held.size() == 1);
        releaseHeld();
        caller.join(5000);
    }

    @Test
    void anIoThreadAskingToWaitForRoomFailsAtOnceInsteadOfFreezingItself() throws Exception {
        server = new NioServer(serverConfig());
        server.register(HELD, held);
        server.register(Commands.ECHO, new EchoProcessor());
        server.start();
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingRequests = 2;
        client = startClient(cc);
        client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000);
        waitUntil("one held", 5000, () -> held.size() == 1);
        CompletableFuture<Throwable> blockedSend = new CompletableFuture<>();
        AtomicReference<Long> tookMillis = new AtomicReference<>();
        // the echo's callback runs on the client's one I/O thread: it fills the limit, then asks to wait
        client.sendRequest(null, echo(new byte[]{1}), BytesDecoder.FACTORY, 10_000, CallOptions.IO_THREAD_CALLBACK,
                new RpcCallback<byte[]>() {
                    @Override
                    public void onSuccess(byte[] body) {
                        client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000, CallOptions.DEFAULT,
                                ignoring());
                        long start = System.nanoTime();
                        Throwable refusal = null;
                        try {
                            client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 2000,
                                    CallOptions.BLOCK_WHEN_FULL, ignoring());
                        } catch (Throwable t) {
                            refusal = t;
                        }
                        // the time first: the test thread reads it as soon as the future completes
                        tookMillis.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                        blockedSend.complete(refusal);
                    }

                    @Override
                    public void onFailure(Throwable error) {
                        blockedSend.completeExceptionally(error);
                    }
                });
        Throwable t = blockedSend.get(10, TimeUnit.SECONDS);
        assertInstanceOf(FlowControlException.class, t);
        assertTrue(t.getMessage().contains("I/O thread"), t.getMessage());
        assertTrue(tookMillis.get() < 1000, "the I/O thread waited " + tookMillis.get() + " ms for room only it frees");
        waitUntil("two held", 5000, () -> held.size() == 2);
        releaseHeld();
        waitUntil("drained", 5000, () -> client.pendingRequests() == 0);
    }

    @Test
    void serverAnswersFlowControlPastItsInFlightBounds() throws Exception {
        NioServerConfig sc = serverConfig();
        sc.maxInFlightRequests = 5;
        sc.maxInFlightBytes = 10_000;
        server = startHoldingServer(sc);
        client = startClient(clientConfig(server));
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            fs.add(client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000));
        }
        waitUntil("five held", 5000, () -> held.size() == 5);
        RemoteException e = remoteFailure(client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000));
        assertEquals(ResponseCode.FLOW_CONTROL, e.responseCode());
        releaseHeld();
        for (CompletableFuture<byte[]> f : fs) {
            f.get(5, TimeUnit.SECONDS);
        }
        // the byte bound: one request of 6000 fits, a second does not
        CompletableFuture<byte[]> big = client.sendRequest(null, heldRequest(6000), BytesDecoder.FACTORY, 10_000);
        waitUntil("big held", 5000, () -> held.size() == 1);
        RemoteException bytes = remoteFailure(client.sendRequest(null, heldRequest(6000), BytesDecoder.FACTORY, 10_000));
        assertEquals(ResponseCode.FLOW_CONTROL, bytes.responseCode());
        releaseHeld();
        big.get(5, TimeUnit.SECONDS);
        // and serves again once there is room
        CompletableFuture<byte[]> after = client.sendRequest(null, heldRequest(1), BytesDecoder.FACTORY, 10_000);
        waitUntil("held again", 5000, () -> held.size() == 1);
        releaseHeld();
        after.get(5, TimeUnit.SECONDS);
    }

    /**
     * Both sides pause reading a connection whose write backlog is full. If the client did too, a
     * client that sends more than the backlog in large requests would stop reading the answers that
     * fill the server's backlog, the server would stop reading the requests that fill the client's,
     * and nothing would move again. Reading answers never makes more to write, so a client always
     * reads; only the server side of a connection, where reading requests makes answers, pauses.
     */
    @Test
    void manyLargeRequestsPastBothWriteBacklogsAllGetTheirAnswers() throws Exception {
        NioServerConfig sc = serverConfig();
        sc.maxWriteBacklogBytes = 64 * 1024;
        server = startEchoServer(sc);
        NioClientConfig cc = clientConfig(server);
        cc.maxWriteBacklogBytes = 64 * 1024;
        client = startClient(cc);
        byte[] body = new byte[1024 * 1024];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
        }
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 48; i++) { // 48 MiB each way: past both backlogs and the sockets' buffers
            fs.add(client.sendRequest(null, echo(body), BytesDecoder.FACTORY, 20_000));
        }
        for (CompletableFuture<byte[]> f : fs) {
            assertArrayEquals(body, f.get(20, TimeUnit.SECONDS));
        }
    }

    private static RemoteException remoteFailure(CompletableFuture<?> f) throws Exception {
        return (RemoteException) causeOf(f, 5000);
    }

}
