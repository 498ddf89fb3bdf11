package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Fields a callback does not declare are skipped whatever their wire type, whole or split. */
class UnknownFieldsTest {

    /** Knows only {@code int64 f_int64 = 2} and {@code string f_string = 15} of AllTypes. */
    static final class OnlyTwoFields extends PbCallback<String> {
        long int64;
        String string;
        int seen;

        @Override
        protected int wireTypeOf(int field) {
            return field == 2 ? PbWireType.VARINT : field == 15 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            int64 = 0;
            string = "";
            seen = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            assertEquals(2, field);
            int64 = value;
            seen++;
        }

        @Override
        protected void readFixed32(int field, int value) {
            throw new AssertionError("skipped fields must not arrive");
        }

        @Override
        protected void readFixed64(int field, long value) {
            throw new AssertionError("skipped fields must not arrive");
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int len, int off) {
            assertEquals(15, field);
            String s = parseString(piece, len, off);
            if (s != null) {
                string = s;
                seen++;
            }
        }

        @Override
        protected String end() {
            return int64 + "/" + string;
        }
    }

    @Test
    void unknownFieldsOfEveryWireTypeAreSkipped() {
        String hex = "08 96 01" // 1 VARINT
                + " 10 2a" // 2 VARINT, known: 42
                + " 4d 01 02 03 04" // 9 I32
                + " 51 01 02 03 04 05 06 07 08" // 10 I64
                + " 8a 01 03 08 96 01" // 17 LEN (a nested message)
                + " 7a 02 68 69" // 15 LEN, known: "hi"
                + " 9a 01 00" // 19 LEN, empty
                + " f8 ff ff ff 0f 01" // 536870911 VARINT, 5-byte tag
                + " 80 80 01 ff ff ff ff ff ff ff ff ff 01"; // 2048 VARINT, 10-byte value
        byte[] msg = Hex.bytes(hex);
        OnlyTwoFields cb = new OnlyTwoFields();
        for (int cut = 0; cut <= msg.length; cut++) {
            PbParser p = new PbParser(1000);
            p.prepare(cb, msg.length);
            p.feed(ByteBuffer.wrap(msg, 0, cut));
            p.feed(ByteBuffer.wrap(msg, cut, msg.length - cut));
            assertEquals("42/hi", p.result(), "split at " + cut);
            assertEquals(2, cb.seen);
        }
    }

    @Test
    void randomMessagesReadByACallbackKnowingTwoFieldsGiveJustThoseFields() {
        for (AllTypes m : CodecRoundTripTest.messages(20, 500, 2)) {
            String got = PbParser.parse(EncodeContext.encodeToArray(m), new OnlyTwoFields());
            assertEquals(m.fInt64 + "/" + m.fString, got);
        }
    }
}
