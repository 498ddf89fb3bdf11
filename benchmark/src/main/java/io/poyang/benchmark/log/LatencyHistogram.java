package io.poyang.benchmark.log;

/**
 * Latencies in microseconds, in log-linear buckets (64 per power of two, so about 1.5 % precision),
 * from 1 µs to about an hour. Not thread-safe; the log benchmark records on its dispatcher thread.
 */
final class LatencyHistogram {

    private static final int SUB_BITS = 6;
    private static final int SUB = 1 << SUB_BITS;
    private final long[] counts = new long[SUB * 40];
    private long total;
    private long maxMicros;

    void record(long micros, long count) {
        if (micros < 0) {
            micros = 0;
        }
        counts[bucketOf(micros)] += count;
        total += count;
        if (micros > maxMicros) {
            maxMicros = micros;
        }
    }

    private static int bucketOf(long v) {
        if (v < SUB) {
            return (int) v;
        }
        int exp = 63 - Long.numberOfLeadingZeros(v) - SUB_BITS + 1;
        int sub = (int) (v >>> exp) - SUB / 2;
        return Math.min(SUB + (exp - 1) * (SUB / 2) + sub, SUB * 40 - 1);
    }

    private static long valueOf(int bucket) {
        if (bucket < SUB) {
            return bucket;
        }
        int exp = (bucket - SUB) / (SUB / 2) + 1;
        int sub = (bucket - SUB) % (SUB / 2) + SUB / 2;
        return ((long) sub << exp) + (1L << exp) - 1;  // the top of the bucket
    }

    long count() {
        return total;
    }

    long maxMicros() {
        return maxMicros;
    }

    /** The latency at or below which {@code fraction} of the recorded values lie, in microseconds. */
    long percentileMicros(double fraction) {
        if (total == 0) {
            return 0;
        }
        long target = (long) Math.ceil(total * fraction);
        long seen = 0;
        for (int b = 0; b < counts.length; b++) {
            seen += counts[b];
            if (seen >= target) {
                return Math.min(valueOf(b), maxMicros);
            }
        }
        return maxMicros;
    }
}
