package io.poyang.codec;

import java.nio.ByteBuffer;

/**
 * A streaming protobuf decoder for one message at a time. {@link #prepare} tells it the message
 * length and the callback; {@link #feed} consumes whatever part of the message the buffer holds
 * (never more) and may be called again with the next buffer, so a message may be split at any
 * byte across any number of reads and decodes to the same result. Fields go to the callback as
 * they complete; length-delimited fields are handed over in place, piece by piece, never copied
 * into an intermediate array.
 *
 * <p>Malformed input raises {@link CodecException} with the byte offset of the malformed element
 * and the reason: a varint over 10 bytes (a tag over 5), a length that is negative or runs past
 * the message, a message ending inside a field, field number 0 or over 2^29-1, a group or invalid
 * wire type, a known field with the wrong wire type, a message over the size limit, nesting
 * deeper than {@link #MAX_DEPTH}. The offsets and reasons do not depend on how the input was
 * split. After an error the parser refuses input until prepared again. Every byte is looked at
 * once, and nothing is allocated from a length read off the wire before that length is checked
 * against the message, so bad input can cause neither a loop nor a large allocation.
 *
 * <p>Not thread safe; one parser per connection or thread.
 */
public final class PbParser {

    /** Levels of messages nested inside the outermost one that the parser (and encoder) accept. */
    public static final int MAX_DEPTH = 32;

    private static final int S_TAG = 0;
    private static final int S_VARINT = 1;
    private static final int S_FIXED32 = 2;
    private static final int S_FIXED64 = 3;
    private static final int S_LEN = 4;
    private static final int S_BODY = 5;
    private static final int S_DONE = 6;
    private static final int S_FAILED = 7;
    private static final int S_IDLE = 8;

    private final int maxMessageBytes;
    private final int depth;

    private PbCallback<?> callback;
    private int state = S_IDLE;
    private int messageLength;
    private int consumed;
    /** Offset of this message within the outermost message, for error positions. */
    private long base;

    private int field;
    private boolean skipField;
    /** Offset within the outermost message of the current field's tag. */
    private long fieldStart;
    /** Offset within the outermost message of the current field's value (or length). */
    private long valueStart;
    private long acc;
    private int accBits;
    private int fieldLength;
    private int fieldOffset;
    private Object result;

    private PbParser child;
    /** Holds a string field that arrives in pieces (package-private for tests). */
    byte[] scratch;
    byte[] pendingBytes;
    private long packedAcc;
    private int packedBits;
    private long packedElementStart;

    /** A parser refusing messages over {@code maxMessageBytes}. */
    public PbParser(int maxMessageBytes) {
        this(maxMessageBytes, 0);
    }

    private PbParser(int maxMessageBytes, int depth) {
        if (maxMessageBytes < 0) {
            throw new IllegalArgumentException("maxMessageBytes must not be negative: " + maxMessageBytes);
        }
        this.maxMessageBytes = maxMessageBytes;
        this.depth = depth;
    }

    /** Decodes a whole message held in an array. For cold paths and tests. */
    public static <T> T parse(byte[] message, PbCallback<T> callback) {
        return parse(ByteBuffer.wrap(message), callback);
    }

    /** Decodes the message between the buffer's position and limit (consuming it). */
    public static <T> T parse(ByteBuffer message, PbCallback<T> callback) {
        PbParser p = new PbParser(Integer.MAX_VALUE);
        p.prepare(callback, message.remaining());
        if (!p.feed(message)) {
            throw new IllegalStateException("buffer held less than the message");
        }
        return p.result();
    }

    /** Starts a message of {@code length} bytes; the previous one may be finished or abandoned. */
    public void prepare(PbCallback<?> callback, int length) {
        prepareNested(callback, length, 0);
    }

