package io.poyang.codec;

import java.nio.ByteBuffer;

/**
 * The progress of one {@link Encodable} being written: which field is next ({@link #stage}),
 * how far into a length-delimited field it got, and a child context for a nested message.
 * Reusable: call {@link #reset()} before encoding the next message.
 *
 * <p>Scalar fields and field headers (tag and length) are written whole or not at all, so a
 * destination buffer must offer at least {@link #MIN_BUFFER_BYTES} bytes of room (or all that is
 * left of the message) for encoding to make progress; bodies of bytes fields and nested messages
 * are split across buffers freely, and every buffer is filled to the last byte that can be used.
 *
 * <p>A nested message that writes a different number of bytes than its {@code encodedSize()}
 * fails with an {@link IllegalStateException} naming its class, instead of corrupting the output.
 */
public final class EncodeContext {

    /** Room a destination must be able to offer: the largest header is a 5-byte tag and a 10-byte varint. */
    public static final int MIN_BUFFER_BYTES = 16;

    private static final int HEADER_PENDING = -1;

    /** The next field (in the message's own numbering of its write steps) to write. */
    public int stage;
    /** For the field in progress: -1 before its header, else the body bytes already written. */
    private int bodyDone = HEADER_PENDING;
    /** For the field in progress: its length as written in its header. */
    private int fieldLength;
    /** For a repeated field in progress: the index of the element being written. */
    private int listIndex;
    private EncodeContext child;
    private final int depth;

    public EncodeContext() {
        this(0);
    }

    private EncodeContext(int depth) {
        this.depth = depth;
    }

    public EncodeContext reset() {
        stage = 0;
        bodyDone = HEADER_PENDING;
        listIndex = 0;
        return this;
    }

    /**
     * Encodes the whole message into a new array of exactly its size. For cold paths and tests.
     *
     * <p>It encodes through a direct buffer and copies the bytes out, because every hot path
     * encodes into direct buffers: the JIT compiles the encoders (inlined into the network and
     * dispatcher loops) for that one buffer class, and a heap buffer met there for the first time,
     * for instance by a node's first snapshot long after start, would throw those loops back to
     * the interpreter and have them compiled again while the node is under load. The direct
     * buffer is one of {@link #SCRATCH_BYTES} kept per thread; a larger message goes through it
     * in pieces (encoding is resumable), so no size needs more direct memory.
     */
    public static byte[] encodeToArray(Encodable m) {
        int size = m.encodedSize();
        byte[] out = new byte[size];
        ByteBuffer b = takeScratch();
        try {
            EncodeContext c = new EncodeContext();
            int written = 0;
            while (true) {
                b.clear();
                // all that is left, or a whole buffer: either way the room encode() needs to go on
                b.limit(Math.min(b.capacity(), size - written));
                boolean done = m.encode(c, b);
                int n = b.position();
                b.flip();
                b.get(out, written, n);
                written += n;
                if (done) {
                    break;
                }
                if (n == 0) {
                    throw new IllegalStateException(m.getClass().getName() + " needs more than its encodedSize() of "
                            + size + " bytes; fix encodedSize() or encode()");
                }
            }
            if (written != size) {
                throw new IllegalStateException(m.getClass().getName() + " wrote " + written
                        + " bytes but its encodedSize() is " + size + "; fix encodedSize() or encode()");
            }
        } finally {
            returnScratch(b);
        }
        return out;
    }

    /** The size of the direct buffer each thread keeps for {@link #encodeToArray}. */
    static final int SCRATCH_BYTES = 64 << 10;
    private static final ThreadLocal<ByteBuffer[]> SCRATCH = ThreadLocal.withInitial(() -> new ByteBuffer[1]);

    /** This thread's scratch buffer, taken out of its holder while in use (a nested call makes its own). */
    private static ByteBuffer takeScratch() {
        ByteBuffer[] holder = SCRATCH.get();
        ByteBuffer b = holder[0];
        if (b == null) {
            return ByteBuffer.allocateDirect(SCRATCH_BYTES);
        }
        holder[0] = null;
        return b;
    }

    private static void returnScratch(ByteBuffer b) {
        SCRATCH.get()[0] = b;
    }

    private boolean done() {
        stage++;
        return true;
    }

    // ---- scalar fields: written whole or not at all ----
    // Each checks the worst case first (cheap) and computes the exact size only near the end of a
    // buffer, so buffers fill to the last usable byte and encodeToArray needs no slack.

