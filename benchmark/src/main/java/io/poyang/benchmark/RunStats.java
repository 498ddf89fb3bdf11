package io.poyang.benchmark;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a run has counted: outcomes (always, for the timeline), failures and timeouts by cause, and
 * the latencies of successful operations while the measured window is open (not during warm-up or
 * the final drain). Written from the threads that complete operations, read by the run's thread.
 */
public final class RunStats {

    private final LongAdder success = new LongAdder();
    /**
     * Failures and timeouts are counted only by cause; their totals are the sums of one reading of
     * these counters, so a snapshot's causes always add up to its failed and timeout counts.
     */
    private final FailureCauses failed = new FailureCauses();
    private final FailureCauses timedOut = new FailureCauses();
    private volatile LatencyHistogram histogram = new LatencyHistogram();
    private volatile boolean measuring;

    /** One successful operation that took {@code latencyNanos} from issue to completion. Allocates nothing. */
    public void recordSuccess(long latencyNanos) {
        success.increment();
        if (measuring) {
            histogram.record(latencyNanos);
        }
    }

    /**
     * One operation that failed or timed out ({@code outcome}), counted under {@code cause} (see
     * {@link FailureCause#of}), so the report can say why.
     */
    public void recordFailure(Outcome outcome, String cause) {
        switch (outcome) {
            case TIMEOUT:
                timedOut.record(cause);
                break;
            case FAILED:
                failed.record(cause);
                break;
            default:
                throw new IllegalArgumentException("a failure is FAILED or TIMEOUT, not " + outcome);
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

    /** Taken once a second for the timeline: copies the cause counters, a handful of entries. */
    public Counts snapshot() {
        Map<String, Long> failedByCause = failed.snapshot();
        Map<String, Long> timedOutByCause = timedOut.snapshot();
        return new Counts(success.sum(), FailureCauses.total(failedByCause), FailureCauses.total(timedOutByCause),
                FailureCauses.plus(failedByCause, timedOutByCause));
    }

    /** Outcome counts at one moment; differences of two give a window. */
    public static final class Counts {
        public final long success;
        public final long failed;
        public final long timeout;
        /** The failed and timed-out operations by cause: they add up to failed + timeout. */
        public final Map<String, Long> causes;

        Counts(long success, long failed, long timeout, Map<String, Long> causes) {
            this.success = success;
            this.failed = failed;
            this.timeout = timeout;
            this.causes = causes;
        }

        public Counts minus(Counts earlier) {
            return new Counts(success - earlier.success, failed - earlier.failed, timeout - earlier.timeout,
                    FailureCauses.minus(causes, earlier.causes));
        }

        public long total() {
            return success + failed + timeout;
        }
    }
}
