package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.codec.PbWireType;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** A plain blocking socket speaking (or deliberately mangling) the frame format, for tests. */
final class RawConnection implements AutoCloseable {

    final Socket socket;
    final DataInputStream in;
    final OutputStream out;

    RawConnection(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    static RawConnection connect(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        return new RawConnection(s);
    }

    static byte[] hex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    static byte[] encode(io.poyang.codec.Encodable m) {
        int size = m instanceof WritePacket ? ((WritePacket) m).prepareSize() : m.encodedSize();
        // room beyond the size: the field helpers want space for their largest case
        ByteBuffer b = ByteBuffer.allocate(size + EncodeContext.MIN_BUFFER_BYTES);
        if (!m.encode(new EncodeContext(), b) || b.position() != size) {
            throw new AssertionError("encoded " + b.position() + " bytes, expected " + size);
        }
        return java.util.Arrays.copyOf(b.array(), size);
    }

    static byte[] frame(byte[] packet) {
        return ByteBuffer.allocate(4 + packet.length).putInt(packet.length).put(packet).array();
    }

    void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void sendFrame(byte[] packet) throws IOException {
        send(frame(packet));
    }

    void sendPacket(WritePacket p) throws IOException {
        sendFrame(encode(p));
    }

    /** Sends a valid handshake and reads the answer. */
    Decoded handshake() throws IOException {
        WritePacket hs = WritePacket.request(Commands.HANDSHAKE, new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION,
                0, 1, 2, 1 << 20, 1000, 1 << 20));
        hs.seq = 1;
        hs.timeoutNanos = 1_000_000_000L;
        sendPacket(hs);
        Decoded d = readPacket();
        if (d.type != PacketType.RESPONSE || d.seq != 1) {
            throw new IOException("unexpected handshake answer " + d);
        }
        return d;
    }

    /** Server side: reads the client's handshake and answers it with a plain one (1 MiB frames, no node id). */
    void answerHandshake() throws IOException {
        Decoded hs = readPacket();
        WritePacket answer = WritePacket.response(new Handshake(Handshake.MAGIC, Handshake.MAJOR_VERSION,
                Handshake.MINOR_VERSION, 1, 2, 1 << 20, 1000, 1 << 20));
        answer.command = Commands.HANDSHAKE;
        answer.seq = hs.seq;
        sendPacket(answer);
    }

    byte[] readFrame() throws IOException {
        int len = in.readInt();
        byte[] b = new byte[len];
        in.readFully(b);
        return b;
    }

    Decoded readPacket() throws IOException {
        return PbParser.parse(readFrame(), new Decoded());
    }

    /** True when the other side closed the connection (EOF or reset) within the socket timeout. */
    boolean closedByPeer(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (EOFException | java.net.SocketException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** A packet decoded by a test-side callback, independent of the reader under test. */
    static final class Decoded extends PbCallback<Decoded> {
        int type;
        int command;
        int seq;
        int responseCode;
        int bizCode;
        String message;
        long timeoutNanos;
        byte[] extra;
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
                case 5: bizCode = (int) v; break;
                case 7: timeoutNanos = v; break;
                default: break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int len, int off) {
            if (field == 6) {
                String s = parseString(piece, len, off);
                if (s != null) {
                    message = s;
                }
            } else {
                byte[] b = parseBytes(piece, len, off);
                if (b != null) {
                    if (field == 8) {
                        extra = b;
                    } else {
                        body = b;
                    }
                }
            }
        }

        @Override
        protected Decoded end() {
            return this;
        }

        String bodyText() {
            return body == null ? "" : new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return PacketType.name(type) + " command=" + command + " seq=" + seq + " code="
                    + ResponseCode.name(responseCode) + " message=" + message;
        }
    }
}
