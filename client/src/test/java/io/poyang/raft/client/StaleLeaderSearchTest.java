package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.common.DaemonTimer;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.testutil.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Leader searches after a leader was replaced while its group was stuck: node 1 still says it leads,
 * in term 4, answers status queries at once and takes requests without ever answering them; node 2
 * leads in term 5 and answers status queries a little later (300 ms), so node 1's "I lead" always
 * comes first. An attempt that went unanswered on node 1 makes a search that hears every node and
 * takes node 2; the searches that end at the first node saying it leads (plain writes, new calls,
 * {@link RaftClient#findLeader}) must not take node 1 back from then on.
 */
class StaleLeaderSearchTest {

    private static final int GROUP = 1;
    private static final int STALE_TERM = 4;
    private static final int NEW_TERM = 5;
    private static final long NEW_LEADER_STATUS_DELAY_MILLIS = 300;

    /** Answers status queries as the leader of {@code term}, after {@code delayMillis}; counts them. */
    private final class LeaderStatus extends FakeRaftNode.CountingStatus {
        final int nodeId;
        final int term;
        final long delayMillis;

        LeaderStatus(int nodeId, int term, long delayMillis) {
            this.nodeId = nodeId;
            this.term = term;
            this.delayMillis = delayMillis;
        }

        @Override
        WritePacket answer(ReqContext context) {
            WritePacket answer = WritePacket.response(new RaftStatusResponse(GROUP, nodeId, term, nodeId, RaftRole.LEADER,
                    0, 0, 0, new int[]{1, 2}));
            if (delayMillis == 0) {
                return answer;
            }
            timer.schedule(() -> context.respond(answer), delayMillis, TimeUnit.MILLISECONDS);
            return null;
        }
    }

    /** Takes writes and answers them with {42}, or ({@code answers} false) never: a stuck group. */
    private static final class Writes implements ReqProcessor<Object> {
        final boolean answers;

        Writes(boolean answers) {
            this.answers = answers;
        }

        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public WritePacket process(ReqContext context, Object body) {
            return answers ? WritePacket.response(new BytesBody(new byte[]{42})) : null;
        }
    }

    private ScheduledExecutorService timer;
    private final List<NioServer> servers = new ArrayList<>();
    private LeaderStatus newLeaderStatus;
    private RaftClient client;

    private NioServer server(ReqProcessor<Object> status, ReqProcessor<Object> writes) {
        NioServer s = FakeRaftNode.start(status, writes);
        servers.add(s);
        return s;
    }

    @BeforeEach
    void start() throws Exception {
        timer = DaemonTimer.create("stale-leader-test");
        NioServer stale = server(new LeaderStatus(1, STALE_TERM, 0), new Writes(false));
        newLeaderStatus = new LeaderStatus(2, NEW_TERM, NEW_LEADER_STATUS_DELAY_MILLIS);
        NioServer fresh = server(newLeaderStatus, new Writes(true));
        RaftClientConfig cfg = new RaftClientConfig();
        cfg.node(1, "127.0.0.1:" + stale.port()).node(2, "127.0.0.1:" + fresh.port());
        cfg.statusTimeoutMillis = 5_000;
        client = new RaftClient(cfg);
        client.start();
        client.waitForConnected(5_000);
        client.updateLeader(GROUP, 1);   // it led until its group got stuck
    }

    @AfterEach
    void stop() {
        client.stop();
        for (NioServer s : servers) {
            s.stop();
        }
        timer.shutdownNow();
    }

    /** An idempotent call, first to node 1 (stuck): after a 300 ms attempt it is sent to node 2. */
    private CompletableFuture<byte[]> callPastTheStuckLeader() {
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        client.callLeaderIdempotent(GROUP, RaftCommands.RAFT_WRITE, new BytesBody(new byte[8]), BytesDecoder.FACTORY,
                20_000, 300, RpcCallback.completing(f));
        return f;
    }

    @Test
    void aPlainWriteAfterTheNewLeaderWasFoundDoesNotGoBackToTheStuckOneThatAnswersItsSearchFirst() throws Exception {
        assertArrayEquals(new byte[]{42}, callPastTheStuckLeader().get(30, TimeUnit.SECONDS));
        assertEquals(2, client.knownLeader(GROUP), "the search after the unanswered attempt took the leader of term 5");

        // the leader forgotten (as after a request there timed out): a plain write searches, and node 1's
        // "I lead" (term 4) comes first
        client.updateLeader(GROUP, 0);
        byte[] answer = client.write(GROUP, 0, new BytesBody(new byte[8]), BytesDecoder.FACTORY, 5_000)
                .get(30, TimeUnit.SECONDS);
        assertArrayEquals(new byte[]{42}, answer, "answered by node 2");
        assertEquals(2, client.knownLeader(GROUP));
        assertEquals(2, (int) client.findLeader(GROUP).get(30, TimeUnit.SECONDS), "a new search takes node 2 too");
    }

    @Test
    void aSearchStartedWhileOneHearingEveryNodeRunsTakesThatOnesLeader() throws Exception {
        CompletableFuture<byte[]> call = callPastTheStuckLeader();
        // node 2 is asked only by the search that hears every node (node 1 was known as the leader)
        Await.until("the search after the unanswered attempt to ask node 2", 10_000, () -> newLeaderStatus.asked.get() > 0);
        // node 2's answer is 300 ms away: a search ending at the first "I lead" would take node 1 now
        int found = client.findLeader(GROUP).get(30, TimeUnit.SECONDS);
        assertEquals(2, found, "the leader of term 5");
        assertArrayEquals(new byte[]{42}, call.get(30, TimeUnit.SECONDS));
        assertEquals(2, client.knownLeader(GROUP));
    }
}