    void prepareNested(PbCallback<?> callback, int length, long base) {
        this.base = base;
        this.callback = callback;
        this.result = null;
        this.pendingBytes = null;
        if (scratch != null && scratch.length > KEPT_SCRATCH_BYTES) {
            scratch = null;
        }
        this.consumed = 0;
        this.messageLength = 0;
        if (length < 0 || length > maxMessageBytes) {
            state = S_FAILED;
            throw new CodecException(base, "message of " + length + " bytes is outside the limit of "
                    + maxMessageBytes + " bytes");
        }
        this.messageLength = length;
        this.state = S_TAG;
        this.acc = 0;
        this.accBits = 0;
        this.fieldStart = base;
        callback.parser = this;
        try {
            callback.begin(length);
            if (length == 0) {
                finish();
            }
        } catch (RuntimeException | Error e) {
            state = S_FAILED;
            throw e;
        }
    }

    public boolean isFinished() {
        return state == S_DONE;
    }

    /** Bytes of the current message not consumed yet. */
    public int remaining() {
        return messageLength - consumed;
    }

    /** The callback's result once the message is finished. */
    @SuppressWarnings("unchecked")
    public <T> T result() {
        if (state != S_DONE) {
            throw new IllegalStateException("the message is not finished");
        }
        return (T) result;
    }

    /** Position within the outermost message of the next byte this parser will consume. */
    long absolutePosition() {
        return base + consumed;
    }

    /**
     * Consumes bytes of the current message from {@code buf} (from its position, up to its limit
     * or the end of the message) and returns true when the message is complete. The buffer's
     * position is left after the consumed bytes; its limit is not changed.
     */
    public boolean feed(ByteBuffer buf) {
        if (state == S_DONE) {
            return true;
        }
        if (state == S_FAILED || state == S_IDLE) {
            throw new IllegalStateException(state == S_FAILED
                    ? "the parser failed on earlier input; prepare it for a new message"
                    : "the parser has no message; call prepare first");
        }
        try {
            int start = buf.position();
            int end = (int) Math.min(buf.limit(), (long) start + (messageLength - consumed));
            int pos = start;
            while (pos < end) {
                switch (state) {
                    case S_TAG:
                        pos = readTag(buf, pos, end);
                        break;
                    case S_VARINT:
                        pos = readVarint(buf, pos, end);
                        break;
                    case S_FIXED32:
                    case S_FIXED64:
                        pos = readFixed(buf, pos, end);
                        break;
                    case S_LEN:
                        pos = readLength(buf, pos, end);
                        break;
                    case S_BODY:
                        pos = readBody(buf, pos, end);
                        break;
                    default:
                        throw new IllegalStateException("parser in state " + state);
                }
            }
            buf.position(end);
            if (consumed == messageLength) {
                if (state != S_TAG || accBits != 0) {
                    throw truncated();
                }
                finish();
                return true;
            }
            return false;
        } catch (RuntimeException | Error e) {
            state = S_FAILED;
            throw e;
        }
    }

    private CodecException truncated() {
        String what;
        long at;
        switch (state) {
            case S_TAG:
                return new CodecException(fieldStart, "the message (" + messageLength
                        + " bytes) ends inside a tag");
            case S_VARINT:
                what = "varint";
                break;
            case S_FIXED32:
                what = "fixed32";
                break;
            case S_FIXED64:
                what = "fixed64";
                break;
            default:
                what = "length";
                break;
        }
        at = valueStart;
        return new CodecException(at, "the message (" + messageLength + " bytes) ends inside the " + what
                + " of field " + field);
    }

    private void finish() {
        result = callback.end();
        state = S_DONE;
    }

    /**
     * Reads varint bytes into {@code acc} from pos; returns the new position. {@code accBits} is
     * left at -1 when the varint completed (and the caller resets it), else counts the bits read.
     */
    /** What a varint being read is, for error messages only (built when an error is thrown). */
    private static final int VARINT_TAG = 0;
    private static final int VARINT_VALUE = 1;
    private static final int VARINT_LENGTH = 2;

    private int varintBytes(ByteBuffer buf, int pos, int end, int maxBytes, long startForErrors, int what) {
        long a = acc;
        int bits = accBits;
        while (pos < end) {
            if (bits == maxBytes * 7) {
                throw new CodecException(startForErrors, describeVarint(what) + " is longer than " + maxBytes + " bytes");
            }
            byte b = buf.get(pos++);
            a |= (long) (b & 0x7F) << bits;
            bits += 7;
            if (b >= 0) {
                acc = a;
                accBits = -1;
                return pos;
            }
        }
        acc = a;
        accBits = bits;
        return pos;
    }

