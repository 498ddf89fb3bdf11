package io.poyang.net;   // in the net package: it sets the seq of the answers it writes by hand

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.codec.PbWireType;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.dtkv.server.LocalKvCluster;
import io.poyang.raft.core.RaftConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A "moved" push (the node dropped the client's watches of a group) is the only thing that makes a
 * client whose connection stays open register its watches again. One that fails on an open
 * connection — the node's pending limit full, or, as here, the client answering with an error — is
 * sent again. Before, it was dropped: that client's watches went silent for good.
 */
class WatchMovedPushRetryTest {

    private static final int READ_TIMEOUT_MILLIS = 30_000;

    @TempDir
    Path dir;

    @Test
    void aMovedPushThatFailsOnAnOpenConnectionIsSentAgain() throws Exception {
        RaftConfig raft = new RaftConfig().electionTimeoutMillis(500).heartbeatIntervalMillis(50)
                .snapshotEvery(0, 0);
        try (LocalKvCluster c = new LocalKvCluster(dir, 1, 1, raft, 1, null, null).start();
             Socket s = new Socket()) {
            assertTrue(c.waitForLeader(1, 30_000) == 1, "node 1 leads");
            s.connect(new InetSocketAddress("127.0.0.1", c.servicePort(1)), 5_000);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            send(out, 1, WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC,
                    Handshake.MAJOR_VERSION, 0, 7, 7, 8 << 20, 1_000, 1 << 20)));
            assertEquals(1, read(in).seq, "the handshake's answer");
            send(out, 2, WritePacket.request(KvCommands.KV_WATCH, new KvWatchReq(1, false, false,
                    Collections.singletonList("k"), new long[1])));
            Packet answer = nextAnswering(in, out);
            assertEquals(2, answer.seq);
            assertEquals(ResponseCode.SUCCESS, answer.responseCode, "the watch was registered: " + answer.message);

            // the group stops on its leader (the node runs on): the watcher is told to move
            c.server(1).restartGroup(1).get(30, TimeUnit.SECONDS);
            Packet moved = nextMoved(in, out, "the moved push");
            WritePacket refusal = WritePacket.error(ResponseCode.SYS_ERROR, "the test client refuses the push");
            refusal.seq = moved.seq;
            write(out, refusal);

            Packet again = nextMoved(in, out, "the moved push again, after the client answered it with an error");
            assertTrue(again.seq != moved.seq, "a new push");
        }
    }

    /** Reads until a request that is a moved KV_WATCH_NOTIFY (answering the other pushes with success). */
    private static Packet nextMoved(DataInputStream in, OutputStream out, String what) throws IOException {
        while (true) {
            Packet p;
            try {
                p = read(in);
            } catch (SocketTimeoutException e) {
                fail("nothing came within " + READ_TIMEOUT_MILLIS + " ms; expected " + what);
                return null;
            }
            if (p.type == PacketType.REQUEST && p.command == KvCommands.KV_WATCH_NOTIFY) {
                KvWatchNotify n = PbParser.parse(p.body == null ? new byte[0] : p.body, new KvWatchNotify.Decoder());
                if (n.moved()) {
                    assertEquals(1, n.groupId());
                    return p;
                }
                answerSuccess(out, p);
            }
        }
    }

    /** Reads until an answer (a response), answering the pushes that come before it with success. */
    private static Packet nextAnswering(DataInputStream in, OutputStream out) throws IOException {
        while (true) {
            Packet p = read(in);
            if (p.type == PacketType.RESPONSE) {
                return p;
            }
            if (p.type == PacketType.REQUEST) {
                answerSuccess(out, p);
            }
        }
    }

    private static void answerSuccess(OutputStream out, Packet push) throws IOException {
        WritePacket ok = WritePacket.response(null);
        ok.seq = push.seq;
        write(out, ok);
    }

    private static void send(OutputStream out, int seq, WritePacket request) throws IOException {
        request.seq = seq;
        request.timeoutNanos = TimeUnit.SECONDS.toNanos(10);
        write(out, request);
    }

    private static void write(OutputStream out, WritePacket p) throws IOException {
        int size = p.encodedSize();
        ByteBuffer b = ByteBuffer.allocate(4 + size + EncodeContext.MIN_BUFFER_BYTES);
        b.putInt(size);
        assertTrue(p.encode(new EncodeContext(), b));
        out.write(b.array(), 0, 4 + size);
        out.flush();
    }

    private static Packet read(DataInputStream in) throws IOException {
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        return PbParser.parse(frame, new Packet());
    }

    /** A packet's header fields and body, decoded apart from the net layer under test. */
    private static final class Packet extends PbCallback<Packet> {
        int type;
        int command;
        int seq;
        int responseCode;
        String message;
        byte[] body;

        @Override
        protected int wireTypeOf(int field) {
            return field == 6 || field == 8 || field == 15 ? PbWireType.LEN : PbWireType.VARINT;
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1: type = (int) v; break;
                case 2: command = (int) v; break;
                case 3: seq = (int) v; break;
                case 4: responseCode = (int) v; break;
                default: break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int len, int off) {
            if (field == 6) {
                String m = parseString(piece, len, off);
                if (m != null) {
                    message = m;
                }
            } else if (field == 15) {
                byte[] b = parseBytes(piece, len, off);
                if (b != null) {
                    body = b;
                }
            }
        }

        @Override
        protected Packet end() {
            return this;
        }
    }
}
