package io.poyang.raft.store;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Raw bytes as an {@link Encodable}: the body or business header of an item on a follower or
 * read back from disk. Encoding copies the bytes as they are (no protobuf tag); when the
 * destination fills up, {@link EncodeContext#stage} remembers how many bytes were written.
 */
public final class ByteBody implements Encodable {

    private final byte[] bytes;
    private final int offset;
    private final int length;

    public ByteBody(byte[] bytes) {
        this(bytes, 0, bytes.length);
    }

    public ByteBody(byte[] bytes, int offset, int length) {
        if (offset < 0 || length < 0 || offset + length > bytes.length) {
            throw new IndexOutOfBoundsException("offset " + offset + ", length " + length + " of " + bytes.length);
        }
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
    }

    @Override
    public int encodedSize() {
        return length;
    }

    @Override
    public boolean encode(EncodeContext context, ByteBuffer dest) {
        int done = context.stage;
        int n = Math.min(length - done, dest.remaining());
        dest.put(bytes, offset + done, n);
        context.stage = done + n;
        return context.stage == length;
    }

    /** The backing array (shared, not copied); see {@link #offset()} and {@link #length()}. */
    public byte[] array() {
        return bytes;
    }

    public int offset() {
        return offset;
    }

    public int length() {
        return length;
    }

    /** A copy of exactly the body's bytes. */
    public byte[] toByteArray() {
        return Arrays.copyOfRange(bytes, offset, offset + length);
    }

    @Override
    public String toString() {
        return "ByteBody(" + length + " bytes)";
    }
}
