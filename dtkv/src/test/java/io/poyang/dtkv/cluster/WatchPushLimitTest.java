package io.poyang.dtkv.cluster;

import io.poyang.codec.EncodeContext;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvWatch;
import io.poyang.net.Commands;
import io.poyang.net.Handshake;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service port's pending limit (256 MiB of requests sent and not answered) and watch
 * notifications, which a client answers only after its listeners ran. Clients whose listeners are
 * stuck read their notifications but never acknowledge them; enough of them must not leave every
 * other watcher of the node without notifications.
 */
class WatchPushLimitTest {

    /** Each stuck watcher is sent a 2 MiB-or-more first notification: 140 of them hold over 256 MiB. */
    private static final int STUCK_WATCHERS = 140;
    private static final int VALUE_BYTES = 1 << 20;
    private static final long FIRST_NOTIFICATION_BYTES = 2L << 20;

    @TempDir
    Path dir;

    @Test
    @Timeout(30)
    void unacknowledgedNotificationsOfStuckWatchersDoNotStarveOtherWatchers() throws Exception {
        List<StuckWatcher> stuck = new ArrayList<>();
        try (KvTestCluster c = new KvTestCluster(dir, 1).start()) {
            KvClient kv = c.client();
            kv.mkdir("big");
            for (int i = 0; i < 3; i++) {
                kv.put("big.v" + i, new byte[VALUE_BYTES]);
            }
            int port = c.cluster.servicePort(1);
            try {
                for (int i = 0; i < STUCK_WATCHERS; i++) {
                    stuck.add(new StuckWatcher(port, 1000 + i, "big"));
                }
                // Every stuck watcher gets (reads) its first notification, and never answers it. Those
                // sent first must not hold back the rest: this is already the starvation looked for.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int served;
                while ((served = countReceived(stuck, FIRST_NOTIFICATION_BYTES)) < STUCK_WATCHERS) {
                    assertTrue(System.nanoTime() - deadline < 0, "only " + served + " of " + STUCK_WATCHERS
                            + " watchers were sent their first notification within 10 s: the others starve behind"
                            + " the unanswered notifications of those");
                    Thread.sleep(5);   // polling non-blocking sockets: nothing to await
                }

                KvClient healthy = c.client();
                AtomicReference<String> seen = new AtomicReference<>();
                KvWatch w = healthy.watch((key, node) -> seen.set(node.exists() ? node.valueAsString() : null), "small");
                kv.put("small", "hello");
                KvTestCluster.waitFor("a healthy watcher to be told of a change while " + STUCK_WATCHERS
                        + " watchers hold their notifications unanswered", 10, () -> {
                    drainAll(stuck);
                    return "hello".equals(seen.get());
                });
                w.close();
                assertEquals(STUCK_WATCHERS, stuck.size());
            } finally {
                for (StuckWatcher s : stuck) {
                    s.close();
                }
            }
        }
    }

    /** Reads what the watchers were sent; returns how many have received at least {@code bytes}. */
    private static int countReceived(List<StuckWatcher> watchers, long bytes) throws IOException {
        int n = 0;
        for (StuckWatcher s : watchers) {
            s.drain();
            if (s.received >= bytes) {
                n++;
            }
        }
        return n;
    }

    private static void drainAll(List<StuckWatcher> watchers) {
        try {
            for (StuckWatcher s : watchers) {
                s.drain();
            }
        } catch (IOException e) {
            throw new AssertionError("a stuck watcher's connection failed: " + e, e);
        }
    }

    /**
     * A client whose watch listener never returns, as the server sees it: it handshakes, watches a
     * key, reads whatever it is sent (so nothing stalls the server's writes) and answers nothing.
     */
    private static final class StuckWatcher implements AutoCloseable {
        final SocketChannel channel;
        final ByteBuffer sink = ByteBuffer.allocateDirect(256 * 1024);
        long received;

        StuckWatcher(int port, long clientId, String key) throws IOException {
            channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            send(WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION, 0,
                    clientId, clientId, 8 << 20, 1_000, 1 << 20)));
            send(WritePacket.request(KvCommands.KV_WATCH, new KvWatchReq(1, false, false,
                    Collections.singletonList(key), new long[1])));
            channel.configureBlocking(false);
        }

        void drain() throws IOException {
            int n;
            do {
                sink.clear();
                n = channel.read(sink);
                if (n > 0) {
                    received += n;
                }
            } while (n > 0);
            if (n < 0) {
                throw new IOException("the server closed the connection of a stuck watcher");
            }
        }

        private void send(WritePacket p) throws IOException {
            int size = p.encodedSize();
            ByteBuffer b = ByteBuffer.allocate(4 + size + EncodeContext.MIN_BUFFER_BYTES);
            b.putInt(size);
            assertTrue(p.encode(new EncodeContext(), b));
            b.flip();
            while (b.hasRemaining()) {
                channel.write(b);
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
