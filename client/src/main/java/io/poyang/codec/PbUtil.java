package io.poyang.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Sizes and direct writes of the protobuf wire format. The {@code sizeOf...Field} methods follow
 * proto3: a field holding its default value (0, false, empty) is not written and has size 0.
 * The {@code write...} methods assume the buffer has room; {@link EncodeContext} is the resumable
 * way to write when it may not.
 */
public final class PbUtil {

    public static final int MAX_FIELD_NUMBER = (1 << 29) - 1;
    public static final int MAX_VARINT_BYTES = 10;

    private PbUtil() {
    }

    public static int tag(int field, int wireType) {
        return (field << 3) | wireType;
    }

    public static int encodeZigZag32(int n) {
        return (n << 1) ^ (n >> 31);
    }

    public static long encodeZigZag64(long n) {
        return (n << 1) ^ (n >> 63);
    }

    public static int decodeZigZag32(int n) {
        return (n >>> 1) ^ -(n & 1);
    }

    public static long decodeZigZag64(long n) {
        return (n >>> 1) ^ -(n & 1);
    }

    /** Bytes of a varint holding {@code v} as an unsigned 64-bit value (1 to 10). */
    public static int sizeOfVarint64(long v) {
        return (70 - Long.numberOfLeadingZeros(v | 1)) / 7;
    }

    /**
     * Bytes of a varint for an int32/enum value: negative values are sign-extended to 64 bits,
     * as protobuf does, and take 10 bytes.
     */
    public static int sizeOfVarint32(int v) {
        return v < 0 ? 10 : (38 - Integer.numberOfLeadingZeros(v | 1)) / 7;
    }

    /** Bytes of a varint holding {@code v} as an unsigned 32-bit value (uint32). */
    public static int sizeOfUnsignedVarint32(int v) {
        return (38 - Integer.numberOfLeadingZeros(v | 1)) / 7;
    }

    public static int sizeOfTag(int field) {
        return sizeOfUnsignedVarint32(field << 3);
    }

    // ---- field sizes (0 for default values) ----

    public static int sizeOfInt32Field(int field, int v) {
        return v == 0 ? 0 : sizeOfTag(field) + sizeOfVarint32(v);
    }

    public static int sizeOfUInt32Field(int field, int v) {
        return v == 0 ? 0 : sizeOfTag(field) + sizeOfUnsignedVarint32(v);
    }

    public static int sizeOfInt64Field(int field, long v) {
        return v == 0 ? 0 : sizeOfTag(field) + sizeOfVarint64(v);
    }

    public static int sizeOfSInt32Field(int field, int v) {
        return v == 0 ? 0 : sizeOfTag(field) + sizeOfUnsignedVarint32(encodeZigZag32(v));
    }

    public static int sizeOfSInt64Field(int field, long v) {
        return v == 0 ? 0 : sizeOfTag(field) + sizeOfVarint64(encodeZigZag64(v));
    }

    public static int sizeOfBoolField(int field, boolean v) {
        return v ? sizeOfTag(field) + 1 : 0;
    }

    public static int sizeOfFixed32Field(int field, int v) {
        return v == 0 ? 0 : sizeOfTag(field) + 4;
    }

    public static int sizeOfFixed64Field(int field, long v) {
        return v == 0 ? 0 : sizeOfTag(field) + 8;
    }

    public static int sizeOfFloatField(int field, float v) {
        return Float.floatToRawIntBits(v) == 0 ? 0 : sizeOfTag(field) + 4;
    }

    public static int sizeOfDoubleField(int field, double v) {
        return Double.doubleToRawLongBits(v) == 0 ? 0 : sizeOfTag(field) + 8;
    }

    /** A length-delimited field of {@code len} bytes (0 when the length is 0). */
    public static int sizeOfLenField(int field, int len) {
        return len == 0 ? 0 : sizeOfTag(field) + sizeOfUnsignedVarint32(len) + len;
    }

    public static int sizeOfBytesField(int field, byte[] v) {
        return v == null ? 0 : sizeOfLenField(field, v.length);
    }

    /**
     * A nested message field; present messages are written even when empty (as protoc does),
     * absent ones ({@code null}) are not.
     */
    public static int sizeOfMessageField(int field, Encodable m) {
        if (m == null) {
            return 0;
        }
        int len = m.encodedSize();
        return sizeOfTag(field) + sizeOfUnsignedVarint32(len) + len;
    }

    /** A packed repeated varint field (int64/uint64 values). */
    public static int sizeOfPackedVarint64Field(int field, long[] values, int count) {
        if (count == 0) {
            return 0;
        }
        int len = 0;
        for (int i = 0; i < count; i++) {
            len += sizeOfVarint64(values[i]);
        }
        return sizeOfTag(field) + sizeOfUnsignedVarint32(len) + len;
    }

    public static int sizeOfPackedFixed64Field(int field, int count) {
        return count == 0 ? 0 : sizeOfTag(field) + sizeOfUnsignedVarint32(count * 8) + count * 8;
    }

    /** A repeated bytes/string field: one tagged, length-prefixed element each, empty ones included. */
    public static int sizeOfRepeatedBytesField(int field, java.util.List<byte[]> values) {
        if (values == null) {
            return 0;
        }
        int tagSize = sizeOfTag(field);
        int total = 0;
        for (int i = 0, n = values.size(); i < n; i++) {
            int len = values.get(i).length;
            total += tagSize + sizeOfUnsignedVarint32(len) + len;
        }
        return total;
    }

