package io.poyang.common;

/**
 * Counts durations into fixed buckets (50 µs to 10 s, roughly 1-2.5-5 steps), for metrics on hot
 * paths: {@link #record} is a few comparisons and two additions on plain fields, with no allocation
 * and no atomics. It has <b>one writing thread</b> (the one owning the measured work, e.g. a raft
 * group's dispatcher); any thread may read it racily for metrics, seeing each field as of some
 * recent moment (the fields are not a consistent snapshot, which a scrape does not need).
 */
public final class DurationHistogram {

    /** Upper bounds of the buckets in nanoseconds, ascending; a last bucket above them has no bound. */
    private static final long[] BOUNDS_NANOS = {
            50_000L, 100_000L, 250_000L, 500_000L,
            1_000_000L, 2_500_000L, 5_000_000L,
            10_000_000L, 25_000_000L, 50_000_000L,
            100_000_000L, 250_000_000L, 500_000_000L,
            1_000_000_000L, 2_500_000_000L, 5_000_000_000L, 10_000_000_000L};

    private final long[] counts = new long[BOUNDS_NANOS.length + 1];
    private long count;
    private long sumNanos;

    /** Counts one duration (negative ones count as 0). Owning thread only. */
    public void record(long nanos) {
        long d = nanos < 0 ? 0 : nanos;
        int i = 0;
        while (i < BOUNDS_NANOS.length && d > BOUNDS_NANOS[i]) {
            i++;
        }
        counts[i]++;
        count++;
        sumNanos += d;
    }

    /** How many bucket bounds there are (the buckets are one more: the last has no upper bound). */
    public static int boundCount() {
        return BOUNDS_NANOS.length;
    }

    /** Upper bound of bucket {@code i} in seconds, for i below {@link #boundCount()}. */
    public static double boundSeconds(int i) {
        return BOUNDS_NANOS[i] / 1e9;
    }

    /** Durations counted in bucket {@code i} alone (not cumulative); i up to {@link #boundCount()}. */
    public long bucketCount(int i) {
        return counts[i];
    }

    public long count() {
        return count;
    }

    public long sumNanos() {
        return sumNanos;
    }
}
