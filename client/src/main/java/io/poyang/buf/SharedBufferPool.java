package io.poyang.buf;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pool behind the per-thread pools: any thread may borrow and release. Each size class has
 * its own lock, taken only when a thread's local pool misses or overflows, so it stays off the
 * common path. Bounded by a byte cap; {@link #shrinkIdle} drops buffers unused for a while.
 */
public final class SharedBufferPool {

    private static final class Slot {
        final ByteBuffer buffer;
        final long releasedAtNanos;

        Slot(ByteBuffer buffer, long releasedAtNanos) {
            this.buffer = buffer;
            this.releasedAtNanos = releasedAtNanos;
        }
    }

    private final boolean direct;
    private final long maxPooledBytes;
    private final AtomicLong pooledBytes = new AtomicLong();
    /** Per class: oldest first, so idle buffers are at the head. */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Slot>[] classes = new ArrayDeque[BufferSizeClasses.COUNT];

    public SharedBufferPool(boolean direct, long maxPooledBytes) {
        if (maxPooledBytes < 0) {
            throw new IllegalArgumentException("maxPooledBytes must not be negative: " + maxPooledBytes);
        }
        this.direct = direct;
        this.maxPooledBytes = maxPooledBytes;
        for (int i = 0; i < classes.length; i++) {
            classes[i] = new ArrayDeque<>();
        }
    }

    public boolean isDirect() {
        return direct;
    }

    /** Takes a pooled buffer of the class, or returns null. */
    ByteBuffer poll(int classIndex) {
        ArrayDeque<Slot> q = classes[classIndex];
        Slot s;
        synchronized (q) {
            s = q.pollLast();
        }
        if (s == null) {
            return null;
        }
        pooledBytes.addAndGet(-s.buffer.capacity());
        return s.buffer;
    }

    /** Keeps a cleared buffer unless that passes the byte cap; returns whether it was kept. */
    boolean offer(ByteBuffer b, int classIndex, long nowNanos) {
        int cap = b.capacity();
        long after = pooledBytes.addAndGet(cap);
        if (after > maxPooledBytes) {
            pooledBytes.addAndGet(-cap);
            return false;
        }
        ArrayDeque<Slot> q = classes[classIndex];
        Slot s = new Slot(b, nowNanos);
        synchronized (q) {
            q.addLast(s);
        }
        return true;
    }

    /** Drops buffers released more than {@code idleNanos} before {@code nowNanos}; returns bytes dropped. */
    public long shrinkIdle(long nowNanos, long idleNanos) {
        long dropped = 0;
        for (ArrayDeque<Slot> q : classes) {
            synchronized (q) {
                Slot s;
                while ((s = q.peekFirst()) != null && nowNanos - s.releasedAtNanos > idleNanos) {
                    q.pollFirst();
                    dropped += s.buffer.capacity();
                }
            }
        }
        pooledBytes.addAndGet(-dropped);
        return dropped;
    }

    public long pooledBytes() {
        return pooledBytes.get();
    }

    public long maxPooledBytes() {
        return maxPooledBytes;
    }

    /** A copy of the pooled buffers, for integrity checks in tests. */
    List<ByteBuffer> snapshotPooled() {
        List<ByteBuffer> all = new ArrayList<>();
        for (ArrayDeque<Slot> q : classes) {
            synchronized (q) {
                for (Iterator<Slot> it = q.iterator(); it.hasNext(); ) {
                    all.add(it.next().buffer);
                }
            }
        }
        return all;
    }
}
