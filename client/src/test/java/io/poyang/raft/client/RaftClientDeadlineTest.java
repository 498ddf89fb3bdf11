package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.Test;

import io.poyang.testutil.Await;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
    private static final class LeaderlessStatus extends FakeRaftNode.CountingStatus {
        final int nodeId;

        LeaderlessStatus() {
            this(1);
        }

        LeaderlessStatus(int nodeId) {
            this.nodeId = nodeId;
        }

        @Override
        WritePacket answer(ReqContext context) {
            return WritePacket.response(new RaftStatusResponse(1, nodeId, 5, 0, RaftRole.FOLLOWER, 0, 0, 0, new int[]{1}));
        }
    }

    /** Keeps status requests unanswered until the test answers them, as node 1 leading group 1. */
    private static final class HeldStatus implements ReqProcessor<Object> {
        final ConcurrentLinkedQueue<ReqContext> held = new ConcurrentLinkedQueue<>();

        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            held.add(context);
            return null;
        }

        void answerAsLeader() {
            for (ReqContext c; (c = held.poll()) != null; ) {
                c.respond(WritePacket.response(new RaftStatusResponse(1, 1, 5, 1, RaftRole.LEADER, 0, 0, 0, new int[]{1})));
            }
        }
    }

    /** Answers every write with the same bytes, as the leader would with the state machine's result. */
    private static final class AnsweringWrites implements ReqProcessor<Object> {
        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            return WritePacket.response(new BytesBody(new byte[]{42}));
        }
    }

    /** Answers every status request as node 1, the leader of group 1 in term 5. */
    private static final class LeaderStatus implements ReqProcessor<Object> {
        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            return WritePacket.response(new RaftStatusResponse(1, 1, 5, 1, RaftRole.LEADER, 0, 0, 0, new int[]{1}));
        }
    }

    /**
     * Answers the first {@code timeouts} copies of a write with TIMEOUT, as a leader whose writer came
     * to them after their deadline (never given an index: not applied), and the later ones with the
     * state machine's result; keeps how long each copy had left when it arrived.
     */
    private static final class TimingOutWrites implements ReqProcessor<Object> {
        final int timeouts;
        final AtomicInteger copies = new AtomicInteger();
        final ConcurrentLinkedQueue<Long> millisLeftOnArrival = new ConcurrentLinkedQueue<>();

        TimingOutWrites(int timeouts) {
            this.timeouts = timeouts;
        }

        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            millisLeftOnArrival.add(TimeUnit.NANOSECONDS.toMillis(context.deadlineNanos() - System.nanoTime()));
            if (copies.incrementAndGet() <= timeouts) {
                return WritePacket.error(ResponseCode.TIMEOUT, "the write's deadline passed before raft group 1"
                        + " could take it; it was not applied");
            }
            return WritePacket.response(new BytesBody(new byte[]{42}));
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
        withOneNode(status, null, settings, test);
    }

    /** Like the one above; the server also takes writes with {@code writes} (when not null). */
    private static void withOneNode(ReqProcessor<Object> status, ReqProcessor<Object> writes,
                                    Consumer<RaftClientConfig> settings, ClientTest test) throws Exception {
        NioServer server = FakeRaftNode.start(status, writes);
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

    @Test
    void aWriteThatWaitedForALeaderSearchIsNotKeptByItsDeadlineTimerOnceTheSearchEnded() throws Exception {
        HeldStatus status = new HeldStatus();
        withOneNode(status, new AnsweringWrites(), cfg -> cfg.statusTimeoutMillis = 60_000, (client, cfg) -> {
            // no leader known: the writes wait for one search, each with a timer for its (long) deadline
            List<CompletableFuture<byte[]>> writes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                writes.add(client.write(1, 0, new BytesBody(new byte[1024]), BytesDecoder.FACTORY, 600_000));
            }
            Await.until("the leader search's status request", 10_000, () -> !status.held.isEmpty());
            assertEquals(3, client.searchDeadlinesHoldingWrites(), "each waiting write has a deadline timer");

            status.answerAsLeader();
            for (CompletableFuture<byte[]> w : writes) {
                assertArrayEquals(new byte[]{42}, w.get(30, TimeUnit.SECONDS));
            }
            // the timers stay queued until the writes' deadline, ten minutes away: they must not hold
            // the writes (their bodies, their callbacks) until then
            assertEquals(0, client.searchDeadlinesHoldingWrites(),
                    "deadline timers still holding a write after the search ended and the writes completed");
        });
    }

    /**
     * An attempt of an exactly-once call carries the attempt's deadline to the node, not the call's: a
     * leader too busy to give the write an index within one attempt answers TIMEOUT (not applied)
     * while the caller still has most of its time. The write is sent again; before, the whole call
     * failed at the first such answer.
     */
    @Test
    void anExactlyOnceWriteAnsweredTimeoutWithinItsDeadlineIsSentAgain() throws Exception {
        TimingOutWrites writes = new TimingOutWrites(1);
        withOneNode(new LeaderStatus(), writes, cfg -> { }, (client, cfg) -> {
            long callMillis = 30_000;
            long attemptMillis = 500;
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            client.callLeaderExactlyOnce(1, RaftCommands.RAFT_WRITE, new BytesBody(new byte[8]), BytesDecoder.FACTORY,
                    callMillis, attemptMillis, RpcCallback.completing(f));
            assertArrayEquals(new byte[]{42}, f.get(30, TimeUnit.SECONDS));
            assertEquals(2, writes.copies.get(), "copies the node saw");
            long firstCopyLeft = writes.millisLeftOnArrival.peek();
            // a little over the attempt's 500 ms is the clock's grain, not the call's deadline: the
            // client's I/O thread measures the time left against its loop's cached clock, which can
            // be a few ms behind (it failed in CI with 502 ms left)
            long clockGrainMillis = 100;
            assertTrue(firstCopyLeft <= attemptMillis + clockGrainMillis, "the first copy reached the node with "
                    + firstCopyLeft + " ms left: the attempt's deadline, not the call's " + callMillis
                    + " ms, is what it carries");
        });
    }

    /** The same for a raft session's exactly-once write, which has the same attempt limit (exactlyOnceAttemptMillis). */
    @Test
    void aSessionWriteAnsweredTimeoutWithinItsDeadlineIsSentAgain() throws Exception {
        TimingOutWrites writes = new TimingOutWrites(1);
        withOneNode(new LeaderStatus(), writes, cfg -> cfg.exactlyOnceAttemptMillis = 500, (client, cfg) -> {
            byte[] result = client.newSession().write(1, 0, new BytesBody(new byte[8]), BytesDecoder.FACTORY, 30_000)
                    .get(30, TimeUnit.SECONDS);
            assertArrayEquals(new byte[]{42}, result);
            assertEquals(2, writes.copies.get(), "copies the node saw");
        });
    }

    @Test
    void anExactlyOnceWriteAnsweredTimeoutEveryTimeFailsAsNotAppliedAtTheCallersDeadline() throws Exception {
        TimingOutWrites writes = new TimingOutWrites(Integer.MAX_VALUE);
        withOneNode(new LeaderStatus(), writes, cfg -> { }, (client, cfg) -> {
            long callMillis = 1_500;
            long start = System.nanoTime();
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            client.callLeaderExactlyOnce(1, RaftCommands.RAFT_WRITE, new BytesBody(new byte[8]), BytesDecoder.FACTORY,
                    callMillis, 200, RpcCallback.completing(f));
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getCause() instanceof PoyangTimeoutException, e.getCause().toString());
            assertFalse(e.getCause() instanceof RaftOutcomeUnknownException, "every copy was answered TIMEOUT,"
                    + " so none is in the log: " + e.getCause());
            assertTrue(e.getCause().getMessage().contains("not applied"), e.getCause().getMessage());
            // the call cannot end before its deadline; the margin only allows for rounding
            assertTrue(tookMillis >= callMillis - 200, "a call of " + callMillis + " ms failed after " + tookMillis
                    + " ms, with time left to send the write again");
            assertTrue(writes.copies.get() >= 2, "copies the node saw: " + writes.copies.get());
        });
    }
}