    private String describeVarint(int what) {
        switch (what) {
            case VARINT_TAG:
                return "a tag";
            case VARINT_VALUE:
                return "the varint of field " + field;
            default:
                return "the length of field " + field;
        }
    }

    private int readTag(ByteBuffer buf, int pos, int end) {
        if (accBits == 0) {
            fieldStart = base + consumed;
        }
        int p = varintBytes(buf, pos, end, 5, fieldStart, VARINT_TAG);
        consumed += p - pos;
        if (accBits != -1) {
            return p;
        }
        long tag = acc;
        acc = 0;
        accBits = 0;
        valueStart = base + consumed;
        int wireType = (int) (tag & 7);
        long fieldNumber = tag >>> 3;
        if (fieldNumber == 0 || fieldNumber > PbUtil.MAX_FIELD_NUMBER) {
            throw new CodecException(fieldStart, "invalid field number " + fieldNumber
                    + " (valid numbers are 1 to " + PbUtil.MAX_FIELD_NUMBER + ")");
        }
        field = (int) fieldNumber;
        switch (wireType) {
            case PbWireType.VARINT:
                state = S_VARINT;
                break;
            case PbWireType.FIXED32:
                state = S_FIXED32;
                break;
            case PbWireType.FIXED64:
                state = S_FIXED64;
                break;
            case PbWireType.LEN:
                state = S_LEN;
                break;
            default:
                throw new CodecException(fieldStart, "field " + field + " has wire type "
                        + PbWireType.name(wireType) + ", which is not supported (groups are deprecated)");
        }
        int expected = callback.readsArrivedWireType ? callback.wireTypeOf(field, wireType) : callback.wireTypeOf(field);
        skipField = expected == PbWireType.UNKNOWN;
        if (!skipField && !PbWireType.accepts(expected, wireType)) {
            throw new CodecException(fieldStart, "field " + field + " has wire type "
                    + PbWireType.name(wireType) + " but " + PbWireType.name(expected) + " was expected");
        }
        return p;
    }

    private int readVarint(ByteBuffer buf, int pos, int end) {
        int p = varintBytes(buf, pos, end, PbUtil.MAX_VARINT_BYTES, valueStart, VARINT_VALUE);
        consumed += p - pos;
        if (accBits == -1) {
            long v = acc;
            acc = 0;
            accBits = 0;
            state = S_TAG;
            if (!skipField) {
                callback.readVarint(field, v);
            }
        }
        return p;
    }

    private int readFixed(ByteBuffer buf, int pos, int end) {
        int sizeBits = state == S_FIXED32 ? 32 : 64;
        long a = acc;
        int bits = accBits;
        int start = pos;
        while (pos < end && bits < sizeBits) {
            a |= (long) (buf.get(pos++) & 0xFF) << bits;
            bits += 8;
        }
        consumed += pos - start;
        if (bits < sizeBits) {
            acc = a;
            accBits = bits;
            return pos;
        }
        acc = 0;
        accBits = 0;
        state = S_TAG;
        if (!skipField) {
            if (sizeBits == 32) {
                callback.readFixed32(field, (int) a);
            } else {
                callback.readFixed64(field, a);
            }
        }
        return pos;
    }

    private int readLength(ByteBuffer buf, int pos, int end) {
        int p = varintBytes(buf, pos, end, PbUtil.MAX_VARINT_BYTES, valueStart, VARINT_LENGTH);
        consumed += p - pos;
        if (accBits != -1) {
            return p;
        }
        long len = acc;
        acc = 0;
        accBits = 0;
        if (len < 0 || len > Integer.MAX_VALUE) {
            throw new CodecException(valueStart, "field " + field + " has a negative or oversized length "
                    + (len < 0 ? Long.toUnsignedString(len) + " (" + len + " signed)" : String.valueOf(len)));
        }
        int left = messageLength - consumed;
        if (len > left) {
            throw new CodecException(valueStart, "field " + field + " claims " + len + " bytes but only "
                    + left + " are left in the message");
        }
        fieldLength = (int) len;
        fieldOffset = 0;
        if (len == 0) {
            state = S_TAG;
            if (!skipField) {
                int oldLimit = buf.limit();
                buf.limit(p);
                buf.position(p);
                try {
                    callback.readBytes(field, buf, 0, 0);
                } finally {
                    buf.limit(oldLimit);
                }
            }
            return p;
        }
        state = S_BODY;
        return p;
    }

