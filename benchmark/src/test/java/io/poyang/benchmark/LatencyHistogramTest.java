package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

class LatencyHistogramTest {

    @Test
    void everyValueFallsInsideItsBucketAndBucketsAreNarrow() {
        Random r = new Random(3);
        for (int i = 0; i < 200_000; i++) {
            long v = i < 1000 ? i : (long) Math.exp(r.nextDouble() * Math.log(600e9));
            int idx = LatencyHistogram.indexOf(v);
            long lo = LatencyHistogram.lowerBound(idx);
            long w = LatencyHistogram.width(idx);
            assertTrue(lo <= v && v < lo + w, v + " not in [" + lo + ", " + (lo + w) + ")");
            assertTrue(w == 1 || (double) w / lo <= 1.0 / 128 + 1e-12, "bucket of " + v + " too wide: " + w);
        }
        // contiguous: each bucket starts where the previous one ends
        for (int i = 1; i < LatencyHistogram.BUCKETS; i++) {
            assertEquals(LatencyHistogram.lowerBound(i - 1) + LatencyHistogram.width(i - 1), LatencyHistogram.lowerBound(i));
        }
    }

    @Test
    void percentilesAreWithinOnePercentOfTheExactOnes() {
        LatencyHistogram h = new LatencyHistogram();
        Random r = new Random(11);
        int n = 1_000_000;
        long[] exact = new long[n];
        for (int i = 0; i < n; i++) {
            // a skewed, latency-like distribution: mostly ~1 ms with a long tail to seconds
            long v = (long) (1_000_000 * Math.exp(r.nextGaussian() * 0.8));
            exact[i] = v;
            h.record(v);
        }
        Arrays.sort(exact);
        for (double p : new double[]{0.5, 0.95, 0.99, 0.999}) {
            long want = exact[(int) Math.ceil(p * n) - 1];
            long got = h.percentileNanos(p);
            assertEquals(want, got, want * 0.01, "p" + p);
        }
        assertEquals(exact[n - 1], h.maxNanos());
        assertEquals(n, h.count());
    }

    @Test
    void emptyAndHugeValues() {
        LatencyHistogram h = new LatencyHistogram();
        assertEquals(0, h.percentileNanos(0.99));
        h.record(3_600_000_000_000L); // an hour: past the last bucket, kept as the max
        assertEquals(3_600_000_000_000L, h.maxNanos());
        assertTrue(h.percentileNanos(0.5) > 500_000_000_000L);
        h.record(-5); // a clock oddity must not break anything
        assertEquals(2, h.count());
    }
}
