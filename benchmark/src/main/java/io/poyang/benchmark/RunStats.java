package io.poyang.benchmark;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a run has counted: outcomes (always, for the timeline) and the latencies of successful
 * operations while the measured window is open (not during warm-up or the final drain).
 */
public final class RunStats {

    private final LongAdder success = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder timeout = new LongAdder();
    private volatile LatencyHistogram histogram = new LatencyHistogram();
    private volatile boolean measuring;

    public void record(Outcome outcome, long latencyNanos) {
        switch (outcome) {
            case SUCCESS:
                success.increment();
                if (measuring) {
                    histogram.record(latencyNanos);
                }
                break;
            case TIMEOUT:
                timeout.increment();
                break;
            default:
                failed.increment();
                break;
        }
    }

    /**
     * Records {@code count} successful operations that took {@code latencyNanosEach} each, for
     * scenarios that count in batches (a per-operation atomic add would cost more than the
     * operation).
     */
    public void recordSuccesses(long count, long latencyNanosEach) {
        success.add(count);
        if (measuring) {
            histogram.record(latencyNanosEach, count);
        }
    }

    /** Opens the measured window with a fresh histogram. */
    public void startMeasuring() {
        histogram = new LatencyHistogram();
        measuring = true;
    }

    public void stopMeasuring() {
        measuring = false;
    }

    public LatencyHistogram histogram() {
        return histogram;
    }

    public Counts snapshot() {
        return new Counts(success.sum(), failed.sum(), timeout.sum());
    }

    /** Outcome counts at one moment; differences of two give a window. */
    public static final class Counts {
        public final long success;
        public final long failed;
        public final long timeout;

        public Counts(long success, long failed, long timeout) {
            this.success = success;
            this.failed = failed;
            this.timeout = timeout;
        }

        public Counts minus(Counts earlier) {
            return new Counts(success - earlier.success, failed - earlier.failed, timeout - earlier.timeout);
        }

        public long total() {
            return success + failed + timeout;
        }
    }
}
