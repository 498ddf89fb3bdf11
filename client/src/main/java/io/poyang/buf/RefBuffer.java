package io.poyang.buf;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A buffer shared by several owners (the net layer, the log store, replication) with a reference
 * count: it goes back to its pool when the last owner releases it. Slices share the count of the
 * buffer they were cut from. The count is atomic, so owners may live on different threads.
 *
 * <p>Releasing more times than retained throws, so a double release is caught where it happens
 * instead of corrupting a pool.
 */
public final class RefBuffer {

    private static final AtomicIntegerFieldUpdater<RefBuffer> REF_COUNT =
            AtomicIntegerFieldUpdater.newUpdater(RefBuffer.class, "refCount");

    private final ByteBuffer buffer;
    private final BufferPool pool;
    /** The buffer holding the count: this one, or the one a slice was cut from. */
    private final RefBuffer root;
    private volatile int refCount;

    RefBuffer(ByteBuffer buffer, BufferPool pool) {
        this.buffer = buffer;
        this.pool = pool;
        this.root = this;
        this.refCount = 1;
    }

    private RefBuffer(ByteBuffer view, RefBuffer root) {
        this.buffer = view;
        this.pool = null;
        this.root = root;
    }

    /** Wraps a buffer that belongs to no pool; releasing it only updates the count. */
    public static RefBuffer wrap(ByteBuffer buffer) {
        return new RefBuffer(buffer, UnpooledBufferPool.HEAP);
    }

    /** The underlying buffer (a view for slices). */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** Adds one reference. Throws if the buffer was already freed. */
    public RefBuffer retain() {
        return retain(1);
    }

    public RefBuffer retain(int n) {
        if (n <= 0) {
            throw new IllegalArgumentException("retain count must be positive: " + n);
        }
        RefBuffer r = root;
        for (; ; ) {
            int c = r.refCount;
            if (c <= 0) {
                throw new IllegalStateException("retain of a freed RefBuffer");
            }
            if (REF_COUNT.compareAndSet(r, c, c + n)) {
                return this;
            }
        }
    }

    /** Drops one reference; returns true when that was the last and the buffer went back to its pool. */
    public boolean release() {
        RefBuffer r = root;
        int c = REF_COUNT.decrementAndGet(r);
        if (c > 0) {
            return false;
        }
        if (c < 0) {
            REF_COUNT.incrementAndGet(r);
            throw new IllegalStateException("RefBuffer released more times than retained (double release)");
        }
        r.pool.release(r.buffer);
        return true;
    }

    /** The current count of the shared root. */
    public int refCount() {
        return root.refCount;
    }

    /**
     * A view of {@code length} bytes starting at absolute index {@code index}, sharing this
     * buffer's count. Does not retain: call {@link #retainedSlice} when the slice gets its own owner.
     */
    public RefBuffer slice(int index, int length) {
        if (index < 0 || length < 0 || length > buffer.capacity() - index) {
            throw new IndexOutOfBoundsException("slice [" + index + ", " + ((long) index + length)
                    + ") outside capacity " + buffer.capacity());
        }
        if (root.refCount <= 0) {
            throw new IllegalStateException("slice of a freed RefBuffer");
        }
        ByteBuffer view = buffer.duplicate();
        view.limit(index + length);
        view.position(index);
        return new RefBuffer(view.slice(), root);
    }

    /** Like {@link #slice} but retains one reference on behalf of the slice's new owner. */
    public RefBuffer retainedSlice(int index, int length) {
        RefBuffer s = slice(index, length);
        root.retain();
        return s;
    }
}
