package io.poyang.buf;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Free buffers kept for one owner thread, one stack per size class, with no synchronisation.
 * Bounded by a byte cap; buffers idle longer than a given time are dropped by
 * {@link #shrinkIdle}. Only {@link ThreadBufferPool} uses it, always from the owner thread.
 */
final class LocalBufferPool {

    private final ByteBuffer[][] stacks = new ByteBuffer[BufferSizeClasses.COUNT][];
    /** Release time of each pooled buffer, parallel to {@link #stacks}, for idle shrinking. */
    private final long[][] releasedAtNanos = new long[BufferSizeClasses.COUNT][];
    private final int[] counts = new int[BufferSizeClasses.COUNT];
    private final long maxPooledBytes;
    private long pooledBytes;

    LocalBufferPool(long maxPooledBytes) {
        if (maxPooledBytes < 0) {
            throw new IllegalArgumentException("maxPooledBytes must not be negative: " + maxPooledBytes);
        }
        this.maxPooledBytes = maxPooledBytes;
        for (int i = 0; i < BufferSizeClasses.COUNT; i++) {
            stacks[i] = new ByteBuffer[4];
            releasedAtNanos[i] = new long[4];
        }
    }

    ByteBuffer poll(int classIndex) {
        int n = counts[classIndex];
        if (n == 0) {
            return null;
        }
        n--;
        ByteBuffer[] stack = stacks[classIndex];
        ByteBuffer b = stack[n];
        stack[n] = null;
        counts[classIndex] = n;
        pooledBytes -= b.capacity();
        return b;
    }

    /** Keeps the buffer unless that would pass the byte cap; returns whether it was kept. */
    boolean offer(ByteBuffer b, int classIndex, long nowNanos) {
        int cap = b.capacity();
        if (pooledBytes + cap > maxPooledBytes) {
            return false;
        }
        int n = counts[classIndex];
        ByteBuffer[] stack = stacks[classIndex];
        if (n == stack.length) {
            stacks[classIndex] = stack = Arrays.copyOf(stack, n * 2);
            releasedAtNanos[classIndex] = Arrays.copyOf(releasedAtNanos[classIndex], n * 2);
        }
        stack[n] = b;
        releasedAtNanos[classIndex][n] = nowNanos;
        counts[classIndex] = n + 1;
        pooledBytes += cap;
        return true;
    }

    /**
     * Drops buffers released more than {@code idleNanos} ago. The oldest sit at the bottom of each
     * stack, so the survivors are shifted down. Returns the number of bytes dropped.
     */
    long shrinkIdle(long nowNanos, long idleNanos) {
        long dropped = 0;
        for (int c = 0; c < BufferSizeClasses.COUNT; c++) {
            int n = counts[c];
            if (n == 0) {
                continue;
            }
            long[] times = releasedAtNanos[c];
            int stale = 0;
            while (stale < n && nowNanos - times[stale] > idleNanos) {
                stale++;
            }
            if (stale == 0) {
                continue;
            }
            ByteBuffer[] stack = stacks[c];
            dropped += (long) stale * stack[0].capacity();
            System.arraycopy(stack, stale, stack, 0, n - stale);
            System.arraycopy(times, stale, times, 0, n - stale);
            Arrays.fill(stack, n - stale, n, null);
            counts[c] = n - stale;
        }
        pooledBytes -= dropped;
        return dropped;
    }

    long pooledBytes() {
        return pooledBytes;
    }

    int pooledCount() {
        int total = 0;
        for (int n : counts) {
            total += n;
        }
        return total;
    }

    void forEachPooled(java.util.function.Consumer<ByteBuffer> action) {
        for (int c = 0; c < BufferSizeClasses.COUNT; c++) {
            for (int i = 0; i < counts[c]; i++) {
                action.accept(stacks[c][i]);
            }
        }
    }
}
