package io.poyang.net;

import io.poyang.codec.CodecException;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;

/**
 * Turns the bytes of one connection into packets. It keeps no bytes of its own: the frame length,
 * the header fields and the body are decoded in place from the worker's read buffer, and a frame
 * split across reads resumes where it stopped (the parser holds partial varints, the body decoder
 * holds partial bodies). One reader per connection; I/O worker thread only.
 *
 * <p>The body (field 15) is handed to its decoder as it arrives, which needs the header first: the
 * command for a request, the seq for a response. Every Poyang and protoc encoder writes fields in
 * number order, so that is the normal case; a body that comes earlier is copied aside and decoded
 * when the frame ends.
 */
final class PacketReader extends PbCallback<Object> {

    /** Before the handshake a connection may only send small frames. */
    static final int HANDSHAKE_MAX_FRAME_BYTES = 1024;

    static final int BODY_NONE = 0;
    static final int BODY_PB = 1;
    static final int BODY_RAW = 2;
    static final int BODY_SKIP = 3;
    static final int BODY_EARLY = 4;

    private final NioConnection connection;
    private final int maxFrameBytes;
    private final PbParser parser;

    // ---- frame state ----
    private int lengthBytesRead;
    private int frameLength;
    private int frameBytesFed;
    private boolean inFrame;
    private int skipLeft;
    private RuntimeException frameError;

    // ---- the packet being decoded ----
    int type;
    int command;
    int seq;
    int responseCode;
    int bizCode;
    String message;
    long timeoutNanos;
    byte[] extra;
    int bodyMode;
    PbCallback<?> bodyDecoder;
    Object body;
    boolean bodyDone;
    byte[] earlyBody;
    /**
     * The type, command and response code the body's decoder was chosen by (when the body field
     * started; -1: not chosen, or chosen at the end of the frame). The packet is handled by the
     * values at its end, so a header field repeated after the body with another value is caught.
     */
    private int bodyForType = -1;
    private int bodyForCommand;
    private int bodyForResponseCode;
    /** Responses: the pending request, found when the body starts or the frame ends. */
    WritePacket request;
    /** Requests: the command's processor, found when the body starts or the frame ends. */
    ProcessorEntry processor;

    PacketReader(NioConnection connection, int maxFrameBytes) {
        this.connection = connection;
        this.maxFrameBytes = maxFrameBytes;
        this.parser = new PbParser(maxFrameBytes);
    }

    int frameLength() {
        return frameLength;
    }

    /** Decodes every complete packet in {@code buf} and keeps the state of a trailing partial one. */
    void decode(ByteBuffer buf) {
        NioConnection c = connection;
        NioWorker worker = c.worker;
        while (buf.hasRemaining()) {
            if (skipLeft > 0) {
                int n = Math.min(skipLeft, buf.remaining());
                buf.position(buf.position() + n);
                skipLeft -= n;
                if (skipLeft == 0) {
                    inFrame = false;
                    RuntimeException e = frameError;
                    frameError = null;
                    worker.onCorruptPacket(c, this, e);
                    if (c.isClosed()) {
                        return;
                    }
                }
                continue;
            }
            if (!inFrame) {
                if (!readLength(buf)) {
                    return;
                }
                int limit = c.handshakeDone ? maxFrameBytes : HANDSHAKE_MAX_FRAME_BYTES;
                if (frameLength <= 0 || frameLength > limit) {
                    worker.close(c, "bad frame length " + frameLength + " (must be 1.." + limit
                            + (c.handshakeDone ? ")" : " before the handshake)"), null);
                    return;
                }
                inFrame = true;
                frameBytesFed = 0;
                parser.prepare(this, frameLength);
            }
            int start = buf.position();
            boolean done;
            try {
                done = parser.feed(buf);
            } catch (RuntimeException e) {
                // The frame's length is sound, so skip the rest of it and carry on with the next.
                skipLeft = frameLength - frameBytesFed;
                buf.position(start);
                frameError = e;
                continue;
            }
            frameBytesFed += buf.position() - start;
            if (done) {
                inFrame = false;
                worker.onPacket(c, this);
                // handled: what the packet referred to goes now, not when the next frame starts (on a
                // quiet connection the answered request, its callback and what that holds would stay)
                bodyDecoder = null;
                body = null;
                earlyBody = null;
                request = null;
                processor = null;
                if (c.isClosed()) {
                    return;
                }
            }
        }
    }

    private boolean readLength(ByteBuffer buf) {
        if (lengthBytesRead == 0 && buf.remaining() >= 4) {
            frameLength = buf.getInt();
            return true;
        }
        int len = lengthBytesRead == 0 ? 0 : frameLength;
        while (lengthBytesRead < 4 && buf.hasRemaining()) {
            len = (len << 8) | (buf.get() & 0xFF);
            lengthBytesRead++;
        }
        frameLength = len;
        if (lengthBytesRead < 4) {
            return false;
        }
        lengthBytesRead = 0;
        return true;
    }

