package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Each kind of malformed input gives a {@link CodecException} with the offset of the bad element
 * and a reason, the same whichever way the input was split.
 */
class MalformedInputTest {

    /**
     * Decodes {@code hex} whole and split at every position; every attempt must fail with the same
     * position and message. Returns the exception.
     */
    static CodecException fails(String hex) {
        byte[] msg = Hex.bytes(hex);
        CodecException first = null;
        for (int cut = -1; cut <= msg.length; cut++) {
            PbParser p = new PbParser(1 << 20);
            CodecException e;
            try {
                p.prepare(new AllTypes.Callback(), msg.length);
                if (cut < 0) {
                    p.feed(ByteBuffer.wrap(msg));
                } else {
                    p.feed(ByteBuffer.wrap(msg, 0, cut));
                    p.feed(ByteBuffer.wrap(msg, cut, msg.length - cut));
                }
                fail(hex + " decoded without an error (split at " + cut + ")");
                return null;
            } catch (CodecException ex) {
                e = ex;
            }
            assertEquals(io.poyang.common.ErrorCode.CODEC, e.code());
            if (first == null) {
                first = e;
            } else {
                assertEquals(first.getMessage(), e.getMessage(), "split at " + cut + " changed the error");
            }
            // A parser that failed refuses more input until prepared again.
            assertThrows(IllegalStateException.class, () -> p.feed(ByteBuffer.allocate(1)));
        }
        return first;
    }

    static void assertError(String hex, long position, String reasonPart) {
        CodecException e = fails(hex);
        assertEquals(position, e.position(), e.getMessage());
        assertTrue(e.getMessage().contains(reasonPart), "'" + e.getMessage() + "' lacks '" + reasonPart + "'");
        assertTrue(e.getMessage().startsWith("malformed protobuf at byte " + position + ": "), e.getMessage());
    }

    @Test
    void aLengthOf2ToThe31Minus1InATenByteMessage() {
        assertError("7a ff ff ff ff 07 61 62 63 64", 1, "field 15 claims 2147483647 bytes but only 4 are left");
        // The same for a field the callback does not know (it would be skipped): checked all the same.
        assertError("9a 06 ff ff ff ff 07 61 62 63", 2, "field 99 claims 2147483647 bytes but only 3 are left");
    }

    @Test
    void negativeAndOversizedLengths() {
        assertError("7a ff ff ff ff ff ff ff ff ff 01", 1, "negative or oversized length 18446744073709551615");
        assertError("7a 80 80 80 80 08 00", 1, "negative or oversized length 2147483648");
    }

    @Test
    void varintsOverTenBytesAndTagsOverFive() {
        assertError("08 ff ff ff ff ff ff ff ff ff ff 01", 1, "the varint of field 1 is longer than 10 bytes");
        assertError("7a ff ff ff ff ff ff ff ff ff ff 01", 1, "the length of field 15 is longer than 10 bytes");
        assertError("08 01 ff ff ff ff ff 01", 2, "a tag is longer than 5 bytes");
    }

    @Test
    void truncationInsideEachElement() {
        assertError("08 96 01 f8 ff", 3, "the message (5 bytes) ends inside a tag");
        assertError("08 96", 1, "ends inside the varint of field 1");
        assertError("4d 01 02", 1, "ends inside the fixed32 of field 9");
        assertError("51 01 02 03 04 05 06 07", 1, "ends inside the fixed64 of field 10");
        assertError("7a 80", 1, "ends inside the length of field 15");
        assertError("7a 05 61 62", 1, "field 15 claims 5 bytes but only 2 are left");
        // Inside a nested message: the position counts from the outermost message.
        assertError("08 01 8a 01 02 08 96", 6, "the message (2 bytes) ends inside the varint of field 1");
    }

    @Test
    void invalidFieldNumbers() {
        assertError("00 01", 0, "invalid field number 0");
        assertError("08 01 02 00", 2, "invalid field number 0");
        assertError("ff ff ff ff 7f 00", 0, "invalid field number 4294967295");
    }

    @Test
    void groupsAndInvalidWireTypes() {
        assertError("0b 0c", 0, "field 1 has wire type SGROUP, which is not supported");
        assertError("0c", 0, "field 1 has wire type EGROUP");
        assertError("fb 01 fc 01", 0, "field 31 has wire type SGROUP"); // unknown fields too
        assertError("0e 00", 0, "invalid(6)");
        assertError("08 01 0f 00", 2, "invalid(7)");
    }

    @Test
    void wrongWireTypeForAKnownField() {
        assertError("08 01 0d 00 00 00 00", 2, "field 1 has wire type I32 but VARINT was expected");
        assertError("78 01", 0, "field 15 has wire type VARINT but LEN was expected");
        assertError("4a 00", 0, "field 9 has wire type LEN but I32 was expected");
        assertError("9d 01 00 00 00 00", 0, "field 19 has wire type I32 but LEN or VARINT (packed repeated) was expected");
        assertError("a0 01 01", 0, "field 20 has wire type VARINT but LEN or I64 (packed repeated) was expected");
    }

    @Test
    void malformedPackedRuns() {
        assertError("9a 01 0b ff ff ff ff ff ff ff ff ff ff ff", 3, "a varint in packed field 19 is longer than 10 bytes");
        assertError("9a 01 02 01 80", 4, "packed field 19 ends inside a varint");
        assertError("a2 01 03 01 02 03", 2, "packed fixed64 field 20 has length 3, not a multiple of 8");
    }