    public boolean int32Field(ByteBuffer dest, int field, int v) {
        if (v == 0) {
            return done();
        }
        int r = dest.remaining();
        if (r < 15 && r < PbUtil.sizeOfTag(field) + PbUtil.sizeOfVarint32(v)) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.VARINT);
        PbUtil.writeVarint32(dest, v);
        return done();
    }

    public boolean uint32Field(ByteBuffer dest, int field, int v) {
        if (v == 0) {
            return done();
        }
        int r = dest.remaining();
        if (r < 10 && r < PbUtil.sizeOfTag(field) + PbUtil.sizeOfUnsignedVarint32(v)) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.VARINT);
        PbUtil.writeUnsignedVarint32(dest, v);
        return done();
    }

    /** int64 and uint64 fields. */
    public boolean int64Field(ByteBuffer dest, int field, long v) {
        if (v == 0) {
            return done();
        }
        int r = dest.remaining();
        if (r < 15 && r < PbUtil.sizeOfTag(field) + PbUtil.sizeOfVarint64(v)) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.VARINT);
        PbUtil.writeVarint64(dest, v);
        return done();
    }

    public boolean sint32Field(ByteBuffer dest, int field, int v) {
        return uint32Field(dest, field, PbUtil.encodeZigZag32(v));
    }

    public boolean sint64Field(ByteBuffer dest, int field, long v) {
        return int64Field(dest, field, PbUtil.encodeZigZag64(v));
    }

    /** bool fields; enums go through {@link #int32Field} (negative values take 10 bytes, as in protoc). */
    public boolean boolField(ByteBuffer dest, int field, boolean v) {
        return uint32Field(dest, field, v ? 1 : 0);
    }

    /** fixed32, sfixed32 fields. */
    public boolean fixed32Field(ByteBuffer dest, int field, int v) {
        if (v == 0) {
            return done();
        }
        int r = dest.remaining();
        if (r < 9 && r < PbUtil.sizeOfTag(field) + 4) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.FIXED32);
        PbUtil.writeFixed32(dest, v);
        return done();
    }

    /** fixed64, sfixed64 fields. */
    public boolean fixed64Field(ByteBuffer dest, int field, long v) {
        if (v == 0) {
            return done();
        }
        int r = dest.remaining();
        if (r < 13 && r < PbUtil.sizeOfTag(field) + 8) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.FIXED64);
        PbUtil.writeFixed64(dest, v);
        return done();
    }

    /** float fields; -0.0 is written (its bits are not zero), as protoc does. */
    public boolean floatField(ByteBuffer dest, int field, float v) {
        return fixed32Field(dest, field, Float.floatToRawIntBits(v));
    }

    /** double fields; -0.0 is written (its bits are not zero), as protoc does. */
    public boolean doubleField(ByteBuffer dest, int field, double v) {
        return fixed64Field(dest, field, Double.doubleToRawLongBits(v));
    }

    // ---- length-delimited fields: header whole, body in pieces ----

    private boolean lenHeader(ByteBuffer dest, int field, int len) {
        int r = dest.remaining();
        if (r < 10 && r < PbUtil.sizeOfTag(field) + PbUtil.sizeOfUnsignedVarint32(len)) {
            return false;
        }
        PbUtil.writeTag(dest, field, PbWireType.LEN);
        PbUtil.writeUnsignedVarint32(dest, len);
        bodyDone = 0;
        fieldLength = len;
        return true;
    }

    private boolean finishLen() {
        bodyDone = HEADER_PENDING;
        return done();
    }

    /** A bytes or string field (pass UTF-8 bytes). Null or empty is not written. */
    public boolean bytesField(ByteBuffer dest, int field, byte[] v) {
        if (v == null || v.length == 0) {
            return done();
        }
        return bytesField(dest, field, v, 0, v.length);
    }

    /** A bytes field holding {@code len} bytes of {@code v} from {@code offset}. */
    public boolean bytesField(ByteBuffer dest, int field, byte[] v, int offset, int len) {
        if (len == 0) {
            return done();
        }
        if (bodyDone == HEADER_PENDING && !lenHeader(dest, field, len)) {
            return false;
        }
        int n = Math.min(len - bodyDone, dest.remaining());
        dest.put(v, offset + bodyDone, n);
        bodyDone += n;
        return bodyDone == len ? finishLen() : false;
    }

    /**
     * A bytes field holding the bytes between {@code src}'s position and limit. {@code src} is not
     * modified, so the same buffer may be encoded again (to several followers, for instance).
     */
    public boolean bytesField(ByteBuffer dest, int field, ByteBuffer src) {
        int len = src == null ? 0 : src.remaining();
        if (len == 0) {
            return done();
        }
        if (bodyDone == HEADER_PENDING && !lenHeader(dest, field, len)) {
            return false;
        }
        int n = Math.min(len - bodyDone, dest.remaining());
        int from = src.position() + bodyDone;
        if (src.hasArray()) {
            dest.put(src.array(), src.arrayOffset() + from, n);
        } else {
            ByteBuffer view = src.duplicate();
            view.limit(from + n);
            view.position(from);
            dest.put(view);
        }
        bodyDone += n;
        return bodyDone == len ? finishLen() : false;
    }

    /** A nested message field; null is not written, a present empty message is (as protoc does). */
    public boolean messageField(ByteBuffer dest, int field, Encodable m) {
        if (m == null) {
            return done();
        }
        return messageFieldNoAdvance(dest, field, m) && done();
    }

    /** A packed repeated int64/uint64 field of the first {@code count} values. */
    public boolean packedInt64Field(ByteBuffer dest, int field, long[] values, int count) {
        if (count == 0) {
            return done();
        }
        if (bodyDone == HEADER_PENDING) {
            int len = 0;
            for (int i = 0; i < count; i++) {
                len += PbUtil.sizeOfVarint64(values[i]);
            }
            if (!lenHeader(dest, field, len)) {
                return false;
            }
        }
        // bodyDone counts whole values here, not bytes: each value is written whole.
        while (bodyDone < count) {
            long v = values[bodyDone];
            int r = dest.remaining();
            if (r < PbUtil.MAX_VARINT_BYTES && r < PbUtil.sizeOfVarint64(v)) {
                return false;
            }
            PbUtil.writeVarint64(dest, v);
            bodyDone++;
        }
        return finishLen();
    }

    /** A packed repeated fixed64/sfixed64/double field of the first {@code count} values. */
    public boolean packedFixed64Field(ByteBuffer dest, int field, long[] values, int count) {
        if (count == 0) {
            return done();
        }
        if (bodyDone == HEADER_PENDING && !lenHeader(dest, field, count * 8)) {
            return false;
        }
        while (bodyDone < count) {
            if (dest.remaining() < 8) {
                return false;
            }
            PbUtil.writeFixed64(dest, values[bodyDone++]);
        }
        return finishLen();
    }

    /** Writes a repeated message field: one field per element, resuming inside the list. */
    public boolean repeatedMessageField(ByteBuffer dest, int field, java.util.List<? extends Encodable> list) {
        if (list == null || list.isEmpty()) {
            return done();
        }
        // stage stays on this step while elements are written; element progress lives in listIndex.
        for (; ; ) {
            int i = listIndex;
            if (i == list.size()) {
                listIndex = 0;
                return done();
            }
            Encodable m = list.get(i);
            if (!messageFieldNoAdvance(dest, field, m)) {
                return false;
            }
            listIndex = i + 1;
        }
    }

    /** Writes a repeated bytes/string field (UTF-8 bytes): one field per element, empty ones included. */
    public boolean repeatedBytesField(ByteBuffer dest, int field, java.util.List<byte[]> list) {
        if (list == null || list.isEmpty()) {
            return done();
        }
        for (; ; ) {
            int i = listIndex;
            if (i == list.size()) {
                listIndex = 0;
                return done();
            }
            byte[] v = list.get(i);
            int len = v.length;
            if (bodyDone == HEADER_PENDING && !lenHeader(dest, field, len)) {
                return false;
            }
            int n = Math.min(len - bodyDone, dest.remaining());
            dest.put(v, bodyDone, n);
            bodyDone += n;
            if (bodyDone < len) {
                return false;
            }
            bodyDone = HEADER_PENDING;
            listIndex = i + 1;
        }
    }

    /** Writes one message field without advancing the stage; true when complete. */
    private boolean messageFieldNoAdvance(ByteBuffer dest, int field, Encodable m) {
        if (bodyDone == HEADER_PENDING) {
            if (depth >= PbParser.MAX_DEPTH) {
                // Checked here, not only when a child context is made, so an empty message one
                // level too deep is refused too: PbParser would refuse it.
                throw new CodecException("field " + field + " nests messages deeper than " + PbParser.MAX_DEPTH
                        + " levels, which PbParser would refuse");
            }
            int len = m.encodedSize();
            if (!lenHeader(dest, field, len)) {
                return false;
            }
            if (len == 0) {
                bodyDone = HEADER_PENDING;
                return true;
            }
            child().reset();
        }
        int before = dest.position();
        boolean complete = m.encode(child, dest);
        bodyDone += dest.position() - before;
        if (bodyDone > fieldLength || complete && bodyDone != fieldLength) {
            throw new IllegalStateException(m.getClass().getName() + " wrote " + (complete ? "" : "at least ")
                    + bodyDone + " bytes but its encodedSize() is " + fieldLength + "; fix encodedSize() or encode()");
        }
        if (!complete) {
            return false;
        }
        bodyDone = HEADER_PENDING;
        return true;
    }

    private EncodeContext child() {
        if (child == null) {
            child = new EncodeContext(depth + 1);
        }
        return child;
    }
}
