package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;

/**
 * An outgoing packet: the header fields of docs/proto/packet.proto and an {@link Encodable} body
 * written as field 15. Create one with {@link #request}, {@link #oneWay}, {@link #response} or
 * {@link #error}; a packet is sent once (the net layer fills in its seq and timeout) and must not
 * be changed after it was handed over. The body is only read, so one body instance may be shared
 * by many packets.
 *
 * <p>{@link #onDone()} is called once on the I/O thread when the packet has been encoded or
 * dropped, so a subclass can release what its body holds (a pooled buffer, for instance).
 */
public class WritePacket implements Encodable {

    private static final byte[] NO_BYTES = new byte[0];

    int type;
    int command;
    int seq;
    int responseCode;
    int bizCode;
    byte[] message;
    long timeoutNanos;
    byte[] extra;
    /** Not final: a request sent with {@link CallOptions#freeingRoomWhenWritten()} drops it once encoded. */
    Encodable body;
    private int bodySize;
    private int encodedSize;

    // ---- bookkeeping of the net layer; owned by the I/O worker once the packet is handed over ----

    /** Link of a connection's write queue or a peer's waiting list. */
    WritePacket next;
    /** Requests: where the response goes. */
    RpcCallback<Object> callback;
    DecoderFactory<?> decoder;
    boolean callbackOnIoThread;
    /** Requests and one-way packets: when the caller gives up, on System.nanoTime's scale. */
    long deadlineNanos;
    /** Bytes counted against the sender's pending limit (-1: none), released when the packet is done. */
    int flowBytes = -1;
    /** Requests: give the pending-limit room back (and drop the body) once written, not when answered. */
    boolean freeRoomWhenWritten;
    /** Such a request once encoded: its connection's encoded-byte count at the end of its frame. */
    long endOfFrameOffset;
    /** Link of a connection's list of encoded requests whose room is freed once they are written. */
    WritePacket nextAwaitingWrite;
    /** True once a request was answered, failed or timed out (it may still sit in a write queue). */
    boolean completed;
    /** {@link #onDone()} was called. */
    private boolean finished;
    /** True once a request was encoded into its connection's out buffers: it may have left. */
    boolean encoded;
    /** Target: a connection (server push, handshake) or a peer (client). */
    NioConnection connection;
    Peer peer;
    /** Responses: the request being answered. */
    ReqContext context;

    protected WritePacket(int type, int command, Encodable body) {
        this.type = type;
        this.command = command;
        this.body = body;
    }

    /** A request of {@code command}; {@code body} may be null (an empty message). */
    public static WritePacket request(int command, Encodable body) {
        return new WritePacket(PacketType.REQUEST, command, body);
    }

    /** A one-way message of {@code command}: no response is expected. */
    public static WritePacket oneWay(int command, Encodable body) {
        return new WritePacket(PacketType.ONE_WAY, command, body);
    }

    /** A successful response carrying {@code body} (may be null). */
    public static WritePacket response(Encodable body) {
        return new WritePacket(PacketType.RESPONSE, 0, body);
    }

    /** An error response with one of the {@link ResponseCode}s and a message for the caller. */
    public static WritePacket error(int responseCode, String message) {
        if (responseCode == ResponseCode.SUCCESS) {
            throw new IllegalArgumentException("an error response needs a code other than SUCCESS");
        }
        WritePacket p = new WritePacket(PacketType.RESPONSE, 0, null);
        p.responseCode = responseCode;
        p.message = PbUtil.utf8(message);
        return p;
    }

    /** A {@link ResponseCode#BIZ_ERROR} response carrying the command's own error code. */
    public static WritePacket bizError(int bizCode, String message) {
        return error(ResponseCode.BIZ_ERROR, bizCode, message);
    }

    /**
     * An error response whose field 5 carries a detail the response code defines; raft's
     * {@link ResponseCode#NOT_LEADER} puts the leader's node id there (0: unknown).
     */
    public static WritePacket error(int responseCode, int bizCode, String message) {
        WritePacket p = error(responseCode, message);
        p.bizCode = bizCode;
        return p;
    }

    /** Sets field 8, opaque bytes for extensions. */
    public WritePacket extra(byte[] extra) {
        this.extra = extra;
        return this;
    }

    public int type() {
        return type;
    }

    public int command() {
        return command;
    }

    public int seq() {
        return seq;
    }