    private int readBody(ByteBuffer buf, int pos, int end) {
        int n = Math.min(end - pos, fieldLength - fieldOffset);
        int stop = pos + n;
        if (!skipField) {
            int oldLimit = buf.limit();
            buf.limit(stop);
            buf.position(pos);
            try {
                callback.readBytes(field, buf, fieldLength, fieldOffset);
            } finally {
                buf.limit(oldLimit);
            }
        }
        consumed += n;
        fieldOffset += n;
        if (fieldOffset == fieldLength) {
            state = S_TAG;
        }
        return stop;
    }

    // ---- support for PbCallback helpers ----

    /** Offset within the outermost message of the current LEN field's first body byte. */
    private long bodyStart() {
        return base + consumed - fieldOffset;
    }

    CodecException invalidUtf8() {
        return new CodecException(bodyStart(), "string field " + field + " is not valid UTF-8");
    }

    PbParser nestedParser() {
        if (depth >= MAX_DEPTH) {
            throw new CodecException(bodyStart(), "field " + field + " nests messages deeper than "
                    + MAX_DEPTH + " levels");
        }
        if (child == null) {
            child = new PbParser(maxMessageBytes, depth + 1);
        }
        return child;
    }

    void prepareChild(PbCallback<?> childCallback, int length) {
        nestedParser().prepareNested(childCallback, length, bodyStart());
    }

    /** The scratch array for a string field, holding at least {@code needed} bytes and keeping its first {@code keep}. */
    byte[] scratch(int needed, int keep) {
        byte[] s = scratch;
        if (s == null || s.length < needed) {
            s = PbUtil.grow(s, keep, needed, messageLength);
            scratch = s;
        }
        return s;
    }

    /** Scratch arrays above this size are dropped when the next message starts (not kept for the connection's life). */
    private static final int KEPT_SCRATCH_BYTES = 64 * 1024;


    void packedVarints(ByteBuffer piece, int fieldLength, int offsetInField, PbCallback.LongSink sink) {
        if (offsetInField == 0) {
            packedAcc = 0;
            packedBits = 0;
        }
        long a = packedAcc;
        int bits = packedBits;
        int start = piece.position();
        int pos = start;
        int end = piece.limit();
        long pieceAt = bodyStart() + offsetInField;
        while (pos < end) {
            if (bits == 0) {
                packedElementStart = pieceAt + (pos - start);
            } else if (bits == 70) {
                throw new CodecException(packedElementStart, "a varint in packed field " + field
                        + " is longer than 10 bytes");
            }
            byte b = piece.get(pos++);
            a |= (long) (b & 0x7F) << bits;
            bits += 7;
            if (b >= 0) {
                sink.accept(a);
                a = 0;
                bits = 0;
            }
        }
        if (offsetInField + (end - start) == fieldLength && bits != 0) {
            throw new CodecException(packedElementStart, "packed field " + field + " ends inside a varint");
        }
        piece.position(end);
        packedAcc = a;
        packedBits = bits;
    }

    void packedFixed(ByteBuffer piece, int fieldLength, int offsetInField, int size, PbCallback.LongSink sink) {
        if (offsetInField == 0) {
            if (fieldLength % size != 0) {
                throw new CodecException(valueStart, "packed fixed" + size * 8 + " field " + field + " has length "
                        + fieldLength + ", not a multiple of " + size);
            }
            packedAcc = 0;
            packedBits = 0;
        }
        int sizeBits = size * 8;
        long a = packedAcc;
        int bits = packedBits;
        int pos = piece.position();
        int end = piece.limit();
        while (pos < end) {
            a |= (long) (piece.get(pos++) & 0xFF) << bits;
            bits += 8;
            if (bits == sizeBits) {
                sink.accept(a);
                a = 0;
                bits = 0;
            }
        }
        piece.position(end);
        packedAcc = a;
        packedBits = bits;
    }
}
