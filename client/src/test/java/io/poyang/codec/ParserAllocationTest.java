package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Decoding varints, lengths and tags allocates nothing: the parser once built the text of an error
 * message ("the varint of field N") for every varint it read, whether or not anything was wrong.
 */
class ParserAllocationTest {

    /** Reads fields 1 (varint) and 2 (a bytes field, skipped in place); allocates nothing itself. */
    static final class Sum extends PbCallback<Object> {
        long sum;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.VARINT : field == 2 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void readVarint(int field, long value) {
            sum += value;
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            piece.position(piece.limit());
        }

        @Override
        protected Object end() {
            return this;
        }
    }

    @Test
    void parsingVarintsLengthsAndTagsAllocatesNothing() {
        // field 1 = 300, field 2 = 3 bytes, field 3 (unknown varint) = 1
        byte[] message = {0x08, (byte) 0xAC, 0x02, 0x12, 0x03, 'a', 'b', 'c', 0x18, 0x01};
        ByteBuffer buf = ByteBuffer.wrap(message);
        PbParser parser = new PbParser(1 << 20);
        Sum sum = new Sum();
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int round = 0; round < 2; round++) {   // the first round warms up (JIT, class loading)
            long before = bean.getThreadAllocatedBytes(Thread.currentThread().getId());
            for (int i = 0; i < 100_000; i++) {
                buf.clear();
                parser.prepare(sum, message.length);
                assertTrue(parser.feed(buf));
            }
            long allocated = bean.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            if (round == 1) {
                assertTrue(allocated < 100_000, "parsing 100,000 messages allocated " + allocated + " bytes");
            }
        }
        assertEquals(200_000L * 300, sum.sum);
    }
}
