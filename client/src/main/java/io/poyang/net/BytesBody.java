package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;

import java.nio.ByteBuffer;

/**
 * A body made of raw bytes, written as they are (the bytes are the body message, not a field of
 * it). Immutable, so one instance may go out in many packets.
 */
public final class BytesBody implements Encodable {

    private final byte[] bytes;

    public BytesBody(byte[] bytes) {
        this.bytes = bytes;
    }

    public byte[] bytes() {
        return bytes;
    }

    @Override
    public int encodedSize() {
        return bytes.length;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        // No fields here: the stage counts the bytes already written.
        int done = c.stage;
        int n = Math.min(bytes.length - done, dest.remaining());
        dest.put(bytes, done, n);
        c.stage = done + n;
        return c.stage == bytes.length;
    }
}
