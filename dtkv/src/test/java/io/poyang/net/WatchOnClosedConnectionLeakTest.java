package io.poyang.net;   // in the net package: it reads NioWorker.inFlightRequestsForTest()

import io.poyang.codec.EncodeContext;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.server.RaftServer;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A KV_WATCH whose connection closed before the group served it still ends (is answered; the worker
 * drops the answer to a closed connection and frees its room). Before, DtKvStateMachine.serveWatch
 * returned without answering, and each such request counted against the service worker's in-flight
 * limit (100,000) until the node stopped, whose stop then waited out its whole timeout.
 */
class WatchOnClosedConnectionLeakTest {

    @Test
    void watchRequestsOfConnectionsThatClosedAtOnceLeaveNothingInFlight() throws Exception {
        try (LocalKvCluster c = LocalKvCluster.singleNode().start()) {
            c.waitForLeader(1, 30_000);
            for (int i = 0; i < 50; i++) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", c.servicePort(1)), 5_000);
                    OutputStream out = s.getOutputStream();
                    out.write(frame(WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC,
                            Handshake.MAJOR_VERSION, 0, 1, i, 1 << 20, 1000, 1 << 20))));
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    in.readFully(new byte[in.readInt()]);
                    out.write(frame(WritePacket.request(KvCommands.KV_WATCH, new KvWatchReq(1, false, false,
                            Collections.singletonList(""), new long[1]))));
                    out.flush();
                }   // closed before the answer
            }
            Field f = RaftServer.class.getDeclaredField("serviceServer");
            f.setAccessible(true);
            NioServer service = (NioServer) f.get(c.server(1));
            NetTestSupportLike.waitUntil(() -> service.workers[0].inFlightRequestsForTest() == 0, 5_000);
            assertEquals(0, service.workers[0].inFlightRequestsForTest(), "watch requests left in flight");
        }
    }

    private static byte[] frame(WritePacket p) {
        int size = p.encodedSize();
        ByteBuffer b = ByteBuffer.allocate(4 + size + EncodeContext.MIN_BUFFER_BYTES);
        b.putInt(size);
        p.encode(new EncodeContext(), b);
        return java.util.Arrays.copyOf(b.array(), 4 + size);
    }

    private static final class NetTestSupportLike {
        static void waitUntil(java.util.function.BooleanSupplier condition, long timeoutMillis) {
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            while (!condition.getAsBoolean() && System.nanoTime() - deadline < 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
        }
    }
}
