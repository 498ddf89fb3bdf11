package io.poyang.common;

import java.util.concurrent.TimeUnit;

/** A {@link TimeSource} that only moves when told to; thread safe. For tests. */
public final class ManualTimeSource implements TimeSource {

    private volatile long nanoTime;
    private volatile long wallClockMillis;

    public ManualTimeSource() {
        this(1_000_000_000L, 1_700_000_000_000L);
    }

    public ManualTimeSource(long startNanoTime, long startWallClockMillis) {
        this.nanoTime = startNanoTime;
        this.wallClockMillis = startWallClockMillis;
    }

    @Override
    public long nanoTime() {
        return nanoTime;
    }

    @Override
    public long wallClockMillis() {
        return wallClockMillis;
    }

    /** Moves both clocks forward by the given amount. */
    public synchronized void advance(long amount, TimeUnit unit) {
        if (amount < 0) {
            throw new IllegalArgumentException("time only moves forward, got " + amount + " " + unit);
        }
        nanoTime += unit.toNanos(amount);
        wallClockMillis += unit.toMillis(amount);
    }
}
