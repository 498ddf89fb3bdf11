package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node command whose connection is lost after it was sent: the node may have acted on it. One
 * whose second copy would act again (restarting a group) is not sent again but fails as outcome
 * unknown; a status query, which changes nothing, is sent again.
 */
class AdminClientLostConnectionTest {

    private NioServer server;
    private CuttableRelay relay;
    private AdminClient admin;

    @AfterEach
    void stop() {
        if (admin != null) {
            admin.close();
        }
        if (relay != null) {
            relay.close();
        }
        if (server != null) {
            server.stop();
        }
    }

    /**
     * A node on a loopback port behind a relay: {@code command} is counted and answered by
     * {@code answer} (given the count; null: the relay cuts every connection instead, the command
     * having arrived). The admin client is started on the relay.
     */
    private AtomicInteger nodeAnswering(int command, IntFunction<WritePacket> answer) throws Exception {
        AtomicInteger received = new AtomicInteger();
        NioServerConfig sc = new NioServerConfig();
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.ioThreads = 1;
        sc.stopTimeoutMillis = 1000;
        server = new NioServer(sc);
        server.register(command, new ReqProcessor<Object>() {
            @Override
            public PbCallback<Object> createDecoder() {
                return IgnoreBodyDecoder.<Object>factory().create();
            }

            @Override
            public WritePacket process(ReqContext context, Object body) {
                WritePacket p = answer.apply(received.incrementAndGet());
                if (p == null) {
                    relay.cutAll();
                }
                return p;
            }
        });
        server.start();
        relay = new CuttableRelay(server.port());
        AdminClientConfig config = new AdminClientConfig().node(1, "127.0.0.1:" + relay.port());
        config.requestTimeoutMillis = 5_000;
        admin = new AdminClient(config);
        admin.start();
        return received;
    }

    @Test
    void aRestartWhoseConnectionWasLostAfterItWasSentIsNotSentAgainAndFailsAsOutcomeUnknown() throws Exception {
        AtomicInteger restarts = nodeAnswering(RaftCommands.ADMIN_RESTART_GROUP, n -> null);
        CompletableFuture<Void> f = admin.restartGroupAsync(1, 7, 5_000);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause(), "failed with " + e.getCause());
        RaftOutcomeUnknownException u = (RaftOutcomeUnknownException) e.getCause();
        assertEquals(7, u.groupId());
        assertTrue(u.getMessage().startsWith("outcome unknown") && u.getMessage().contains("restart of raft group 7")
                && u.getMessage().contains("not sent again")
                && u.getMessage().contains("status --group 7") && u.getMessage().contains("before retrying"),
                u.getMessage());
        assertEquals(1, restarts.get(), "the restart reached the node once");
    }

    @Test
    void aStatusQueryWhoseConnectionWasLostIsSentAgain() throws Exception {
        AtomicInteger asked = nodeAnswering(RaftCommands.ADMIN_NODE_STATUS, n -> n == 1 ? null
                : WritePacket.response(new NodeStatus(1, new int[] {7},
                        Collections.singletonMap(1, "127.0.0.1:1")).toMessage()));
        NodeStatus status = admin.nodeStatus(1);
        assertEquals(1, status.nodeId());
        assertEquals(2, asked.get(), "asked again after the first connection was cut");
    }
}
