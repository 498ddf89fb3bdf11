package io.poyang.codec;

import java.nio.ByteBuffer;

/**
 * A protobuf message that writes itself into buffers, resuming where it stopped when a buffer
 * fills up. Implementations cache {@link #encodedSize()} and write their fields with the
 * {@link EncodeContext} helpers in a fall-through switch on {@link EncodeContext#stage}:
 *
 * <pre>{@code
 * public boolean encode(EncodeContext c, ByteBuffer dest) {
 *     switch (c.stage) {
 *         case 0: if (!c.int64Field(dest, 1, term)) return false;
 *         case 1: if (!c.bytesField(dest, 2, data)) return false;
 *         case 2: if (!c.messageField(dest, 3, child)) return false;
 *         default: return true;
 *     }
 * }
 * }</pre>
 *
 * Each helper writes one field whole, or as much as fits, advances {@code stage} when the field is
 * done and returns false when the buffer is full; the caller then drains the buffer and calls
 * {@code encode} again with the same context. The message must not change while being encoded.
 */
public interface Encodable {

    /** The exact number of bytes {@link #encode} writes. */
    int encodedSize();

    /**
     * Writes what fits into {@code dest}. Returns true when the message is complete, false when
     * {@code dest} filled up first (call again with more room and the same context).
     */
    boolean encode(EncodeContext context, ByteBuffer dest);
}
