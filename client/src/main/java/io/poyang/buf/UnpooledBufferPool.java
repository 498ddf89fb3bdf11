package io.poyang.buf;

import java.nio.ByteBuffer;

/** Allocates a fresh buffer for every borrow and lets the GC have it back. For cold paths and tests. */
public final class UnpooledBufferPool extends BufferPool {

    public static final UnpooledBufferPool HEAP = new UnpooledBufferPool(false);
    public static final UnpooledBufferPool DIRECT = new UnpooledBufferPool(true);

    private final boolean direct;

    private UnpooledBufferPool(boolean direct) {
        this.direct = direct;
    }

    @Override
    public ByteBuffer borrow(int minCapacity) {
        if (minCapacity < 0) {
            throw new IllegalArgumentException("negative buffer size " + minCapacity);
        }
        return allocate(minCapacity, direct);
    }

    @Override
    public void release(ByteBuffer buffer) {
        // nothing to do: the GC reclaims it
    }

    @Override
    public boolean isDirect() {
        return direct;
    }
}
