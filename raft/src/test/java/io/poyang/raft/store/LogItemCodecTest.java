package io.poyang.raft.store;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bytes are exactly the table in raft/README.md. */
class LogItemCodecTest {

    private static int crc(ByteBuffer b, int from, int len) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(from + len).position(from);
        c.update(d);
        return (int) c.getValue();
    }

    @Test
    void layoutMatchesTheDocumentedTable() {
        byte[] header = "hdr".getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[256];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
        }
        LogItem item = new LogItem(LogItem.TYPE_CONFIG_CHANGE, 9, 5, 4, 123456789L, 1_700_000_000_123L,
                new ByteBody(header), new ByteBody(body));
        int size = LogItemCodec.sizeOf(3, 256);
        assertEquals(48 + 3 + 4 + 256 + 4, size);
        ByteBuffer b = ByteBuffer.allocate(size + 10);
        new LogItemCodec().encode(item, 3, 256, b);
        assertEquals(size, b.position());
        assertEquals(size, b.getInt(0));
        assertEquals(3, b.getInt(4));
        assertEquals(256, b.getInt(8));
        assertEquals(3, b.get(12));
        assertEquals(1, b.get(13));
        assertEquals(0, b.getShort(14));
        assertEquals(9, b.getInt(16));
        assertEquals(5, b.getInt(20));
        assertEquals(4, b.getInt(24));
        assertEquals(123456789L, b.getLong(28));
        assertEquals(1_700_000_000_123L, b.getLong(36));
        assertEquals(crc(b, 0, 44), b.getInt(44));
        assertEquals(crc(b, 48, 3), b.getInt(51));
        assertEquals(crc(b, 55, 256), b.getInt(55 + 256));

        LogItemCodec.ItemHeader h = new LogItemCodec.ItemHeader();
        LogItemCodec codec = new LogItemCodec();
        assertEquals(LogItemCodec.HeaderCheck.ITEM, codec.parseHeader(b, 0, h));
        assertNull(codec.checkParts(b, 0, h));
        LogItem back = LogItemCodec.toItem(b, 0, h);
        assertEquals(123456789L, back.getIndex());
        assertArrayEquals(body, ((ByteBody) back.getBody()).toByteArray());
        assertArrayEquals(header, ((ByteBody) back.getHeader()).toByteArray());
    }

    @Test
    void damageIsDetectedWhereverItIs() {
        LogItem item = StoreHarness.item(7, 2, 2, StoreHarness.bodyFor(7, 0, 40));
        int hb = item.getHeader().encodedSize();
        int bb = item.getBody().encodedSize();
        int size = LogItemCodec.sizeOf(hb, bb);
        LogItemCodec codec = new LogItemCodec();
        LogItemCodec.ItemHeader h = new LogItemCodec.ItemHeader();
        for (int at = 0; at < size; at++) {
            ByteBuffer b = ByteBuffer.allocate(size);
            codec.encode(item, hb, bb, b);
            b.put(at, (byte) (b.get(at) ^ 0x10));
            LogItemCodec.HeaderCheck c = codec.parseHeader(b, 0, h);
            boolean caught = c == LogItemCodec.HeaderCheck.BAD || c == LogItemCodec.HeaderCheck.ZERO
                    || codec.checkParts(b, 0, h) != null;
            assertTrue(caught, "a flipped bit at byte " + at + " went unnoticed");
        }
    }

    @Test
    void segmentEndMarkerAndZeros() {
        ByteBuffer b = ByteBuffer.allocate(96);
        LogItemCodec codec = new LogItemCodec();
        codec.encodeSegmentEnd(42, b);
        LogItemCodec.ItemHeader h = new LogItemCodec.ItemHeader();
        assertEquals(LogItemCodec.HeaderCheck.SEGMENT_END, codec.parseHeader(b, 0, h));
        assertEquals(42, h.index);
        assertEquals(LogItemCodec.HeaderCheck.ZERO, codec.parseHeader(b, 48, h));
    }
}