    public int responseCode() {
        return responseCode;
    }

    public Encodable body() {
        return body;
    }

    /** The detail of an error response (field 5): raft's leader hint, a command's own error code; 0 when none. */
    public int bizCode() {
        return bizCode;
    }

    /** The message of an error response, or null. */
    public String message() {
        return message == null ? null : new String(message, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Called once on the I/O thread after the packet was encoded or dropped: sent, failed (a
     * request whose connection or peer went, or that timed out before it left), or refused.
     */
    protected void onDone() {
    }

    /**
     * Calls {@link #onDone()} the first time only: a request can be failed (its connection closed)
     * while still queued, and the queue's walk then meets it again.
     */
    final void finish() {
        if (!finished) {
            finished = true;
            onDone();
        }
    }

    /** Computes and caches the size of the packet message (without the 4-byte frame length). */
    final int prepareSize() {
        int bs = body == null ? 0 : body.encodedSize();
        bodySize = bs;
        int n = PbUtil.sizeOfInt32Field(1, type)
                + PbUtil.sizeOfInt32Field(2, command)
                + PbUtil.sizeOfInt32Field(3, seq)
                + PbUtil.sizeOfInt32Field(4, responseCode)
                + PbUtil.sizeOfInt32Field(5, bizCode)
                + PbUtil.sizeOfBytesField(6, message)
                + PbUtil.sizeOfInt64Field(7, timeoutNanos)
                + PbUtil.sizeOfBytesField(8, extra)
                // field 15 is "bytes" in the .proto: protoc leaves an empty one out, so do we
                + PbUtil.sizeOfLenField(15, bs);
        encodedSize = n;
        return n;
    }

    @Override
    public int encodedSize() {
        return encodedSize == 0 ? prepareSize() : encodedSize;
    }

    @Override
    @SuppressWarnings("fallthrough") // the resumable-encoder pattern: each stage falls into the next
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        // The field helpers want room for their largest case, so keep a margin before taking the shortcut.
        if (c.stage == 0 && dest.remaining() >= encodedSize + EncodeContext.MIN_BUFFER_BYTES) {
            encodeWhole(c, dest);
            return true;
        }
        switch (c.stage) {
            case 0:
                if (!c.int32Field(dest, 1, type)) {
                    return false;
                }
                // fall through
            case 1:
                if (!c.int32Field(dest, 2, command)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int32Field(dest, 3, seq)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int32Field(dest, 4, responseCode)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, bizCode)) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.bytesField(dest, 6, message)) {
                    return false;
                }
                // fall through
            case 6:
                if (!c.int64Field(dest, 7, timeoutNanos)) {
                    return false;
                }
                // fall through
            case 7:
                if (!c.bytesField(dest, 8, extra)) {
                    return false;
                }
                // fall through
            case 8:
                if (bodySize == 0) {
                    c.stage++;
                } else if (!c.messageField(dest, 15, body)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    /** The common case: the whole packet fits, so no field needs to be resumable. */
    private void encodeWhole(EncodeContext c, ByteBuffer dest) {
        PbUtil.writeInt32Field(dest, 1, type);
        PbUtil.writeInt32Field(dest, 2, command);
        PbUtil.writeInt32Field(dest, 3, seq);
        PbUtil.writeInt32Field(dest, 4, responseCode);
        PbUtil.writeInt32Field(dest, 5, bizCode);
        PbUtil.writeBytesField(dest, 6, message);
        PbUtil.writeInt64Field(dest, 7, timeoutNanos);
        PbUtil.writeBytesField(dest, 8, extra);
        if (bodySize > 0) {
            PbUtil.writeTag(dest, 15, PbWireType.LEN);
            PbUtil.writeUnsignedVarint32(dest, bodySize);
            c.reset();
            if (!body.encode(c, dest)) {
                throw new IllegalStateException(body.getClass().getName() + " wrote more than its encodedSize " + bodySize);
            }
        }
        c.stage = 9;
    }

    /** The message as text, for logs. */
    String messageText() {
        return message == null ? null : new String(message, java.nio.charset.StandardCharsets.UTF_8);
    }

    static byte[] noBytes() {
        return NO_BYTES;
    }

    @Override
    public String toString() {
        return PacketType.name(type) + "(command=" + command + ", seq=" + seq
                + (responseCode != 0 ? ", code=" + ResponseCode.name(responseCode) : "") + ")";
    }
}