    /** True when the connection is in the middle of a frame (a truncated frame if it ends now). */
    boolean inFrame() {
        return inFrame || lengthBytesRead > 0;
    }

    // ---- PbCallback: the packet's fields ----

    @Override
    protected int wireTypeOf(int field) {
        switch (field) {
            case 1:
            case 2:
            case 3:
            case 4:
            case 5:
            case 7:
                return PbWireType.VARINT;
            case 6:
            case 8:
            case 15:
                return PbWireType.LEN;
            default:
                return PbWireType.UNKNOWN;
        }
    }

    @Override
    protected void begin(int messageLength) {
        type = 0;
        command = 0;
        seq = 0;
        responseCode = 0;
        bizCode = 0;
        message = null;
        timeoutNanos = 0;
        extra = null;
        bodyMode = BODY_NONE;
        bodyDecoder = null;
        body = null;
        bodyDone = false;
        earlyBody = null;
        bodyForType = -1;
        request = null;
        processor = null;
    }

    /**
     * Null, or what changed in the header after the body's decoder was chosen by it (only a buggy or
     * hostile peer writes that: a body decoded for one command, or skipped as an error's, must not
     * be taken for another's, or for a success).
     */
    String headerChangedAfterBody() {
        if (bodyForType < 0 || bodyForType == type && bodyForCommand == command
                && bodyForResponseCode == responseCode) {
            return null;
        }
        return "the packet's header changed after its body (type " + bodyForType + " to " + type + ", command "
                + bodyForCommand + " to " + command + ", response code " + bodyForResponseCode + " to "
                + responseCode + ")";
    }

    @Override
    protected void readVarint(int field, long value) {
        switch (field) {
            case 1:
                type = (int) value;
                break;
            case 2:
                command = (int) value;
                break;
            case 3:
                seq = (int) value;
                break;
            case 4:
                responseCode = (int) value;
                break;
            case 5:
                bizCode = (int) value;
                break;
            case 7:
                timeoutNanos = value;
                break;
            default:
                break;
        }
    }

    @Override
    protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
        switch (field) {
            case 6: {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    message = s;
                }
                break;
            }
            case 8: {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    extra = b;
                }
                break;
            }
            case 15:
                bodyPiece(piece, fieldLength, offsetInField);
                break;
            default:
                break;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void bodyPiece(ByteBuffer piece, int fieldLength, int offsetInField) {
        if (offsetInField == 0) {
            if (bodyMode != BODY_NONE) {
                // protobuf semantics for a repeated scalar LEN field: the last one wins
                body = null;
                earlyBody = null;
            }
            bodyDone = false;
            bodyMode = connection.worker.chooseBodyDecoder(connection, this);
            if (bodyMode != BODY_EARLY) {
                bodyForType = type;
                bodyForCommand = command;
                bodyForResponseCode = responseCode;
            }
            if (bodyMode == BODY_RAW) {
                ((RawBodyCallback) bodyDecoder).beginBody(fieldLength);
            }
        }
        boolean last = offsetInField + piece.remaining() == fieldLength;
        switch (bodyMode) {
            case BODY_RAW: {
                RawBodyCallback raw = (RawBodyCallback) bodyDecoder;
                raw.bodyPiece(piece, offsetInField);
                if (last) {
                    body = raw.endBody();
                    bodyDone = true;
                }
                break;
            }
            case BODY_PB: {
                Object r = parseNested(piece, fieldLength, offsetInField, bodyDecoder);
                if (last) {
                    body = r;
                    bodyDone = true;
                }
                break;
            }
            case BODY_EARLY: {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    earlyBody = b;
                }
                break;
            }
            default:
                piece.position(piece.limit());
                break;
        }
    }

    @Override
    protected Object end() {
        return this;
    }

    /**
     * The decoded body once the frame is complete: decodes a body that came before the header,
     * or an absent (empty) body, with {@code decoder}. May throw a CodecException.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    Object finishBody(PbCallback<?> decoder) {
        if (bodyDone) {
            return body;
        }
        if (decoder == null) {
            return null;
        }
        byte[] bytes = earlyBody != null ? earlyBody : WritePacket.noBytes();
        earlyBody = null;
        if (decoder instanceof RawBodyCallback) {
            RawBodyCallback raw = (RawBodyCallback) decoder;
            raw.beginBody(bytes.length);
            if (bytes.length > 0) {
                raw.bodyPiece(ByteBuffer.wrap(bytes), 0);
            }
            body = raw.endBody();
        } else {
            body = PbParser.parse(bytes, decoder);
        }
        bodyDone = true;
        return body;
    }

    /** The error that made the last frame unreadable, as a message for the peer. */
    static String describe(RuntimeException e) {
        if (e instanceof CodecException) {
            return "corrupt packet: " + e.getMessage();
        }
        return "packet could not be decoded: " + e;
    }
}
