package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.BiPredicate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The examples of the protobuf encoding guide, and the size arithmetic of every field kind. */
class PbEncodingGuideTest {

    /** Writes one field with an EncodeContext helper into a roomy buffer and returns the bytes. */
    static byte[] written(BiPredicate<EncodeContext, ByteBuffer> helper) {
        ByteBuffer b = ByteBuffer.allocate(1 << 16);
        EncodeContext c = new EncodeContext();
        assertTrue(helper.test(c, b), "the helper finishes in a roomy buffer");
        assertEquals(1, c.stage, "a finished field advances the stage once");
        return Arrays.copyOf(b.array(), b.position());
    }

    /** A message of one field, for nesting: {@code Test1 { int32 a = 1; }}. */
    static final class Test1 implements Encodable {
        final int a;

        Test1(int a) {
            this.a = a;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfInt32Field(1, a);
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.int32Field(dest, 1, a);
        }
    }

    @Test
    void test1Int32Of150IsBytes089601() {
        assertEquals("08 96 01", Hex.spaced(written((c, b) -> c.int32Field(b, 1, 150))));
        assertEquals("08 96 01", Hex.spaced(EncodeContext.encodeToArray(new Test1(150))));
        assertEquals(3, PbUtil.sizeOfInt32Field(1, 150));
    }

    @Test
    void test2StringTestingIsBytes120774657374696e67() {
        byte[] bytes = written((c, b) -> c.bytesField(b, 2, PbUtil.utf8("testing")));
        assertEquals("12 07 74 65 73 74 69 6e 67", Hex.spaced(bytes));
        assertEquals(9, PbUtil.sizeOfBytesField(2, PbUtil.utf8("testing")));
    }

    @Test
    void test3NestedTest1IsBytes1a03089601() {
        assertEquals("1a 03 08 96 01", Hex.spaced(written((c, b) -> c.messageField(b, 3, new Test1(150)))));
        assertEquals(5, PbUtil.sizeOfMessageField(3, new Test1(150)));
    }

    @Test
    void packedRepeatedOf3And270And86942IsBytes3206038e029ea705() {
        long[] values = {3, 270, 86942};
        assertEquals("32 06 03 8e 02 9e a7 05", Hex.spaced(written((c, b) -> c.packedInt64Field(b, 6, values, 3))));
        assertEquals(8, PbUtil.sizeOfPackedVarint64Field(6, values, 3));
    }

    /** Test4 { string d = 4; repeated int32 e = 5; } with e unpacked, as proto2 writes it. */
    @Test
    void unpackedRepeatedFromTheGuideDecodesLikePacked() {
        List<Long> e = new ArrayList<>();
        String[] d = new String[1];
        PbCallback<Void> cb = new PbCallback<Void>() {
            @Override
            protected int wireTypeOf(int field) {
                return field == 4 ? PbWireType.LEN : field == 5 ? PbWireType.PACKED_VARINT : PbWireType.UNKNOWN;
            }

            @Override
            protected void readVarint(int field, long value) {
                e.add(value);
            }

            @Override
            protected void readBytes(int field, ByteBuffer piece, int len, int off) {
                if (field == 4) {
                    d[0] = parseString(piece, len, off);
                } else {
                    parsePackedVarints(piece, len, off, e::add);
                }
            }

            @Override
            protected Void end() {
                return null;
            }
        };
        PbParser.parse(Hex.bytes("22 05 68 65 6c 6c 6f 28 01 28 02 28 03"), cb);
        assertEquals("hello", d[0]);
        assertEquals(Arrays.asList(1L, 2L, 3L), e);
        e.clear();
        PbParser.parse(Hex.bytes("2a 03 01 02 03"), cb); // the same field packed
        assertEquals(Arrays.asList(1L, 2L, 3L), e);
    }

