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

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

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

    @Test
    void aWriteWithNoLeaderKnownEndsAtItsDeadlineNotAtTheLeaderSearchsTimeout() throws Exception {
        NioServerConfig sc = new NioServerConfig();
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.ioThreads = 1;
        sc.stopTimeoutMillis = 1000;
        NioServer server = new NioServer(sc);
        server.register(RaftCommands.RAFT_STATUS, new SilentStatus());
        server.start();
        RaftClientConfig cfg = new RaftClientConfig();
        cfg.node(1, "127.0.0.1:" + server.port());
        cfg.statusTimeoutMillis = 20_000;   // the search waits that long for the silent node
        RaftClient client = new RaftClient(cfg);
        client.start();
        try {
            client.waitForConnected(5_000);
            long start = System.nanoTime();
            ExecutionException e = assertThrows(ExecutionException.class, () -> client.write(1, 0,
                    new BytesBody(new byte[8]), BytesDecoder.FACTORY, 300).get(30, TimeUnit.SECONDS));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getCause() instanceof PoyangTimeoutException, e.getCause().toString());
            assertTrue(e.getCause().getMessage().contains("not applied"), e.getCause().getMessage());
            assertTrue(tookMillis < 10_000, "a write of 300 ms ended after " + tookMillis + " ms");
        } finally {
            client.stop();
            server.stop();
        }
    }
}
