package io.poyang.raft.store;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The on-disk form of an item (big-endian):
 *
 * <pre>
 * offset size field
 *  0     4    totalBytes        the whole item: header, business header and body with their CRCs
 *  4     4    headerBytes       business header length (0: absent, and no CRC follows it)
 *  8     4    bodyBytes         body length (0: absent, and no CRC follows it)
 * 12     1    type              1 normal, 2 no-op, 3 config change; 127 marks the end of a segment
 * 13     1    formatVersion     1
 * 14     2    reserved          0
 * 16     4    bizType
 * 20     4    term
 * 24     4    prevLogTerm
 * 28     8    index
 * 36     8    timestampMillis
 * 44     4    CRC32C of bytes 0..43
 * 48     headerBytes            business header, then its CRC32C (4 bytes) when headerBytes &gt; 0
 *  ..    bodyBytes              body, then its CRC32C (4 bytes) when bodyBytes &gt; 0
 * </pre>
 *
 * A segment-end marker is a bare header (totalBytes 48, type 127, index = the next item's index):
 * recovery and readers move to the next segment when they meet it, or when fewer than 48 bytes are
 * left in a segment. A header of zeros (a preallocated, never written tail) is the end of the log.
 *
 * <p>An instance holds a reusable CRC32C and encode context: one per thread (the store's is used
 * on its dispatcher thread only).
 */
final class LogItemCodec {

    static final int HEADER_BYTES = 48;
    static final int CRC_BYTES = 4;
    static final int HEADER_CRC_OFFSET = 44;
    static final byte TYPE_SEGMENT_END = 127;
    static final byte FORMAT_VERSION = 1;
    /** Items larger than this are refused: a sanity bound that also protects recovery from absurd lengths. */
    static final int MAX_ITEM_BYTES = 256 << 20;

    private final CRC32C crc = new CRC32C();
    private final EncodeContext encodeContext = new EncodeContext();

    static int sizeOf(int headerBytes, int bodyBytes) {
        return HEADER_BYTES + (headerBytes > 0 ? headerBytes + CRC_BYTES : 0) + (bodyBytes > 0 ? bodyBytes + CRC_BYTES : 0);
    }

    static int encodedSizeOf(Encodable e) {
        return e == null ? 0 : e.encodedSize();
    }

    /** Writes {@code item} at {@code dest}'s position; {@code dest} must have room for all of it. */
    void encode(LogItem item, int headerBytes, int bodyBytes, ByteBuffer dest) {
        int start = dest.position();
        int total = sizeOf(headerBytes, bodyBytes);
        dest.putInt(total);
        dest.putInt(headerBytes);
        dest.putInt(bodyBytes);
        dest.put((byte) item.getType());
        dest.put(FORMAT_VERSION);
        dest.putShort((short) 0);
        dest.putInt(item.getBizType());
        dest.putInt(item.getTerm());
        dest.putInt(item.getPrevLogTerm());
        dest.putLong(item.getIndex());
        dest.putLong(item.getTimestampMillis());
        putCrc(dest, start);
        if (headerBytes > 0) {
            encodePart(item.getHeader(), headerBytes, dest, item);
        }
        if (bodyBytes > 0) {
            encodePart(item.getBody(), bodyBytes, dest, item);
        }
        if (dest.position() - start != total) {
            throw new IllegalStateException("encoded " + item + " as " + (dest.position() - start)
                    + " bytes, expected " + total);
        }
    }

    /** Writes a segment-end marker saying the next item (index {@code nextIndex}) is in the next segment. */
    void encodeSegmentEnd(long nextIndex, ByteBuffer dest) {
        int start = dest.position();
        dest.putInt(HEADER_BYTES);
        dest.putInt(0);
        dest.putInt(0);
        dest.put(TYPE_SEGMENT_END);
        dest.put(FORMAT_VERSION);
        dest.putShort((short) 0);
        dest.putInt(0);
        dest.putInt(0);
        dest.putInt(0);
        dest.putLong(nextIndex);
        dest.putLong(0);
        putCrc(dest, start);
    }

    private void putCrc(ByteBuffer dest, int start) {
        int end = dest.position();
        int limit = dest.limit();
        dest.position(start).limit(end);
        crc.reset();
        crc.update(dest);
        dest.limit(limit);
        dest.putInt((int) crc.getValue());
    }

    private void encodePart(Encodable part, int bytes, ByteBuffer dest, LogItem item) {
        int start = dest.position();
        encodeContext.reset();
        if (!part.encode(encodeContext, dest) || dest.position() - start != bytes) {
            throw new IllegalStateException(part.getClass().getName() + " of " + item + " wrote "
                    + (dest.position() - start) + " bytes but its encodedSize() is " + bytes
                    + "; fix encodedSize() or encode()");
        }
        putCrc(dest, start);
    }

    /** CRC32C of {@code length} bytes of {@code buf} from {@code offset}; leaves the buffer as it was. */
    int crcOf(ByteBuffer buf, int offset, int length) {
        int pos = buf.position();
        int limit = buf.limit();
        buf.limit(offset + length).position(offset);
        crc.reset();
        crc.update(buf);
        buf.limit(limit).position(pos);
        return (int) crc.getValue();
    }

    /** What {@link #parseHeader} found. */
    enum HeaderCheck {
        /** A valid item header. */
        ITEM,
        /** A valid segment-end marker. */
        SEGMENT_END,
        /** Four zero bytes where the length should be: the unwritten (preallocated) tail. */
        ZERO,
        /** Anything else: a torn write, garbage, or corruption. */
        BAD
    }

    /**
     * Reads the header at {@code offset} of {@code buf} (which must hold at least
     * {@link #HEADER_BYTES} from there) into {@code out}. Does not move the buffer.
     */
    HeaderCheck parseHeader(ByteBuffer buf, int offset, ItemHeader out) {
        int total = buf.getInt(offset);
        if (total == 0) {
            return HeaderCheck.ZERO;
        }
        int storedCrc = buf.getInt(offset + HEADER_CRC_OFFSET);
        if (crcOf(buf, offset, HEADER_CRC_OFFSET) != storedCrc) {
            out.problem = "bad header CRC";
            return HeaderCheck.BAD;
        }
        out.totalBytes = total;
        out.headerBytes = buf.getInt(offset + 4);
        out.bodyBytes = buf.getInt(offset + 8);
        out.type = buf.get(offset + 12);
        byte version = buf.get(offset + 13);
        out.bizType = buf.getInt(offset + 16);
        out.term = buf.getInt(offset + 20);
        out.prevLogTerm = buf.getInt(offset + 24);
        out.index = buf.getLong(offset + 28);
        out.timestampMillis = buf.getLong(offset + 36);
        if (version != FORMAT_VERSION) {
            out.problem = "unknown item format version " + version;
            return HeaderCheck.BAD;
        }
        if (out.type == TYPE_SEGMENT_END) {
            if (total != HEADER_BYTES) {
                out.problem = "segment-end marker with length " + total;
                return HeaderCheck.BAD;
            }
            return HeaderCheck.SEGMENT_END;
        }
        if (out.type < LogItem.TYPE_NORMAL || out.type > LogItem.TYPE_CONFIG_CHANGE) {
            out.problem = "unknown item type " + out.type;
            return HeaderCheck.BAD;
        }
        if (out.headerBytes < 0 || out.bodyBytes < 0 || out.headerBytes > MAX_ITEM_BYTES || out.bodyBytes > MAX_ITEM_BYTES
                || total != sizeOf(out.headerBytes, out.bodyBytes)) {
            out.problem = "inconsistent lengths (total " + total + ", header " + out.headerBytes + ", body "
                    + out.bodyBytes + ")";
            return HeaderCheck.BAD;
        }
        return HeaderCheck.ITEM;
    }

    /**
     * Checks the CRCs of the business header and body of the item whose header is at
     * {@code offset} (the whole item must be in {@code buf}); returns null or the problem.
     */
    String checkParts(ByteBuffer buf, int offset, ItemHeader h) {
        int p = offset + HEADER_BYTES;
        if (h.headerBytes > 0) {
            if (crcOf(buf, p, h.headerBytes) != buf.getInt(p + h.headerBytes)) {
                return "bad business header CRC";
            }
            p += h.headerBytes + CRC_BYTES;
        }
        if (h.bodyBytes > 0 && crcOf(buf, p, h.bodyBytes) != buf.getInt(p + h.bodyBytes)) {
            return "bad body CRC";
        }
        return null;
    }

    /** Builds the item whose (checked) bytes are at {@code offset} of {@code buf}; copies the parts out. */
    static LogItem toItem(ByteBuffer buf, int offset, ItemHeader h) {
        int p = offset + HEADER_BYTES;
        ByteBody header = null;
        ByteBody body = null;
        if (h.headerBytes > 0) {
            header = new ByteBody(copy(buf, p, h.headerBytes));
            p += h.headerBytes + CRC_BYTES;
        }
        if (h.bodyBytes > 0) {
            body = new ByteBody(copy(buf, p, h.bodyBytes));
        }
        return new LogItem(h.type, h.bizType, h.term, h.prevLogTerm, h.index, h.timestampMillis, header, body);
    }

    private static byte[] copy(ByteBuffer buf, int offset, int length) {
        byte[] b = new byte[length];
        ByteBuffer d = buf.duplicate();
        d.limit(offset + length).position(offset);
        d.get(b);
        return b;
    }

    /** A parsed item header; reused. */
    static final class ItemHeader {
        int totalBytes;
        int headerBytes;
        int bodyBytes;
        int type;
        int bizType;
        int term;
        int prevLogTerm;
        long index;
        long timestampMillis;
        String problem;
    }
}
