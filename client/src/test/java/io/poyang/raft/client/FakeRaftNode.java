package io.poyang.raft.client;

import io.poyang.codec.PbCallback;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;

import java.util.concurrent.atomic.AtomicInteger;

/** Loopback servers standing in for raft nodes in the client's tests. */
final class FakeRaftNode {

    private FakeRaftNode() {
    }

    /**
     * Starts a server on a free loopback port (one I/O thread, a 1 s stop) that answers RAFT_STATUS
     * with {@code status} and, when {@code writes} is not null, RAFT_WRITE with {@code writes}.
     */
    static NioServer start(ReqProcessor<Object> status, ReqProcessor<Object> writes) {
        NioServerConfig sc = new NioServerConfig();
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.ioThreads = 1;
        sc.stopTimeoutMillis = 1000;
        NioServer server = new NioServer(sc);
        server.register(RaftCommands.RAFT_STATUS, status);
        if (writes != null) {
            server.register(RaftCommands.RAFT_WRITE, writes);
        }
        server.start();
        return server;
    }

    /** A fake node's RAFT_STATUS processor that counts the questions; {@link #answer} says what it answers. */
    abstract static class CountingStatus implements ReqProcessor<Object> {
        final AtomicInteger asked = new AtomicInteger();

        @Override
        public PbCallback<Object> createDecoder() {
            return IgnoreBodyDecoder.<Object>factory().create();
        }

        @Override
        public final WritePacket process(ReqContext context, Object body) {
            asked.incrementAndGet();
            return answer(context);
        }

        /** The answer, or null to answer later through {@code context}. */
        abstract WritePacket answer(ReqContext context);
    }
}
