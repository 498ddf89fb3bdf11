package io.poyang.raft.client;

import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.net.ReqProcessor;

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
}