    @Test
    void zigzagTableFromTheGuide() {
        int[][] table = {{0, 0}, {-1, 1}, {1, 2}, {-2, 3}, {Integer.MAX_VALUE, -2}, {Integer.MIN_VALUE, -1}};
        for (int[] row : table) {
            assertEquals(row[1], PbUtil.encodeZigZag32(row[0]), "zigzag32(" + row[0] + ")");
            assertEquals(row[0], PbUtil.decodeZigZag32(row[1]));
        }
        // 2147483647 -> 4294967294 and -2147483648 -> 4294967295, as unsigned 32-bit values.
        assertEquals(4294967294L, PbUtil.encodeZigZag32(Integer.MAX_VALUE) & 0xFFFFFFFFL);
        assertEquals(4294967295L, PbUtil.encodeZigZag32(Integer.MIN_VALUE) & 0xFFFFFFFFL);
        assertEquals(0L, PbUtil.encodeZigZag64(0));
        assertEquals(1L, PbUtil.encodeZigZag64(-1));
        assertEquals(2L, PbUtil.encodeZigZag64(1));
        assertEquals(-2L, PbUtil.encodeZigZag64(Long.MAX_VALUE), "2^64-2");
        assertEquals(-1L, PbUtil.encodeZigZag64(Long.MIN_VALUE), "2^64-1");
        assertEquals(Long.MIN_VALUE, PbUtil.decodeZigZag64(-1L));
        assertEquals(Long.MAX_VALUE, PbUtil.decodeZigZag64(-2L));
        assertEquals("28 03", Hex.spaced(written((c, b) -> c.sint32Field(b, 5, -2))));
        assertEquals("30 ff ff ff ff ff ff ff ff ff 01", Hex.spaced(written((c, b) -> c.sint64Field(b, 6, Long.MIN_VALUE))));
    }

    @Test
    void negativeInt32IsSignExtendedToTenBytes() {
        assertEquals("08 fe ff ff ff ff ff ff ff ff 01", Hex.spaced(written((c, b) -> c.int32Field(b, 1, -2))));
        assertEquals(11, PbUtil.sizeOfInt32Field(1, -2));
        assertEquals("08 ff ff ff ff ff ff ff ff ff 01", Hex.spaced(written((c, b) -> c.int32Field(b, 1, -1))));
        // The same value as uint32 is 5 bytes.
        assertEquals("08 fe ff ff ff 0f", Hex.spaced(written((c, b) -> c.uint32Field(b, 1, -2))));
        // Decoded back as int32, the 10-byte varint truncates to -2.
        long[] got = new long[1];
        PbParser.parse(Hex.bytes("08 fe ff ff ff ff ff ff ff ff 01"), varintsInto(got));
        assertEquals(-2, (int) got[0]);
    }

    @Test
    void sixtyFourBitEdgeCases() {
        assertEquals("20 ff ff ff ff ff ff ff ff ff 01", Hex.spaced(written((c, b) -> c.int64Field(b, 4, -1L))),
                "uint64 2^64-1");
        assertEquals("10 80 80 80 80 80 80 80 80 80 01",
                Hex.spaced(written((c, b) -> c.int64Field(b, 2, Long.MIN_VALUE))), "int64 -2^63 (uint64 2^63)");
        assertEquals("10 ff ff ff ff ff ff ff ff 7f",
                Hex.spaced(written((c, b) -> c.int64Field(b, 2, Long.MAX_VALUE))), "int64 2^63-1");
        long[] got = new long[1];
        PbParser.parse(Hex.bytes("20 ff ff ff ff ff ff ff ff ff 01"), varintsInto(got));
        assertEquals(-1L, got[0]);
        assertEquals("18446744073709551615", Long.toUnsignedString(got[0]));
        PbParser.parse(Hex.bytes("10 80 80 80 80 80 80 80 80 80 01"), varintsInto(got));
        assertEquals(Long.MIN_VALUE, got[0]);
        assertEquals("09 ff ff ff ff ff ff ff ff", Hex.spaced(written((c, b) -> c.fixed64Field(b, 1, -1L))));
        assertEquals("09 00 00 00 00 00 00 00 80", Hex.spaced(written((c, b) -> c.fixed64Field(b, 1, Long.MIN_VALUE))));
        assertEquals("0d 01 00 00 00", Hex.spaced(written((c, b) -> c.fixed32Field(b, 1, 1))), "little-endian");
        assertEquals("0d 00 00 80 3f", Hex.spaced(written((c, b) -> c.floatField(b, 1, 1.0f))));
        assertEquals("09 00 00 00 00 00 00 f0 3f", Hex.spaced(written((c, b) -> c.doubleField(b, 1, 1.0))));
    }

