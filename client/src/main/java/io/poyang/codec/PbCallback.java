package io.poyang.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Receives the fields of one protobuf message from a {@link PbParser}, in the order they appear
 * on the wire, and builds the result. Subclasses declare the wire type of each field they know in
 * {@link #wireTypeOf} (a {@code PACKED_...} type for repeated scalars, which may arrive packed or
 * not); other fields are skipped, a known field with another wire type is an error.
 *
 * <p>Length-delimited fields arrive in pieces, because a message may be split across any number of
 * network reads: {@link #readBytes} is called once per piece with the piece between the buffer's
 * position and limit and the number of bytes of the field delivered before it. The helpers
 * {@link #parseString}, {@link #parseBytes}, {@link #parseNested} and the packed readers
 * assemble a field from its pieces and return the value on the last piece (null before).
 *
 * <p>A callback may be reused for the next message after {@link #end()}; {@link #begin} is the
 * place to reset per-message state.
 *
 * @param <T> the type of the decoded message
 */
public abstract class PbCallback<T> {

    /** The parser feeding this callback; set when a message starts. */
    protected PbParser parser;

    /**
     * Whether the parser asks {@link #wireTypeOf(int, int)} (told the wire type a field arrived
     * with) instead of {@link #wireTypeOf(int)}; a field, so callbacks that do not need it pay no
     * second virtual call per field.
     */
    final boolean readsArrivedWireType;

    protected PbCallback() {
        this(false);
    }

    /** @param readsArrivedWireType true for a callback that overrides {@link #wireTypeOf(int, int)} */
    protected PbCallback(boolean readsArrivedWireType) {
        this.readsArrivedWireType = readsArrivedWireType;
    }

    /** The wire type of a field this callback reads, or {@link PbWireType#UNKNOWN} to skip it. */
    protected abstract int wireTypeOf(int field);

    /**
     * Like {@link #wireTypeOf(int)}, told the wire type the field arrived with, for callbacks whose
     * schema is open (a field they do not name is read when it has one wire type and skipped, as
     * unknown, otherwise). The parser calls this one instead of {@link #wireTypeOf(int)} when the
     * callback was made with {@code readsArrivedWireType}.
     */
    protected int wireTypeOf(int field, int arrivedWireType) {
        return wireTypeOf(field);
    }

    /** A message of {@code messageLength} bytes starts. */
    protected void begin(int messageLength) {
    }

    /** A VARINT field (int32, int64, uint32, uint64, bool, enum; sint fields are zigzag-encoded). */
    protected void readVarint(int field, long value) {
    }

    /** An I32 field (fixed32, sfixed32, float). */
    protected void readFixed32(int field, int value) {
    }

    /** An I64 field (fixed64, sfixed64, double). */
    protected void readFixed64(int field, long value) {
    }

    /**
     * One piece of a LEN field: the bytes between {@code piece.position()} and {@code piece.limit()}.
     * {@code offsetInField} bytes of the field came in earlier pieces; the field is complete when
     * {@code offsetInField + piece.remaining() == fieldLength}. An empty field arrives as one empty
     * piece. The callback may move the position but must not change the limit or keep the buffer.
     */
    protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
    }

    /** The message is complete; returns the decoded value. */
    protected abstract T end();

    // ---- helpers for assembling LEN fields from pieces ----

    /**
     * Decodes a UTF-8 string field; returns it on the last piece, null before. Malformed UTF-8 is
     * a {@link CodecException}, as in protoc-generated parsers, not a string with U+FFFD in it.
     */
    protected final String parseString(ByteBuffer piece, int fieldLength, int offsetInField) {
        int n = piece.remaining();
        if (offsetInField == 0 && n == fieldLength && piece.hasArray()) {
            int start = piece.arrayOffset() + piece.position();
            String s = utf8String(piece.array(), start, n);
            piece.position(piece.limit());
            return s;
        }
        byte[] s = parser.scratch(offsetInField + n, offsetInField);
        piece.get(s, offsetInField, n);
        if (offsetInField + n == fieldLength) {
            return utf8String(s, 0, fieldLength);
        }
        return null;
    }

    private String utf8String(byte[] b, int off, int len) {
        if (!PbUtil.isValidUtf8(b, off, len)) {
            throw parser.invalidUtf8();
        }
        return new String(b, off, len, StandardCharsets.UTF_8);
    }

    /**
     * Copies a bytes field into a new array; returns it on the last piece, null before. A field
     * that comes in pieces is held in an array that grows with what has arrived, not one of its
     * declared length: a peer announcing a large field and sending little must not make us
     * allocate it.
     */
    protected final byte[] parseBytes(ByteBuffer piece, int fieldLength, int offsetInField) {
        int n = piece.remaining();
        int filled = offsetInField + n;
        byte[] dest = offsetInField == 0 ? null : parser.pendingBytes;
        if (dest == null || dest.length < filled) {
            dest = PbUtil.grow(dest, offsetInField, filled, fieldLength);
        }
        piece.get(dest, offsetInField, n);
        if (filled == fieldLength) {
            parser.pendingBytes = null;
            return dest;
        }
        parser.pendingBytes = dest;
        return null;
    }

    /**
     * Decodes a nested message field with {@code child}; returns the child's result on the last
     * piece, null before. Only one nested field per message level is in progress at a time, which
     * the wire format guarantees; {@code child} must not be a callback in use at another level.
     */
    protected final <X> X parseNested(ByteBuffer piece, int fieldLength, int offsetInField, PbCallback<X> child) {
        if (offsetInField == 0) {
            parser.prepareChild(child, fieldLength);
        }
        PbParser p = parser.nestedParser();
        if (p.feed(piece)) {
            return p.result();
        }
        return null;
    }

    /**
     * Reads a packed run of a repeated varint field (declared {@link PbWireType#PACKED_VARINT}),
     * passing each raw value to {@code sink}; unpacked elements of the same field arrive in
     * {@link #readVarint} instead.
     */
    protected final void parsePackedVarints(ByteBuffer piece, int fieldLength, int offsetInField, LongSink sink) {
        parser.packedVarints(piece, fieldLength, offsetInField, sink);
    }

    /**
     * Reads a packed run of a repeated fixed64/sfixed64/double field (declared
     * {@link PbWireType#PACKED_FIXED64}); unpacked elements arrive in {@link #readFixed64}.
     */
    protected final void parsePackedFixed64(ByteBuffer piece, int fieldLength, int offsetInField, LongSink sink) {
        parser.packedFixed(piece, fieldLength, offsetInField, 8, sink);
    }

    /**
     * Reads a packed run of a repeated fixed32/sfixed32/float field (declared
     * {@link PbWireType#PACKED_FIXED32}), each value in the low 32 bits; unpacked elements arrive in
     * {@link #readFixed32}.
     */
    protected final void parsePackedFixed32(ByteBuffer piece, int fieldLength, int offsetInField, LongSink sink) {
        parser.packedFixed(piece, fieldLength, offsetInField, 4, sink);
    }

    /** Receives the elements of a packed field. */
    public interface LongSink {
        void accept(long value);
    }
}
