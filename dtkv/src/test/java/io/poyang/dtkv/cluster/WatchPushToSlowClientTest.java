package io.poyang.dtkv.cluster;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.codec.PbWireType;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.dtkv.client.KvClient;
import io.poyang.net.Commands;
import io.poyang.net.Handshake;
import io.poyang.net.PacketType;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Watch notifications to clients that are slow to answer them, or answer with an error, seen from a
 * raw socket that speaks the frame format: a notification stays in flight until the client answers
 * (its keys are not sent again behind it, where a client with slow listeners would queue them
 * without bound), and an error answer is not followed by the same push in a busy loop.
 */
class WatchPushToSlowClientTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(30)
    void aNotificationIsNotSentAgainWhileTheClientHasNotAnsweredIt() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 1).start(); RawWatcher raw = new RawWatcher(c.cluster.servicePort(1))) {
            KvClient kv = c.client();
            kv.put("k", "v0");
            raw.watch("k");
            Push first = raw.nextPush(5_000);
            assertNotNull(first, "no first notification");
            for (int i = 1; i <= 20; i++) {
                kv.put("k", "v" + i);
            }
            // past the 10 s after which a push used to count as undelivered and be sent again
            assertNull(raw.nextPush(11_000), "a second notification came while the first was unanswered");
            raw.answer(first, ResponseCode.SUCCESS);
            assertNotNull(raw.nextPush(5_000), "the changes made meanwhile did not follow the answer");
        }
    }

    @Test
    @Timeout(30)
    void aClientThatAnswersPushesWithAnErrorIsNotPushedToInABusyLoop() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 1).start(); RawWatcher raw = new RawWatcher(c.cluster.servicePort(1))) {
            c.client().put("k", "v");
            raw.watch("k");
            int pushes = 0;
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_500);
            for (Push p; (p = raw.nextPush(TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()))) != null; ) {
                pushes++;
                raw.answer(p, ResponseCode.COMMAND_NOT_FOUND);   // a client that takes no notifications
            }
            assertTrue(pushes >= 1, "no notification at all");
            // one, then one more per retry interval (1 s); before, thousands a second
            assertTrue(pushes <= 5, pushes + " notifications in 2.5 s to a client that refuses them");
        }
    }

    /** A push's header. */
    private static final class Push extends PbCallback<Push> {
        int type;
        int command;
        int seq;

        @Override
        protected int wireTypeOf(int field) {
            return field == 6 || field == 8 || field == 15 ? PbWireType.LEN : PbWireType.VARINT;
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 1) {
                type = (int) v;
            } else if (field == 2) {
                command = (int) v;
            } else if (field == 3) {
                seq = (int) v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int len, int off) {
        }

        @Override
        protected Push end() {
            return this;
        }
    }

    /** A client on a plain socket: handshakes, registers a watch, reads pushes and answers them when told. */
    private static final class RawWatcher implements AutoCloseable {
        final Socket socket = new Socket();
        final DataInputStream in;
        final OutputStream out;

        RawWatcher(int port) throws IOException {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
            send(WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION, 0,
                    12, 34, 8 << 20, 1_000, 1 << 20)));
            socket.setSoTimeout(5_000);
            readFrame();   // the handshake's answer
        }

        void watch(String key) throws IOException {
            send(WritePacket.request(KvCommands.KV_WATCH, new KvWatchReq(1, false, false,
                    Collections.singletonList(key), new long[1])));
        }

        /** The next watch notification within {@code waitMillis} (other packets are skipped), or null. */
        Push nextPush(long waitMillis) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
            while (true) {
                long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMillis <= 0) {
                    return null;
                }
                socket.setSoTimeout((int) leftMillis);
                byte[] frame;
                try {
                    frame = readFrame();
                } catch (SocketTimeoutException e) {
                    return null;
                }
                Push p = PbParser.parse(frame, new Push());
                if (p.type == PacketType.REQUEST && p.command == KvCommands.KV_WATCH_NOTIFY) {
                    return p;
                }
            }
        }

        /** Answers a push: SUCCESS acknowledges it, another code fails it. */
        void answer(Push p, int responseCode) throws IOException {
            ByteArrayOutputStream packet = new ByteArrayOutputStream();
            varintField(packet, 1, PacketType.RESPONSE);
            varintField(packet, 2, p.command);
            varintField(packet, 3, p.seq);
            varintField(packet, 4, responseCode);
            out.write(ByteBuffer.allocate(4).putInt(packet.size()).array());
            packet.writeTo(out);
            out.flush();
        }

        private static void varintField(ByteArrayOutputStream b, int field, long value) {
            varint(b, (long) field << 3 | PbWireType.VARINT);
            varint(b, value);
        }

        private static void varint(ByteArrayOutputStream b, long v) {
            while ((v & ~0x7FL) != 0) {
                b.write((int) (v & 0x7F) | 0x80);
                v >>>= 7;
            }
            b.write((int) v);
        }

        private void send(WritePacket p) throws IOException {
            int size = p.encodedSize();
            ByteBuffer b = ByteBuffer.allocate(4 + size + EncodeContext.MIN_BUFFER_BYTES);
            b.putInt(size);
            assertTrue(p.encode(new EncodeContext(), b));
            assertEquals(4 + size, b.position());
            out.write(b.array(), 0, 4 + size);
            out.flush();
        }

        private byte[] readFrame() throws IOException {
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            return frame;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
