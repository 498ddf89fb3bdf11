package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import io.poyang.testutil.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The highest term the client keeps per group (so that a search ending at the first node saying it
 * leads never takes back a leader replaced while stuck) after the cluster was made anew under the
 * same node ids, with lower terms. Two fake nodes: node 1 leads, node 2 follows. Kept for good, the
 * old term would make every such search wait for every node's answer (up to statusTimeoutMillis for
 * a slow one); once every node has answered below it, it comes down and searches end at the leader
 * again.
 */
class RecreatedClusterLeaderSearchTest {

    private static final int GROUP = 1;

    /** Answers status queries in {@code term} as the leader or a follower of node 1; node 2's answers can be held. */
    private static final class Status extends FakeRaftNode.CountingStatus {
        final int nodeId;
        volatile int term;
        /** Set: the answers are kept here instead of sent (a slow node). */
        volatile boolean hold;
        final List<ReqContext> held = new ArrayList<>();

        Status(int nodeId, int term) {
            this.nodeId = nodeId;
            this.term = term;
        }

        @Override
        WritePacket answer(ReqContext context) {
            if (hold) {
                synchronized (held) {
                    held.add(context);
                }
                return null;
            }
            RaftRole role = nodeId == 1 ? RaftRole.LEADER : RaftRole.FOLLOWER;
            return WritePacket.response(new RaftStatusResponse(GROUP, nodeId, term, 1, role, 0, 0, 0,
                    new int[]{1, 2}));
        }
    }

    private final List<NioServer> servers = new ArrayList<>();
    private Status leader;
    private Status follower;
    private RaftClient client;

    private NioServer server(Status status) {
        NioServer s = FakeRaftNode.start(status, null);
        servers.add(s);
        return s;
    }

    @BeforeEach
    void start() throws Exception {
        leader = new Status(1, 9);
        follower = new Status(2, 9);
        NioServer s1 = server(leader);
        NioServer s2 = server(follower);
        RaftClientConfig cfg = new RaftClientConfig();
        cfg.node(1, "127.0.0.1:" + s1.port()).node(2, "127.0.0.1:" + s2.port());
        // far beyond the waits below: a search that waits for the held node cannot end within them
        cfg.statusTimeoutMillis = 120_000;
        client = new RaftClient(cfg);
        client.start();
        client.waitForConnected(5_000);
    }

    @AfterEach
    void stop() {
        client.stop();
        for (NioServer s : servers) {
            s.stop();
        }
    }

    @Test
    void afterEveryNodeAnsweredBelowTheTermHeardBeforeASearchEndsAtTheLeaderAgain() throws Exception {
        assertEquals(1, (int) client.findLeader(GROUP).get(30, TimeUnit.SECONDS), "term 9 is heard");

        // the cluster made anew: the same nodes, node 1 leading in term 1
        leader.term = 1;
        follower.term = 1;
        int askedBefore = leader.asked.get();
        AtomicReference<CompletableFuture<Integer>> search = new AtomicReference<>();
        // (a search that just ended may be handed out once more while it is taken off the running ones)
        Await.until("a search after the cluster was made anew", 10_000, () -> {
            search.set(client.findLeader(GROUP));
            return leader.asked.get() > askedBefore;
        });
        assertEquals(1, (int) search.get().get(30, TimeUnit.SECONDS), "both nodes answered in term 1");

        // node 2 is slow now: a search must end at node 1's "I lead" in term 1, not wait for node 2
        follower.hold = true;
        int askedAgain = leader.asked.get();
        Await.until("a search with node 2 slow", 10_000, () -> {
            search.set(client.findLeader(GROUP));
            return leader.asked.get() > askedAgain;
        });
        assertEquals(1, (int) search.get().get(20, TimeUnit.SECONDS),
                "the search waited for the slow node 2: term 9 is still taken for the highest");
    }
}
