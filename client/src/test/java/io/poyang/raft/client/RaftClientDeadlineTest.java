package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RaftClientDeadlineTest {

    /** Takes status requests and never answers them: a node that is connected but stuck. */
    private static final class SilentStatus implements ReqProcessor<Object> {
        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            return null;
        }
    }

    /** Answers every status request as a follower that knows no leader, and counts them. */
    private static final class LeaderlessStatus implements ReqProcessor<Object> {
        final AtomicInteger asked = new AtomicInteger();
        final int nodeId;

        LeaderlessStatus() {
            this(1);
        }

        LeaderlessStatus(int nodeId) {
            this.nodeId = nodeId;
        }

        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            asked.incrementAndGet();
            return WritePacket.response(new RaftStatusResponse(1, nodeId, 5, 0, RaftRole.FOLLOWER, 0, 0, 0, new int[]{1}));
        }
    }

    /** What a test does with the client. */
    private interface ClientTest {
        void run(RaftClient client, RaftClientConfig cfg) throws Exception;
    }

    /**
     * Runs {@code test} with a RaftClient connected to one server, listed as node 1, that answers
     * RAFT_STATUS with {@code status}; stops both after.
     */
    private static void withOneNode(ReqProcessor<Object> status, Consumer<RaftClientConfig> settings, ClientTest test)
            throws Exception {
        NioServerConfig sc = new NioServerConfig();
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.ioThreads = 1;
        sc.stopTimeoutMillis = 1000;
        NioServer server = new NioServer(sc);
        server.register(RaftCommands.RAFT_STATUS, status);
        server.start();
        RaftClientConfig cfg = new RaftClientConfig();
        cfg.node(1, "127.0.0.1:" + server.port());
        settings.accept(cfg);
        RaftClient client = new RaftClient(cfg);
        client.start();
        try {
            client.waitForConnected(5_000);
            test.run(client, cfg);
        } finally {
            client.stop();
            server.stop();
        }
    }

    @Test
    void manyWritesWaitingForALeaderShareFewSearches() throws Exception {
        LeaderlessStatus status = new LeaderlessStatus();
        withOneNode(status, cfg -> cfg.minRetryBackoffMillis = 20, (client, cfg) -> {
            int writes = 400;
            long deadlineMillis = 2_000;
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < writes; i++) {
                calls.add(client.write(1, 0, new BytesBody(new byte[8]), BytesDecoder.FACTORY, deadlineMillis));
                Thread.sleep(2);   // writes arriving over time: their back-offs end at scattered moments
            }
            for (CompletableFuture<byte[]> c : calls) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> c.get(30, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof PoyangTimeoutException, e.getCause().toString());
            }
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // at most one round per 20 ms after a round that found nothing (each round asks the one node)
            long bound = tookMillis / cfg.minRetryBackoffMillis + 5;
            assertTrue(status.asked.get() <= bound, status.asked.get() + " status queries in " + tookMillis
                    + " ms for " + writes + " waiting writes; at most " + bound + " expected");
            assertTrue(status.asked.get() >= 10, "the writes kept searching: " + status.asked.get());
        });
    }

    @Test
    void aNodeAnsweringUnderAnotherIdThanItIsListedUnderFailsTheWriteAtOnce() throws Exception {
        withOneNode(new LeaderlessStatus(2), cfg -> { }, (client, cfg) -> {   // node 2 listed as node 1
            long start = System.nanoTime();
            ExecutionException e = assertThrows(ExecutionException.class, () -> client.write(1, 0,
                    new BytesBody(new byte[8]), BytesDecoder.FACTORY, 20_000).get(30, TimeUnit.SECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getCause() instanceof NodeIdMismatchException, e.getCause().toString());
            assertTrue(e.getCause().getMessage().contains("says it is node 2, but this client's server list gives that"
                    + " address id 1"), e.getCause().getMessage());
            assertTrue(tookMillis < 5_000, "the write of 20 s failed only after " + tookMillis + " ms");
        });
    }

    @Test
    void aWriteWithNoLeaderKnownEndsAtItsDeadlineNotAtTheLeaderSearchsTimeout() throws Exception {
        // the search waits 20 s for the silent node
        withOneNode(new SilentStatus(), cfg -> cfg.statusTimeoutMillis = 20_000, (client, cfg) -> {
            long start = System.nanoTime();
            ExecutionException e = assertThrows(ExecutionException.class, () -> client.write(1, 0,
                    new BytesBody(new byte[8]), BytesDecoder.FACTORY, 300).get(30, TimeUnit.SECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getCause() instanceof PoyangTimeoutException, e.getCause().toString());
            assertTrue(e.getCause().getMessage().contains("not applied"), e.getCause().getMessage());
            assertTrue(tookMillis < 10_000, "a write of 300 ms ended after " + tookMillis + " ms");
        });
    }
}