    private static PbCallback<Void> varintsInto(long[] out) {
        return new PbCallback<Void>() {
            @Override
            protected int wireTypeOf(int field) {
                return PbWireType.VARINT;
            }

            @Override
            protected void readVarint(int field, long value) {
                out[0] = value;
            }

            @Override
            protected Void end() {
                return null;
            }
        };
    }

    @Test
    void varintSizesAtEverySevenBitBoundary() {
        for (int k = 1; k <= 9; k++) {
            long below = (1L << (7 * k)) - 1;
            assertEquals(k, PbUtil.sizeOfVarint64(below), "2^" + 7 * k + "-1");
            assertEquals(k + 1, PbUtil.sizeOfVarint64(below + 1), "2^" + 7 * k);
        }
        assertEquals(1, PbUtil.sizeOfVarint64(0));
        assertEquals(10, PbUtil.sizeOfVarint64(Long.MIN_VALUE));
        assertEquals(10, PbUtil.sizeOfVarint64(-1));
        for (int k = 1; k <= 4; k++) {
            int below = (1 << (7 * k)) - 1;
            assertEquals(k, PbUtil.sizeOfUnsignedVarint32(below));
            assertEquals(k + 1, PbUtil.sizeOfUnsignedVarint32(below + 1));
            assertEquals(k, PbUtil.sizeOfVarint32(below));
        }
        assertEquals(5, PbUtil.sizeOfUnsignedVarint32(-1));
        assertEquals(10, PbUtil.sizeOfVarint32(-1));
        assertEquals(10, PbUtil.sizeOfVarint32(Integer.MIN_VALUE));
        assertEquals(1, PbUtil.sizeOfTag(15));
        assertEquals(2, PbUtil.sizeOfTag(16));
        assertEquals(2, PbUtil.sizeOfTag(2047));
        assertEquals(3, PbUtil.sizeOfTag(2048));
        assertEquals(5, PbUtil.sizeOfTag(PbUtil.MAX_FIELD_NUMBER));
        assertEquals("f8 ff ff ff 0f 01", Hex.spaced(written((c, b) -> c.int32Field(b, PbUtil.MAX_FIELD_NUMBER, 1))));
    }

