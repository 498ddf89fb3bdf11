package io.poyang.benchmark;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts latencies in log-linear buckets: exact below 256 ns, then 128 buckets per power of two,
 * so every bucket is within 1/128 (under 0.8 %) of the values it holds, from nanoseconds up to
 * about 18 minutes (larger values land in the last bucket; the max is kept exactly). Percentiles
 * come from the counts, never from a list of samples, so memory stays fixed (35 KB) however long
 * the run. Recording is thread safe and lock-free: one atomic add per value.
 */
public final class LatencyHistogram {

    private static final int SUB_BITS = 7;
    private static final int SUB_COUNT = 1 << SUB_BITS;
    /** Values up to 2^40 ns (about 18 minutes) get their own bucket. */
    private static final int MAX_EXPONENT = 40;
    static final int BUCKETS = (MAX_EXPONENT - SUB_BITS + 1) * SUB_COUNT;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong max = new AtomicLong();

    static int indexOf(long nanos) {
        if (nanos < 2 * SUB_COUNT) {
            return (int) Math.max(0, nanos);
        }
        int exponent = 63 - Long.numberOfLeadingZeros(nanos);
        int shift = exponent - SUB_BITS;
        int index = (shift + 1) * SUB_COUNT + (int) ((nanos >>> shift) - SUB_COUNT);
        return Math.min(index, BUCKETS - 1);
    }

    /** The smallest value that falls in bucket {@code index}. */
    static long lowerBound(int index) {
        if (index < 2 * SUB_COUNT) {
            return index;
        }
        int shift = index / SUB_COUNT - 1;
        return ((long) (index % SUB_COUNT) + SUB_COUNT) << shift;
    }

    /** The width of bucket {@code index}. */
    static long width(int index) {
        return index < 2 * SUB_COUNT ? 1 : 1L << (index / SUB_COUNT - 1);
    }

    public void record(long nanos) {
        record(nanos, 1);
    }

    /** Records {@code count} values equal to {@code nanos}. */
    public void record(long nanos, long count) {
        counts.addAndGet(indexOf(nanos), count);
        total.addAndGet(count);
        long m = max.get();
        while (nanos > m && !max.compareAndSet(m, nanos)) {
            m = max.get();
        }
    }

    public long count() {
        return total.get();
    }

    public long maxNanos() {
        return max.get();
    }

    /**
     * The value at or below which {@code fraction} (0..1) of the recorded values fall: the middle of
     * the bucket holding that rank, never above the max. 0 when nothing was recorded.
     */
    public long percentileNanos(double fraction) {
        long n = total.get();
        if (n == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(fraction * n));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts.get(i);
            if (seen >= rank) {
                long mid = lowerBound(i) + (width(i) - 1) / 2;
                return Math.min(mid, max.get());
            }
        }
        return max.get();
    }
}