    @Test
    void malformedUtf8InAStringField() {
        assertError("08 01 7a 01 ff", 4, "string field 15 is not valid UTF-8");
        assertError("7a 02 c0 80", 2, "not valid UTF-8"); // overlong NUL
        assertError("7a 03 e0 80 80", 2, "not valid UTF-8"); // overlong 3-byte
        assertError("7a 03 ed a0 80", 2, "not valid UTF-8"); // a surrogate
        assertError("7a 04 f4 90 80 80", 2, "not valid UTF-8"); // above U+10FFFF
        assertError("7a 02 61 e2", 2, "not valid UTF-8"); // cut off
        assertError("7a 01 80", 2, "not valid UTF-8"); // a lone continuation byte
        assertError("aa 01 03 61 62 ff", 3, "string field 21 is not valid UTF-8"); // repeated string
        // Valid: 2-, 3- and 4-byte forms at their edges.
        AllTypes m = PbParser.parse(Hex.bytes("7a 0f c2 80 df bf e0 a0 80 ef bf bf f4 8f bf bf 61"),
                new AllTypes.Callback());
        assertEquals("\u0080\u07ff\u0800\uffff\udbff\udfffa", m.fString);
    }

    @Test
    void utf8CheckAgreesWithTheJdksStrictDecoder() {
        java.util.Random r = new java.util.Random(5);
        java.nio.charset.CharsetDecoder strict = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        int valid = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[1 + r.nextInt(6)];
            for (int k = 0; k < b.length; k++) {
                // Mostly bytes around the interesting lead and continuation ranges.
                b[k] = (byte) (r.nextInt(4) == 0 ? r.nextInt(256) : 0x80 + r.nextInt(0x78));
            }
            boolean jdk;
            try {
                strict.reset().decode(ByteBuffer.wrap(b));
                jdk = true;
            } catch (java.nio.charset.CharacterCodingException e) {
                jdk = false;
            }
            assertEquals(jdk, PbUtil.isValidUtf8(b, 0, b.length), Hex.spaced(b));
            valid += jdk ? 1 : 0;
        }
        assertTrue(valid > 1000, "valid sequences were exercised too: " + valid);
    }

    @Test
    void messagesOverTheLimitAreRefusedBeforeAnyByteIsRead() {
        PbParser p = new PbParser(100);
        CodecException e = assertThrows(CodecException.class, () -> p.prepare(new AllTypes.Callback(), 101));
        assertEquals(0, e.position());
        assertTrue(e.getMessage().contains("message of 101 bytes is outside the limit of 100 bytes"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> p.feed(ByteBuffer.allocate(1)));
        assertThrows(CodecException.class, () -> p.prepare(new AllTypes.Callback(), -1));
        p.prepare(new AllTypes.Callback(), 3); // usable again once prepared
        assertTrue(p.feed(ByteBuffer.wrap(Hex.bytes("08 96 01"))));
        assertEquals(150, ((AllTypes) p.result()).fInt32);
    }

    /** {@code levels} AllTypes nested through f_child (field 22), the innermost empty. */
    static byte[] nestedChain(int levels, long[] innermostBodyStart) {
        byte[] inner = new byte[0];
        for (int i = 0; i < levels; i++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(0xb2);
            out.write(0x01);
            ByteBuffer len = ByteBuffer.allocate(5);
            PbUtil.writeUnsignedVarint32(len, inner.length);
            out.write(len.array(), 0, len.position());
            out.write(inner, 0, inner.length);
            innermostBodyStart[0] += 2 + len.position();
            inner = out.toByteArray();
        }
        return inner;
    }

    static AllTypes chain(int levels) {
        AllTypes top = new AllTypes();
        AllTypes m = top;
        for (int i = 0; i < levels; i++) {
            m.fChild = new AllTypes();
            m = m.fChild;
        }
        return top;
    }

    @Test
    void nestingIsLimitedToMaxDepthLevelsOnBothSides() {
        long[] at = new long[1];
        byte[] deepest = nestedChain(PbParser.MAX_DEPTH, at);
        assertEquals(chain(PbParser.MAX_DEPTH), PbParser.parse(deepest, new AllTypes.Callback()));
        assertEquals(Hex.of(deepest), Hex.of(EncodeContext.encodeToArray(chain(PbParser.MAX_DEPTH))));

        long[] tooDeepAt = new long[1];
        byte[] tooDeep = nestedChain(PbParser.MAX_DEPTH + 1, tooDeepAt);
        assertError(Hex.of(tooDeep), tooDeepAt[0], "field 22 nests messages deeper than 32 levels");
        CodecException e = assertThrows(CodecException.class,
                () -> EncodeContext.encodeToArray(chain(PbParser.MAX_DEPTH + 1)));
        assertTrue(e.getMessage().contains("deeper than 32 levels"), e.getMessage());
    }

    @Test
    void aCallbackThatThrowsLeavesTheCallersBufferLimitAlone() {
        PbCallback<Void> angry = new PbCallback<Void>() {
            @Override
            protected int wireTypeOf(int field) {
                return PbWireType.LEN;
            }

            @Override
            protected void readBytes(int field, ByteBuffer piece, int len, int off) {
                throw new IllegalArgumentException("no thanks");
            }

            @Override
            protected Void end() {
                return null;
            }
        };
        for (String hex : new String[]{"0a 00 08", "0a 01 61 08"}) {
            ByteBuffer b = ByteBuffer.wrap(Hex.bytes(hex));
            PbParser p = new PbParser(100);
            p.prepare(angry, b.remaining());
            assertThrows(IllegalArgumentException.class, () -> p.feed(b));
            assertEquals(b.capacity(), b.limit(), hex);
            assertThrows(IllegalStateException.class, () -> p.feed(b));
        }
    }
}