    /** Every field kind: the size function agrees with what the helper writes, defaults write nothing. */
    @Test
    void sizesOfEveryFieldKindMatchTheBytesWritten() {
        int[] fields = {1, 15, 16, 2047, 2048, 262143, 262144, PbUtil.MAX_FIELD_NUMBER};
        long[] longs = {0, 1, -1, 127, 128, 300, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE,
                1L << 35};
        for (int f : fields) {
            for (long lv : longs) {
                int iv = (int) lv;
                check(PbUtil.sizeOfInt32Field(f, iv), (c, b) -> c.int32Field(b, f, iv));
                check(PbUtil.sizeOfUInt32Field(f, iv), (c, b) -> c.uint32Field(b, f, iv));
                check(PbUtil.sizeOfInt64Field(f, lv), (c, b) -> c.int64Field(b, f, lv));
                check(PbUtil.sizeOfSInt32Field(f, iv), (c, b) -> c.sint32Field(b, f, iv));
                check(PbUtil.sizeOfSInt64Field(f, lv), (c, b) -> c.sint64Field(b, f, lv));
                check(PbUtil.sizeOfFixed32Field(f, iv), (c, b) -> c.fixed32Field(b, f, iv));
                check(PbUtil.sizeOfFixed64Field(f, lv), (c, b) -> c.fixed64Field(b, f, lv));
                check(PbUtil.sizeOfFloatField(f, iv), (c, b) -> c.floatField(b, f, iv));
                check(PbUtil.sizeOfDoubleField(f, lv), (c, b) -> c.doubleField(b, f, lv));
                long[] packed = {lv, lv >>> 1, 5};
                check(PbUtil.sizeOfPackedVarint64Field(f, packed, 3), (c, b) -> c.packedInt64Field(b, f, packed, 3));
                check(PbUtil.sizeOfPackedFixed64Field(f, 3), (c, b) -> c.packedFixed64Field(b, f, packed, 3));
            }
            check(PbUtil.sizeOfBoolField(f, true), (c, b) -> c.boolField(b, f, true));
            check(PbUtil.sizeOfBoolField(f, false), (c, b) -> c.boolField(b, f, false));
            for (int len : new int[]{0, 1, 127, 128, 16384}) {
                byte[] v = new byte[len];
                check(PbUtil.sizeOfBytesField(f, v), (c, b) -> c.bytesField(b, f, v));
                check(PbUtil.sizeOfBytesField(f, v), (c, b) -> c.bytesField(b, f, ByteBuffer.wrap(v)));
                check(PbUtil.sizeOfLenField(f, len), (c, b) -> c.bytesField(b, f, v, 0, len));
                List<byte[]> list = Arrays.asList(v, new byte[0], v);
                check(PbUtil.sizeOfRepeatedBytesField(f, list), (c, b) -> c.repeatedBytesField(b, f, list));
            }
            check(PbUtil.sizeOfBytesField(f, null), (c, b) -> c.bytesField(b, f, (byte[]) null));
            Test1 empty = new Test1(0);
            check(PbUtil.sizeOfMessageField(f, empty), (c, b) -> c.messageField(b, f, empty));
            assertEquals(PbUtil.sizeOfTag(f) + 1, PbUtil.sizeOfMessageField(f, empty), "a present empty message is written");
            check(PbUtil.sizeOfMessageField(f, null), (c, b) -> c.messageField(b, f, null));
            List<Test1> msgs = Arrays.asList(new Test1(1), new Test1(0), new Test1(-1));
            check(PbUtil.sizeOfRepeatedMessageField(f, msgs), (c, b) -> c.repeatedMessageField(b, f, msgs));
            check(0, (c, b) -> c.repeatedMessageField(b, f, Collections.<Test1>emptyList()));
            check(PbUtil.sizeOfPackedVarint64Field(f, new long[0], 0), (c, b) -> c.packedInt64Field(b, f, new long[0], 0));
        }
        assertEquals(0, PbUtil.sizeOfInt32Field(1, 0));
        assertEquals(0, PbUtil.sizeOfFloatField(1, 0.0f));
        assertEquals(5, PbUtil.sizeOfFloatField(1, -0.0f), "-0.0 is not the default: protoc writes it");
        assertEquals(9, PbUtil.sizeOfDoubleField(1, -0.0));
    }

    private static void check(int expectedSize, BiPredicate<EncodeContext, ByteBuffer> helper) {
        assertEquals(expectedSize, written(helper).length);
    }

    @Test
    void directWritesAgreeWithTheContextHelpers() {
        ByteBuffer b = ByteBuffer.allocate(64);
        PbUtil.writeInt32Field(b, 1, 150);
        PbUtil.writeInt64Field(b, 2, -1);
        PbUtil.writeFixed32Field(b, 3, 7);
        PbUtil.writeFixed64Field(b, 4, 8);
        PbUtil.writeBytesField(b, 5, new byte[]{1, 2});
        PbUtil.writeInt32Field(b, 6, 0); // defaults write nothing
        byte[] direct = Arrays.copyOf(b.array(), b.position());
        ByteBuffer c = ByteBuffer.allocate(64);
        EncodeContext ctx = new EncodeContext();
        ctx.int32Field(c, 1, 150);
        ctx.int64Field(c, 2, -1);
        ctx.fixed32Field(c, 3, 7);
        ctx.fixed64Field(c, 4, 8);
        ctx.bytesField(c, 5, new byte[]{1, 2});
        assertArrayEquals(Arrays.copyOf(c.array(), c.position()), direct);
        assertEquals(7, PbUtil.getFixed32(ByteBuffer.wrap(direct), 15));
        assertEquals(8L, PbUtil.getFixed64(ByteBuffer.wrap(direct), 20));
    }
}
