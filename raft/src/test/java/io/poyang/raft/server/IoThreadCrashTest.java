package io.poyang.raft.server;

import io.poyang.codec.PbCallback;
import io.poyang.log.ImpossibleStates;
import io.poyang.net.BytesBody;
import io.poyang.net.BytesDecoder;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An I/O thread of a node's service port crashes (a bug: here an Error thrown by an extension's
 * decoder, which the worker does not catch): the node says so, for health checks and metrics,
 * instead of going on as if nothing happened with a port that takes no connections.
 */
class IoThreadCrashTest {

    /** A command of a service extension whose decoder fails with an Error. */
    private static final int CRASHING_COMMAND = 1_000;

    @TempDir
    Path dir;

    @AfterEach
    void forgetTheCrash() {
        ImpossibleStates.reset();   // the crash is reported as one, on purpose
    }

    @Test
    void aCrashedServiceIoThreadMakesTheServerReportAProblem() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1)) {
            c.serverTweak = b -> b.serviceExtension((server, service) -> service.register(CRASHING_COMMAND,
                    new ReqProcessor<Object>() {
                        @Override
                        public PbCallback<Object> createDecoder() {
                            throw new AssertionError("a deliberate crash of the service I/O thread, for the test");
                        }

                        @Override
                        public WritePacket process(ReqContext context, Object body) {
                            return null;
                        }
                    }));
            c.start();
            c.waitForLeader(1);
            RaftServer server = c.server(1);
            assertNull(server.ioProblem());

            NioClient client = new NioClient(new NioClientConfig());
            client.start();
            try {
                Peer p = client.addPeer("127.0.0.1:" + server.servicePort());
                // the answer never comes: the connection is closed with the thread
                client.sendRequest(p, WritePacket.request(CRASHING_COMMAND, new BytesBody(new byte[]{8, 1})),
                        BytesDecoder.FACTORY, 5_000);
                RaftCluster.waitFor("the crash to be seen", () -> server.ioProblem() != null);
            } finally {
                client.stop();
            }
            String problem = server.ioProblem();
            assertTrue(problem.startsWith("1 of 1 I/O thread of the service port crashed")
                    && problem.contains("restart the node"), problem);
            Map<String, Integer> crashed = server.crashedIoThreads();
            assertEquals(1, crashed.get("service"));
            assertEquals(0, crashed.get("replication"));
            assertEquals(0, crashed.get("replication_client"));
            assertEquals(1, ImpossibleStates.count());
            ImpossibleStates.reset();   // before the cluster's close checks that none was reported
            // the group itself is fine: raft goes on without the service port
            c.write(1, 42);
        }
    }
}
