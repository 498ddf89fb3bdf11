package io.poyang.buf;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pool behind the per-thread pools: any thread may borrow and release. Each size class has
 * its own lock, taken only when a thread's local pool misses or overflows, so it stays off the
 * common path; keeping and taking a buffer allocate nothing. Bounded by a byte cap that is never
 * passed, not even for an instant; {@link #shrinkIdle} drops buffers unused for a while.
 */
public final class SharedBufferPool {

    /** Free buffers of one size class: a ring, oldest at the head, newest handed out first. */
    private static final class FreeList {
        ByteBuffer[] buffers = new ByteBuffer[8];
        long[] releasedAtNanos = new long[8];
        int head;
        int count;

        ByteBuffer pollNewest() {
            if (count == 0) {
                return null;
            }
            count--;
            int i = (head + count) & (buffers.length - 1);
            ByteBuffer b = buffers[i];
            buffers[i] = null;
            return b;
        }

        void add(ByteBuffer b, long nowNanos) {
            if (count == buffers.length) {
                grow();
            }
            int i = (head + count) & (buffers.length - 1);
            buffers[i] = b;
            releasedAtNanos[i] = nowNanos;
            count++;
        }

        private void grow() {
            int n = buffers.length;
            ByteBuffer[] nb = new ByteBuffer[n * 2];
            long[] nt = new long[n * 2];
            for (int k = 0; k < count; k++) {
                int i = (head + k) & (n - 1);
                nb[k] = buffers[i];
                nt[k] = releasedAtNanos[i];
            }
            buffers = nb;
            releasedAtNanos = nt;
            head = 0;
        }

        /** Drops the oldest buffers while they are idle; returns how many were dropped. */
        int dropIdle(long nowNanos, long idleNanos) {
            int dropped = 0;
            int mask = buffers.length - 1;
            // Owners stamp with their own cached clocks, so stamps are only roughly ordered: this
            // stops at the first buffer that is not idle, and the rest go on a later call.
            while (count > 0 && nowNanos - releasedAtNanos[head] > idleNanos) {
                buffers[head] = null;
                head = (head + 1) & mask;
                count--;
                dropped++;
            }
            return dropped;
        }
    }

    private final boolean direct;
    private final long maxPooledBytes;
    /** Bytes pooled or reserved by an offer in progress; never above {@link #maxPooledBytes}. */
    private final AtomicLong pooledBytes = new AtomicLong();
    private final AtomicLong droppedCount = new AtomicLong();
    private final FreeList[] classes = new FreeList[BufferSizeClasses.COUNT];

    public SharedBufferPool(boolean direct, long maxPooledBytes) {
        if (maxPooledBytes < 0) {
            throw new IllegalArgumentException("maxPooledBytes must not be negative: " + maxPooledBytes);
        }
        this.direct = direct;
        this.maxPooledBytes = maxPooledBytes;
        for (int i = 0; i < classes.length; i++) {
            classes[i] = new FreeList();
        }
    }

    public boolean isDirect() {
        return direct;
    }

    /** Takes a pooled buffer of the class, or returns null. */
    ByteBuffer poll(int classIndex) {
        FreeList list = classes[classIndex];
        ByteBuffer b;
        synchronized (list) {
            b = list.pollNewest();
        }
        if (b != null) {
            pooledBytes.addAndGet(-b.capacity());
        }
        return b;
    }

    /** Keeps a cleared buffer unless that passes the byte cap; returns whether it was kept. */
    boolean offer(ByteBuffer b, int classIndex, long nowNanos) {
        int cap = b.capacity();
        for (; ; ) {
            long before = pooledBytes.get();
            if (before + cap > maxPooledBytes) {
                droppedCount.incrementAndGet();
                return false;
            }
            if (pooledBytes.compareAndSet(before, before + cap)) {
                break;
            }
        }
        FreeList list = classes[classIndex];
        synchronized (list) {
            list.add(b, nowNanos);
        }
        return true;
    }

    /** Drops buffers released more than {@code idleNanos} before {@code nowNanos}; returns bytes dropped. */
    public long shrinkIdle(long nowNanos, long idleNanos) {
        long dropped = 0;
        for (int c = 0; c < classes.length; c++) {
            FreeList list = classes[c];
            int n;
            synchronized (list) {
                n = list.dropIdle(nowNanos, idleNanos);
            }
            dropped += (long) n * BufferSizeClasses.sizeOf(c);
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

    /** Buffers refused because keeping them would have passed the byte cap (the GC has them). */
    public long droppedCount() {
        return droppedCount.get();
    }

    /** A copy of the pooled buffers, for integrity checks in tests. */
    List<ByteBuffer> snapshotPooled() {
        List<ByteBuffer> all = new ArrayList<>();
        for (FreeList list : classes) {
            synchronized (list) {
                int mask = list.buffers.length - 1;
                for (int k = 0; k < list.count; k++) {
                    all.add(list.buffers[(list.head + k) & mask]);
                }
            }
        }
        return all;
    }

    @Override
    public String toString() {
        return "SharedBufferPool(" + (direct ? "direct" : "heap") + ", " + pooledBytes.get() + "/"
                + maxPooledBytes + " bytes pooled, " + droppedCount.get() + " dropped over the cap)";
    }
}
