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

    /** Field {@code field} (LEN) declared {@code declared} bytes long, with only its first {@code sent} bytes. */
    private static byte[] announced(int field, int declared, int sent) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int v : new int[]{field << 3 | 2, declared}) {
            for (; ; v >>>= 7) {
                if ((v & ~0x7F) == 0) {
                    out.write(v);
                    break;
                }
                out.write((v & 0x7F) | 0x80);
            }
        }
        for (int k = 0; k < sent; k++) {
            out.write('a');
        }
        return out.toByteArray();
    }

    @Test
    void aLargeDeclaredFieldIsNotAllocatedBeforeItsBytesArrive() {
        int declared = 8 << 20;
        // bytes (16) and string (15) fields of AllTypes, announced at 8 MiB, 100 bytes sent
        for (int field : new int[]{16, 15}) {
            byte[] start = announced(field, declared, 100);
            PbParser p = new PbParser(16 << 20);
            p.prepare(new AllTypes.Callback(), start.length - 100 + declared);
            p.feed(ByteBuffer.wrap(start));
            byte[] held = field == 16 ? p.pendingBytes : p.scratch;
            assertTrue(held != null && held.length <= 64 * 1024,
                    "field " + field + ": " + (held == null ? "nothing" : held.length + " bytes") + " held for 100 received");
        }
    }

    @Test
    void aFieldThatArrivesInManyPiecesIsDecodedWhole() {
        byte[] value = new byte[300_000];
        for (int k = 0; k < value.length; k++) {
            value[k] = (byte) ('a' + k % 26);
        }
        AllTypes m = new AllTypes();
        m.fBytes = value;
        m.fString = new String(value, java.nio.charset.StandardCharsets.US_ASCII);
        byte[] wire = EncodeContext.encodeToArray(m);
        PbParser p = new PbParser(1 << 20);
        AllTypes.Callback cb = new AllTypes.Callback();
        p.prepare(cb, wire.length);
        for (int off = 0; off < wire.length; off += 1000) {
            p.feed(ByteBuffer.wrap(wire, off, Math.min(1000, wire.length - off)));
        }
        AllTypes back = (AllTypes) p.result();
        assertTrue(java.util.Arrays.equals(value, back.fBytes));
        assertEquals(m.fString, back.fString);
        // the next message does not keep the large string's scratch array for the connection's life
        p.prepare(new AllTypes.Callback(), 0);
        assertTrue(p.scratch == null, "a scratch array of " + (p.scratch == null ? 0 : p.scratch.length) + " bytes kept");
    }
}
