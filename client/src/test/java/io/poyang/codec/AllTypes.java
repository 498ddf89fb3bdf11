package io.poyang.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * The test message {@code poyang.test.AllTypes} (see all_types.proto in the test resources): one
 * field of every protobuf type, written with {@link EncodeContext} and read with {@link Callback}.
 */
final class AllTypes implements Encodable {

    static final int MAX_FIELD = PbUtil.MAX_FIELD_NUMBER;
    static final int COLOR_NEGATIVE = -7;

    int fInt32;
    long fInt64;
    int fUint32;
    long fUint64;
    int fSint32;
    long fSint64;
    boolean fBool;
    int fEnum;
    int fFixed32;
    long fFixed64;
    int fSfixed32;
    long fSfixed64;
    float fFloat;
    double fDouble;
    String fString = "";
    byte[] fBytes = new byte[0];
    Nested fNested;
    List<Nested> fRepeatedNested = new ArrayList<>();
    long[] fPackedInt64 = new long[0];
    long[] fPackedFixed64 = new long[0];
    List<String> fRepeatedString = new ArrayList<>();
    AllTypes fChild;
    int fMaxField;

    private byte[] stringUtf8;
    private List<byte[]> repeatedStringUtf8;
    private int cachedSize = -1;

    @Override
    public int encodedSize() {
        if (cachedSize < 0) {
            stringUtf8 = PbUtil.utf8(fString);
            repeatedStringUtf8 = new ArrayList<>();
            for (String s : fRepeatedString) {
                repeatedStringUtf8.add(PbUtil.utf8(s));
            }
            cachedSize = PbUtil.sizeOfInt32Field(1, fInt32)
                    + PbUtil.sizeOfInt64Field(2, fInt64)
                    + PbUtil.sizeOfUInt32Field(3, fUint32)
                    + PbUtil.sizeOfInt64Field(4, fUint64)
                    + PbUtil.sizeOfSInt32Field(5, fSint32)
                    + PbUtil.sizeOfSInt64Field(6, fSint64)
                    + PbUtil.sizeOfBoolField(7, fBool)
                    + PbUtil.sizeOfInt32Field(8, fEnum)
                    + PbUtil.sizeOfFixed32Field(9, fFixed32)
                    + PbUtil.sizeOfFixed64Field(10, fFixed64)
                    + PbUtil.sizeOfFixed32Field(11, fSfixed32)
                    + PbUtil.sizeOfFixed64Field(12, fSfixed64)
                    + PbUtil.sizeOfFloatField(13, fFloat)
                    + PbUtil.sizeOfDoubleField(14, fDouble)
                    + PbUtil.sizeOfBytesField(15, stringUtf8)
                    + PbUtil.sizeOfBytesField(16, fBytes)
                    + PbUtil.sizeOfMessageField(17, fNested)
                    + PbUtil.sizeOfRepeatedMessageField(18, fRepeatedNested)
                    + PbUtil.sizeOfPackedVarint64Field(19, fPackedInt64, fPackedInt64.length)
                    + PbUtil.sizeOfPackedFixed64Field(20, fPackedFixed64.length)
                    + PbUtil.sizeOfRepeatedBytesField(21, repeatedStringUtf8)
                    + PbUtil.sizeOfMessageField(22, fChild)
                    + PbUtil.sizeOfInt32Field(MAX_FIELD, fMaxField);
        }
        return cachedSize;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer d) {
        encodedSize();
        switch (c.stage) {
            case 0:
                if (!c.int32Field(d, 1, fInt32)) return false;
            case 1:
                if (!c.int64Field(d, 2, fInt64)) return false;
            case 2:
                if (!c.uint32Field(d, 3, fUint32)) return false;
            case 3:
                if (!c.int64Field(d, 4, fUint64)) return false;
            case 4:
                if (!c.sint32Field(d, 5, fSint32)) return false;
            case 5:
                if (!c.sint64Field(d, 6, fSint64)) return false;
            case 6:
                if (!c.boolField(d, 7, fBool)) return false;
            case 7:
                if (!c.int32Field(d, 8, fEnum)) return false;
            case 8:
                if (!c.fixed32Field(d, 9, fFixed32)) return false;
            case 9:
                if (!c.fixed64Field(d, 10, fFixed64)) return false;
            case 10:
                if (!c.fixed32Field(d, 11, fSfixed32)) return false;
            case 11:
                if (!c.fixed64Field(d, 12, fSfixed64)) return false;
            case 12:
                if (!c.floatField(d, 13, fFloat)) return false;
            case 13:
                if (!c.doubleField(d, 14, fDouble)) return false;
            case 14:
                if (!c.bytesField(d, 15, stringUtf8)) return false;
            case 15:
                if (!c.bytesField(d, 16, fBytes)) return false;
            case 16:
                if (!c.messageField(d, 17, fNested)) return false;
            case 17:
                if (!c.repeatedMessageField(d, 18, fRepeatedNested)) return false;
            case 18:
                if (!c.packedInt64Field(d, 19, fPackedInt64, fPackedInt64.length)) return false;
            case 19:
                if (!c.packedFixed64Field(d, 20, fPackedFixed64, fPackedFixed64.length)) return false;
            case 20:
                if (!c.repeatedBytesField(d, 21, repeatedStringUtf8)) return false;
            case 21:
                if (!c.messageField(d, 22, fChild)) return false;
            case 22:
                if (!c.int32Field(d, MAX_FIELD, fMaxField)) return false;
            default:
                return true;
        }
    }