    /** A repeated message field: one tagged, length-prefixed element each. */
    public static int sizeOfRepeatedMessageField(int field, java.util.List<? extends Encodable> values) {
        if (values == null) {
            return 0;
        }
        int tagSize = sizeOfTag(field);
        int total = 0;
        for (int i = 0, n = values.size(); i < n; i++) {
            int len = values.get(i).encodedSize();
            total += tagSize + sizeOfUnsignedVarint32(len) + len;
        }
        return total;
    }

    /**
     * Whether the bytes are well-formed UTF-8 as protobuf requires of string fields: no overlong
     * forms, no surrogates, nothing above U+10FFFF, no cut-off sequence.
     */
    public static boolean isValidUtf8(byte[] b, int off, int len) {
        int i = off;
        int end = off + len;
        while (i < end) {
            int c = b[i++];
            if (c >= 0) {
                continue;
            }
            c &= 0xFF;
            if (c < 0xC2) { // a continuation byte, or an overlong 2-byte lead (C0, C1)
                return false;
            }
            if (c < 0xE0) {
                if (i >= end || !continuation(b[i++])) {
                    return false;
                }
            } else if (c < 0xF0) {
                if (i + 1 >= end) {
                    return false;
                }
                int c1 = b[i++] & 0xFF;
                // E0 needs A0..BF (else overlong); ED needs 80..9F (else a surrogate).
                if (c1 < 0x80 || c1 > 0xBF || c == 0xE0 && c1 < 0xA0 || c == 0xED && c1 > 0x9F
                        || !continuation(b[i++])) {
                    return false;
                }
            } else if (c < 0xF5) {
                if (i + 2 >= end) {
                    return false;
                }
                int c1 = b[i++] & 0xFF;
                // F0 needs 90..BF (else overlong); F4 needs 80..8F (else above U+10FFFF).
                if (c1 < 0x80 || c1 > 0xBF || c == 0xF0 && c1 < 0x90 || c == 0xF4 && c1 > 0x8F
                        || !continuation(b[i++]) || !continuation(b[i++])) {
                    return false;
                }
            } else {
                return false;
            }
        }
        return true;
    }

    private static boolean continuation(byte b) {
        return (b & 0xC0) == 0x80;
    }

    public static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    // ---- direct writes; the caller guarantees room ----

    public static void writeVarint64(ByteBuffer dest, long v) {
        while ((v & ~0x7FL) != 0) {
            dest.put((byte) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        dest.put((byte) v);
    }

    /** An int32 as protobuf writes it: negative values sign-extended to 10 bytes. */
    public static void writeVarint32(ByteBuffer dest, int v) {
        if (v < 0) {
            writeVarint64(dest, v);
        } else {
            writeUnsignedVarint32(dest, v);
        }
    }

    public static void writeUnsignedVarint32(ByteBuffer dest, int v) {
        while ((v & ~0x7F) != 0) {
            dest.put((byte) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        dest.put((byte) v);
    }

    public static void writeTag(ByteBuffer dest, int field, int wireType) {
        writeUnsignedVarint32(dest, tag(field, wireType));
    }

    /** Little-endian, as protobuf's fixed32. */
    public static void writeFixed32(ByteBuffer dest, int v) {
        dest.put((byte) v).put((byte) (v >>> 8)).put((byte) (v >>> 16)).put((byte) (v >>> 24));
    }

    /** Little-endian, as protobuf's fixed64. */
    public static void writeFixed64(ByteBuffer dest, long v) {
        writeFixed32(dest, (int) v);
        writeFixed32(dest, (int) (v >>> 32));
    }

    public static void writeInt32Field(ByteBuffer dest, int field, int v) {
        if (v != 0) {
            writeTag(dest, field, PbWireType.VARINT);
            writeVarint32(dest, v);
        }
    }

    public static void writeInt64Field(ByteBuffer dest, int field, long v) {
        if (v != 0) {
            writeTag(dest, field, PbWireType.VARINT);
            writeVarint64(dest, v);
        }
    }

    public static void writeFixed32Field(ByteBuffer dest, int field, int v) {
        if (v != 0) {
            writeTag(dest, field, PbWireType.FIXED32);
            writeFixed32(dest, v);
        }
    }

    public static void writeFixed64Field(ByteBuffer dest, int field, long v) {
        if (v != 0) {
            writeTag(dest, field, PbWireType.FIXED64);
            writeFixed64(dest, v);
        }
    }

    public static void writeBytesField(ByteBuffer dest, int field, byte[] v) {
        if (v != null && v.length > 0) {
            writeTag(dest, field, PbWireType.LEN);
            writeUnsignedVarint32(dest, v.length);
            dest.put(v);
        }
    }

    /** Reads a fixed32 (little-endian) at an absolute index. */
    public static int getFixed32(ByteBuffer src, int index) {
        return (src.get(index) & 0xFF) | (src.get(index + 1) & 0xFF) << 8
                | (src.get(index + 2) & 0xFF) << 16 | (src.get(index + 3) & 0xFF) << 24;
    }

    /** Reads a fixed64 (little-endian) at an absolute index. */
    public static long getFixed64(ByteBuffer src, int index) {
        return (getFixed32(src, index) & 0xFFFFFFFFL) | ((long) getFixed32(src, index + 4) << 32);
    }

    /**
     * An array for at least {@code needed} bytes (at most {@code limit}) with the first {@code keep}
     * bytes of {@code old}: doubling, so an array grows with what has arrived, never to a length
     * only declared by the peer. An array of exactly {@code limit} when {@code needed == limit}.
     */
    public static byte[] grow(byte[] old, int keep, int needed, int limit) {
        long doubled = old == null ? 256 : old.length * 2L;
        int size = (int) Math.min(limit, Math.max(needed, doubled));
        byte[] a = new byte[size];
        if (keep > 0) {
            System.arraycopy(old, 0, a, 0, keep);
        }
        return a;
    }
}
