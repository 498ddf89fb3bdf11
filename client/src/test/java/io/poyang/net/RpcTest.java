package io.poyang.net;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

class RpcTest {

    private NioServer server;
    private NioClient client;

    @BeforeEach
    void resetImpossibleStates() {
        ImpossibleStates.reset();
    }

    @AfterEach
    void stop() {
        stopQuietly(client, server);
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported");
    }

    @Test
    void echoReturnsTheBody() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        byte[] data = "hello poyang".getBytes(StandardCharsets.UTF_8);
        byte[] back = client.sendRequest(null, echo(data), BytesDecoder.FACTORY, 3000).get(5, TimeUnit.SECONDS);
        assertArrayEquals(data, back);
        assertEquals(Peer.Status.CONNECTED, client.peers().get(0).status());
        assertEquals(server.uuid().getMostSignificantBits(), client.peers().get(0).remoteHandshake().uuidMost());
    }

    @Test
    void emptyAndLargeBodiesRoundTrip() throws Exception {
        server = startEchoServer(serverConfig());
        client = startClient(clientConfig(server));
        assertArrayEquals(new byte[0], client.sendRequest(null, echo(new byte[0]), BytesDecoder.FACTORY, 3000).get());
        byte[] big = new byte[3 * 1024 * 1024 + 7];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        assertArrayEquals(big, client.sendRequest(null, echo(big), BytesDecoder.FACTORY, 10000).get(20, TimeUnit.SECONDS));
    }

    @Test
    void hundredThousandPipelinedRequestsOnOneConnectionAreAllAnsweredAndMatched() throws Exception {
        server = startEchoServer(serverConfig());
        NioClientConfig cc = clientConfig(server);
        cc.maxPendingRequests = 200_000;
        client = startClient(cc);
        int n = 100_000;
        AtomicInteger matched = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        for (int i = 0; i < n; i++) {
            byte[] body = Integer.toString(i).getBytes(StandardCharsets.UTF_8);
            client.sendRequest(null, echo(body), BytesDecoder.FACTORY, 60_000, CallOptions.IO_THREAD_CALLBACK,
                    new RpcCallback<byte[]>() {
                        @Override
                        public void onSuccess(byte[] b) {
                            if (java.util.Arrays.equals(body, b)) {
                                matched.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                        }

                        @Override
                        public void onFailure(Throwable error) {
                            firstError.compareAndSet(null, error);
                            failed.incrementAndGet();
                        }
                    });
        }
        waitUntil("all answers", 60_000, () -> matched.get() + failed.get() == n);
        assertNull(firstError.get());
        assertEquals(n, matched.get());
        assertEquals(0, client.pendingRequests());
        assertEquals(1, server.workers[0].pendingConnectionsForTest());
    }

    @Test
    void concurrentCallersFromManyThreads() throws Exception {
        NioServerConfig sc = serverConfig();
        sc.ioThreads = 2;
        server = startEchoServer(sc);
        client = startClient(clientConfig(server));
        int threads = 8;
        int perThread = 2000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(CompletableFuture.supplyAsync(() -> {
                    int ok = 0;
                    for (int i = 0; i < perThread; i++) {
                        byte[] body = (thread + ":" + i).getBytes(StandardCharsets.UTF_8);
                        try {
                            byte[] back = client.sendRequest(null, echo(body), BytesDecoder.FACTORY, 10_000).get();
                            if (java.util.Arrays.equals(body, back)) {
                                ok++;
                            }
                        } catch (InterruptedException | ExecutionException e) {
                            throw new AssertionError(e);
                        }
                    }
                    return ok;
                }, pool));
            }
            for (CompletableFuture<Integer> r : results) {
                assertEquals(perThread, r.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