    // ---- random messages ----

    private static final long[] LONG_EDGES = {0, 1, -1, 127, 128, 150, 16383, 16384, Integer.MAX_VALUE,
            Integer.MIN_VALUE, 0xFFFFFFFFL, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 35, 1L << 56, -2};

    private static long randomLong(Random r) {
        switch (r.nextInt(4)) {
            case 0:
                return LONG_EDGES[r.nextInt(LONG_EDGES.length)];
            case 1:
                return r.nextLong() >> r.nextInt(64); // every varint length
            case 2:
                return r.nextInt(300) - 100;
            default:
                return r.nextLong();
        }
    }

    private static int randomInt(Random r) {
        return r.nextInt(3) == 0 ? (int) LONG_EDGES[r.nextInt(LONG_EDGES.length)] : (int) randomLong(r);
    }

    static String randomString(Random r, int maxLen) {
        int n = r.nextInt(maxLen + 1);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            switch (r.nextInt(5)) {
                case 0:
                    sb.appendCodePoint(0x80 + r.nextInt(0x780)); // 2-byte UTF-8
                    break;
                case 1:
                    sb.appendCodePoint(0x800 + r.nextInt(0xD000 - 0x800)); // 3-byte, below surrogates
                    break;
                case 2:
                    sb.appendCodePoint(0x10000 + r.nextInt(0x10FFFF - 0x10000)); // 4-byte, a surrogate pair
                    break;
                default:
                    sb.append((char) (r.nextInt(95) + 32));
            }
        }
        return sb.toString();
    }

    private static float randomFloat(Random r) {
        float[] edges = {1.5f, -0.0f, Float.MAX_VALUE, Float.MIN_VALUE, Float.NaN, Float.POSITIVE_INFINITY,
                Float.NEGATIVE_INFINITY, 0.1f};
        return r.nextBoolean() ? edges[r.nextInt(edges.length)] : Float.intBitsToFloat(r.nextInt() & 0xFF7FFFFF);
    }

    private static double randomDouble(Random r) {
        double[] edges = {1.5, -0.0, Double.MAX_VALUE, Double.MIN_VALUE, Double.NaN, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, 0.1};
        return r.nextBoolean() ? edges[r.nextInt(edges.length)]
                : Double.longBitsToDouble(r.nextLong() & 0xFFEFFFFFFFFFFFFFL);
    }

    /** A random message; each field is left at its default now and then; children down to {@code depth}. */
    static AllTypes random(Random r, int depth) {
        AllTypes m = new AllTypes();
        if (r.nextInt(4) != 0) m.fInt32 = randomInt(r);
        if (r.nextInt(4) != 0) m.fInt64 = randomLong(r);
        if (r.nextInt(4) != 0) m.fUint32 = randomInt(r);
        if (r.nextInt(4) != 0) m.fUint64 = randomLong(r);
        if (r.nextInt(4) != 0) m.fSint32 = randomInt(r);
        if (r.nextInt(4) != 0) m.fSint64 = randomLong(r);
        m.fBool = r.nextBoolean();
        if (r.nextInt(4) != 0) m.fEnum = new int[]{1, 2, COLOR_NEGATIVE}[r.nextInt(3)];
        if (r.nextInt(4) != 0) m.fFixed32 = randomInt(r);
        if (r.nextInt(4) != 0) m.fFixed64 = randomLong(r);
        if (r.nextInt(4) != 0) m.fSfixed32 = randomInt(r);
        if (r.nextInt(4) != 0) m.fSfixed64 = randomLong(r);
        if (r.nextInt(4) != 0) m.fFloat = randomFloat(r);
        if (r.nextInt(4) != 0) m.fDouble = randomDouble(r);
        if (r.nextInt(4) != 0) m.fString = randomString(r, 20);
        if (r.nextInt(4) != 0) {
            m.fBytes = new byte[r.nextInt(r.nextInt(10) == 0 ? 300 : 20)];
            r.nextBytes(m.fBytes);
        }
        if (r.nextInt(4) != 0) m.fNested = new Nested(randomLong(r), randomString(r, 6));
        for (int i = r.nextInt(4); i > 0; i--) {
            m.fRepeatedNested.add(new Nested(r.nextInt(3) == 0 ? 0 : randomLong(r), randomString(r, 4)));
        }
        m.fPackedInt64 = new long[r.nextInt(3) == 0 ? 0 : r.nextInt(12)];
        for (int i = 0; i < m.fPackedInt64.length; i++) m.fPackedInt64[i] = randomLong(r);
        m.fPackedFixed64 = new long[r.nextInt(3) == 0 ? 0 : r.nextInt(6)];
        for (int i = 0; i < m.fPackedFixed64.length; i++) m.fPackedFixed64[i] = randomLong(r);
        for (int i = r.nextInt(4); i > 0; i--) {
            m.fRepeatedString.add(randomString(r, 5)); // empty strings included: repeated keeps them
        }
        if (depth > 0 && r.nextInt(3) == 0) m.fChild = random(r, depth - 1);
        if (r.nextInt(4) == 0) m.fMaxField = randomInt(r);
        return m;
    }

    // ---- protobuf text format, for protoc --encode ----

    static String quote(byte[] bytes) {
        StringBuilder sb = new StringBuilder("\"");
        for (byte b : bytes) {
            int v = b & 0xFF;
            if (v >= 0x20 && v < 0x7F && v != '"' && v != '\\' && v != '\'') {
                sb.append((char) v);
            } else {
                sb.append('\\').append((char) ('0' + (v >> 6))).append((char) ('0' + ((v >> 3) & 7)))
                        .append((char) ('0' + (v & 7)));
            }
        }
        return sb.append('"').toString();
    }

    private static String floatText(double v) {
        if (Double.isNaN(v)) return "nan";
        if (Double.isInfinite(v)) return v > 0 ? "inf" : "-inf";
        return Double.toString(v);
    }

    String toText() {
        StringBuilder sb = new StringBuilder();
        if (fInt32 != 0) sb.append("f_int32: ").append(fInt32).append(' ');
        if (fInt64 != 0) sb.append("f_int64: ").append(fInt64).append(' ');
        if (fUint32 != 0) sb.append("f_uint32: ").append(Integer.toUnsignedString(fUint32)).append(' ');
        if (fUint64 != 0) sb.append("f_uint64: ").append(Long.toUnsignedString(fUint64)).append(' ');
        if (fSint32 != 0) sb.append("f_sint32: ").append(fSint32).append(' ');
        if (fSint64 != 0) sb.append("f_sint64: ").append(fSint64).append(' ');
        if (fBool) sb.append("f_bool: true ");
        if (fEnum != 0) sb.append("f_enum: ").append(fEnum == 1 ? "RED" : fEnum == 2 ? "GREEN" : "NEGATIVE").append(' ');
        if (fFixed32 != 0) sb.append("f_fixed32: ").append(Integer.toUnsignedString(fFixed32)).append(' ');
        if (fFixed64 != 0) sb.append("f_fixed64: ").append(Long.toUnsignedString(fFixed64)).append(' ');
        if (fSfixed32 != 0) sb.append("f_sfixed32: ").append(fSfixed32).append(' ');
        if (fSfixed64 != 0) sb.append("f_sfixed64: ").append(fSfixed64).append(' ');
        if (Float.floatToRawIntBits(fFloat) != 0) sb.append("f_float: ").append(floatText(fFloat)).append(' ');
        if (Double.doubleToRawLongBits(fDouble) != 0) sb.append("f_double: ").append(floatText(fDouble)).append(' ');
        if (!fString.isEmpty()) sb.append("f_string: ").append(quote(fString.getBytes(StandardCharsets.UTF_8))).append(' ');
        if (fBytes.length != 0) sb.append("f_bytes: ").append(quote(fBytes)).append(' ');
        if (fNested != null) sb.append("f_nested { ").append(fNested.toText()).append(" } ");
        for (Nested n : fRepeatedNested) sb.append("f_repeated_nested { ").append(n.toText()).append(" } ");
        for (long v : fPackedInt64) sb.append("f_packed_int64: ").append(v).append(' ');
        for (long v : fPackedFixed64) sb.append("f_packed_fixed64: ").append(Long.toUnsignedString(v)).append(' ');
        for (String s : fRepeatedString) sb.append("f_repeated_string: ").append(quote(s.getBytes(StandardCharsets.UTF_8))).append(' ');
        if (fChild != null) sb.append("f_child { ").append(fChild.toText()).append(" } ");
        if (fMaxField != 0) sb.append("f_max_field: ").append(fMaxField).append(' ');
        return sb.toString().trim();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AllTypes)) {
            return false;
        }
        AllTypes m = (AllTypes) o;
        return fInt32 == m.fInt32 && fInt64 == m.fInt64 && fUint32 == m.fUint32 && fUint64 == m.fUint64
                && fSint32 == m.fSint32 && fSint64 == m.fSint64 && fBool == m.fBool && fEnum == m.fEnum
                && fFixed32 == m.fFixed32 && fFixed64 == m.fFixed64 && fSfixed32 == m.fSfixed32
                && fSfixed64 == m.fSfixed64
                && Float.floatToRawIntBits(fFloat) == Float.floatToRawIntBits(m.fFloat)
                && Double.doubleToRawLongBits(fDouble) == Double.doubleToRawLongBits(m.fDouble)
                && fString.equals(m.fString) && Arrays.equals(fBytes, m.fBytes)
                && Objects.equals(fNested, m.fNested) && fRepeatedNested.equals(m.fRepeatedNested)
                && Arrays.equals(fPackedInt64, m.fPackedInt64) && Arrays.equals(fPackedFixed64, m.fPackedFixed64)
                && fRepeatedString.equals(m.fRepeatedString) && Objects.equals(fChild, m.fChild)
                && fMaxField == m.fMaxField;
    }

    @Override
    public int hashCode() {
        return Objects.hash(fInt64, fString, fChild);
    }

    @Override
    public String toString() {
        return "AllTypes{" + toText() + "}";
    }

    /** A growable long array, for packed fields arriving in pieces. */
    static final class LongList implements PbCallback.LongSink {
        long[] values = new long[8];
        int size;

        @Override
        public void accept(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }

    /** Decodes an AllTypes; reusable message after message. */
    static final class Callback extends PbCallback<AllTypes> {
        private AllTypes m;
        private final LongList packedInt64 = new LongList();
        private final LongList packedFixed64 = new LongList();
        private final Nested.Callback nested = new Nested.Callback();
        private Callback child;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case MAX_FIELD:
                    return PbWireType.VARINT;
                case 9: case 11: case 13:
                    return PbWireType.FIXED32;
                case 10: case 12: case 14:
                    return PbWireType.FIXED64;
                case 15: case 16: case 17: case 18: case 21: case 22:
                    return PbWireType.LEN;
                case 19:
                    return PbWireType.PACKED_VARINT;
                case 20:
                    return PbWireType.PACKED_FIXED64;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            m = new AllTypes();
            packedInt64.size = 0;
            packedFixed64.size = 0;
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1: m.fInt32 = (int) v; break;
                case 2: m.fInt64 = v; break;
                case 3: m.fUint32 = (int) v; break;
                case 4: m.fUint64 = v; break;
                case 5: m.fSint32 = PbUtil.decodeZigZag32((int) v); break;
                case 6: m.fSint64 = PbUtil.decodeZigZag64(v); break;
                case 7: m.fBool = v != 0; break;
                case 8: m.fEnum = (int) v; break;
                case 19: packedInt64.accept(v); break; // an unpacked element
                case MAX_FIELD: m.fMaxField = (int) v; break;
                default: throw new AssertionError("varint for field " + field);
            }
        }

        @Override
        protected void readFixed32(int field, int v) {
            switch (field) {
                case 9: m.fFixed32 = v; break;
                case 11: m.fSfixed32 = v; break;
                case 13: m.fFloat = Float.intBitsToFloat(v); break;
                default: throw new AssertionError("fixed32 for field " + field);
            }
        }

        @Override
        protected void readFixed64(int field, long v) {
            switch (field) {
                case 10: m.fFixed64 = v; break;
                case 12: m.fSfixed64 = v; break;
                case 14: m.fDouble = Double.longBitsToDouble(v); break;
                case 20: packedFixed64.accept(v); break; // an unpacked element
                default: throw new AssertionError("fixed64 for field " + field);
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int len, int offset) {
            switch (field) {
                case 15: {
                    String s = parseString(piece, len, offset);
                    if (s != null) m.fString = s;
                    break;
                }
                case 16: {
                    byte[] b = parseBytes(piece, len, offset);
                    if (b != null) m.fBytes = b;
                    break;
                }
                case 17: {
                    Nested n = parseNested(piece, len, offset, nested);
                    if (n != null) m.fNested = n;
                    break;
                }
                case 18: {
                    Nested n = parseNested(piece, len, offset, nested);
                    if (n != null) m.fRepeatedNested.add(n);
                    break;
                }
                case 19:
                    parsePackedVarints(piece, len, offset, packedInt64);
                    break;
                case 20:
                    parsePackedFixed64(piece, len, offset, packedFixed64);
                    break;
                case 21: {
                    String s = parseString(piece, len, offset);
                    if (s != null) m.fRepeatedString.add(s);
                    break;
                }
                case 22: {
                    if (child == null) child = new Callback();
                    AllTypes c = parseNested(piece, len, offset, child);
                    if (c != null) m.fChild = c;
                    break;
                }
                default:
                    throw new AssertionError("bytes for field " + field);
            }
        }

        @Override
        protected AllTypes end() {
            m.fPackedInt64 = packedInt64.toArray();
            m.fPackedFixed64 = packedFixed64.toArray();
            AllTypes done = m;
            m = null;
            return done;
        }
    }
}
