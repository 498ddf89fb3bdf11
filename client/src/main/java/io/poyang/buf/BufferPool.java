package io.poyang.buf;

import java.nio.ByteBuffer;

/**
 * Hands out byte buffers and takes them back. A borrowed buffer has position 0 and limit equal to
 * its capacity, which is at least the size asked for. Every borrowed buffer must be released to
 * the pool it came from exactly once, after which the caller must not touch it.
 */
public abstract class BufferPool {

    /** Borrows a buffer of at least {@code minCapacity} bytes. */
    public abstract ByteBuffer borrow(int minCapacity);

    /** Gives a buffer back. Buffers the pool does not keep (unpooled sizes, over the cap) are dropped. */
    public abstract void release(ByteBuffer buffer);

    /** True when the buffers are direct (off-heap). */
    public abstract boolean isDirect();

    /** Borrows a buffer wrapped in a {@link RefBuffer} with a reference count of one. */
    public RefBuffer borrowRef(int minCapacity) {
        return new RefBuffer(borrow(minCapacity), this);
    }

    static ByteBuffer allocate(int capacity, boolean direct) {
        return direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }
}
