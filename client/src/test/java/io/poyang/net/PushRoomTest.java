package io.poyang.net;

import io.poyang.common.FlowControlException;
import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.poyang.net.NetTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/**
 * Server pushes whose answers may take as long as the client likes, and the server's pending limit:
 * sent with {@link CallOptions#freeingRoomWhenWritten()}, a push holds its room (and its body)
 * only until it is written, so pushes the client leaves unanswered cannot fill the limit.
 */
class PushRoomTest {

    private static final int PUSH = 70;
    private static final int PUSH_BODY_BYTES = 16 * 1024;
    private static final int MAX_PENDING_REQUESTS = 4;

    private NioServer server;
    private final CompletableFuture<NioConnection> connected = new CompletableFuture<>();

    @BeforeEach
    void start() {
        ImpossibleStates.reset();
        NioServerConfig c = serverConfig();
        c.maxPendingRequests = MAX_PENDING_REQUESTS;
        c.maxPendingBytes = MAX_PENDING_REQUESTS * (PUSH_BODY_BYTES + 64L);
        server = new NioServer(c);
        server.setConnectionListener(new ConnectionListener() {
            @Override
            public void onConnected(NioConnection connection) {
                connected.complete(connection);
            }

            @Override
            public void onClosed(NioConnection connection) {
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        stopQuietly(server);
        assertEquals(0, ImpossibleStates.count());
    }

    private static WritePacket push() {
        return WritePacket.request(PUSH, new BytesBody(new byte[PUSH_BODY_BYTES]));
    }

    @Test
    @Timeout(20)
    void unansweredPushesFreeingRoomWhenWrittenNeverFillThePendingLimit() throws Exception {
        CallOptions options = CallOptions.IO_THREAD_CALLBACK.freeingRoomWhenWritten();
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            NioConnection conn = connected.get(5, TimeUnit.SECONDS);
            List<CompletableFuture<Object>> answers = new ArrayList<>();
            List<Integer> seqs = new ArrayList<>();
            // five times the limit's worth, none answered
            for (int i = 0; i < 5 * MAX_PENDING_REQUESTS; i++) {
                WritePacket p = push();
                CompletableFuture<Object> answer = new CompletableFuture<>();
                server.sendRequest(conn, p, IgnoreBodyDecoder.factory(), 60_000, options, RpcCallback.completing(answer));
                answers.add(answer);
                RawConnection.Decoded d = raw.readPacket();
                assertEquals(PacketType.REQUEST, d.type);
                assertEquals(PUSH, d.command);
                assertEquals(PUSH_BODY_BYTES, d.body.length);
                seqs.add(d.seq);
                // read by the client, so written: its room is back (the worker frees it right after
                // the write call returns, which may be a moment after the client sees the bytes)
                waitUntil("push " + i + "'s room to be freed once written", 5_000, () -> server.pendingRequests() == 0);
                assertNull(p.body(), "a written push still holds its body");
            }
            for (CompletableFuture<Object> a : answers) {
                assertFalse(a.isDone(), "a push completed though the client answered none");
            }
            // the answer still reaches the push it answers
            WritePacket ack = WritePacket.response(null);
            ack.command = PUSH;
            ack.seq = seqs.get(3);
            raw.sendPacket(ack);
            answers.get(3).get(5, TimeUnit.SECONDS);
            assertFalse(answers.get(2).isDone());
            assertEquals(0, server.pendingRequests());
            raw.close();
            // and the unanswered ones fail when the connection goes
            assertInstanceOf(NetConnectionException.class, causeOf(answers.get(2)));
        }
    }

    @Test
    @Timeout(20)
    void unansweredPushesWithoutTheOptionHoldTheirRoomUntilAnswered() throws Exception {
        try (RawConnection raw = RawConnection.connect(server.port())) {
            raw.handshake();
            NioConnection conn = connected.get(5, TimeUnit.SECONDS);
            for (int i = 0; i < MAX_PENDING_REQUESTS; i++) {
                server.sendRequest(conn, push(), IgnoreBodyDecoder.factory(), 60_000, CallOptions.IO_THREAD_CALLBACK,
                        RpcCallback.completing(new CompletableFuture<>()));
                raw.readPacket();
            }
            assertEquals(MAX_PENDING_REQUESTS, server.pendingRequests());
            assertThrows(FlowControlException.class, () -> server.sendRequest(conn, push(),
                    IgnoreBodyDecoder.factory(), 60_000, CallOptions.IO_THREAD_CALLBACK,
                    RpcCallback.completing(new CompletableFuture<>())));
        }
    }
}
