package io.poyang.benchmark;

import java.util.function.Supplier;

/**
 * Server-side counters (fsyncs, batches, reads of some kind) read when the measured window starts
 * and when it ends, so that a scenario's per-second figures cover the same seconds as its ops/s:
 * not the warm-up, in which the JIT, the disk's burst and the leaders' first elections make the
 * rates different, and not the drain after the end.
 */
public final class CounterWindow {
    private final Supplier<long[]> counters;
    private long[] atStart;
    private long startNanos;
    private long[] atEnd;
    private long endNanos;

    /** {@code counters} returns the running totals, always in the same order and length. */
    public CounterWindow(Supplier<long[]> counters) {
        this.counters = counters;
    }

    /** Called when the measured window starts. */
    public void start() {
        atStart = counters.get();
        startNanos = System.nanoTime();
    }

    /** Called when the measured window ends. */
    public void end() {
        atEnd = counters.get();
        endNanos = System.nanoTime();
    }

    /** True once both ends of the window were read. */
    public boolean complete() {
        return atStart != null && atEnd != null && endNanos - startNanos > 0;
    }

    /** How much counter {@code i} grew over the window; call only when {@link #complete()}. */
    public long delta(int i) {
        if (!complete()) {
            throw new IllegalStateException("the measured window was not read at both ends");
        }
        return atEnd[i] - atStart[i];
    }

    /** Counter {@code i} per second over the window, rounded; call only when {@link #complete()}. */
    public long perSecond(int i) {
        if (!complete()) {
            throw new IllegalStateException("the measured window was not read at both ends");
        }
        return Math.round((atEnd[i] - atStart[i]) / ((endNanos - startNanos) / 1e9));
    }
}
