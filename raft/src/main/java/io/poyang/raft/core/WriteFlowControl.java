package io.poyang.raft.core;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bound on a group's pending writes, by count and by body bytes, kept in one atomic long
 * (count in the high 23 bits, bytes in the low 40). A network thread admits a write with one
 * atomic add ({@link #tryAcquire}); the dispatcher gives room back once per apply batch
 * ({@link #release}), so a write costs one atomic on each side at most.
 */
final class WriteFlowControl {

    private static final int COUNT_SHIFT = 40;
    private static final long BYTES_MASK = (1L << COUNT_SHIFT) - 1;

    private final AtomicLong used = new AtomicLong();
    private final long maxCount;
    private final long maxBytes;

    WriteFlowControl(int maxCount, long maxBytes) {
        this.maxCount = maxCount;
        this.maxBytes = maxBytes;
    }

    /** Takes room for one write of {@code bytes}; false (and nothing taken) when a bound would be passed. Any thread. */
    boolean tryAcquire(int bytes) {
        long delta = (1L << COUNT_SHIFT) + bytes;
        long v = used.addAndGet(delta);
        if ((v >>> COUNT_SHIFT) > maxCount || (v & BYTES_MASK) > maxBytes) {
            used.addAndGet(-delta);
            return false;
        }
        return true;
    }

    /** Gives back room for {@code count} writes holding {@code bytes} in all. Any thread. */
    void release(int count, long bytes) {
        if (count != 0) {
            used.addAndGet(-(((long) count << COUNT_SHIFT) + bytes));
        }
    }

    int pendingCount() {
        return (int) (used.get() >>> COUNT_SHIFT);
    }

    long pendingBytes() {
        return used.get() & BYTES_MASK;
    }

    String describeLimits() {
        return maxCount + " writes / " + maxBytes + " bytes";
    }
}
