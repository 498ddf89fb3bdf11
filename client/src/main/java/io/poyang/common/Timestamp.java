package io.poyang.common;

/**
 * A clock reading cached by its owner thread. Hot loops call {@link #refresh()} once per round
 * and then read {@link #nanoTime()} and {@link #wallClockMillis()} as often as they like without a
 * system call. Not thread safe: each thread (I/O worker, dispatcher) owns its own instance.
 */
public final class Timestamp {

    private final TimeSource source;
    private long nanoTime;
    private long wallClockMillis;

    public Timestamp() {
        this(TimeSource.SYSTEM);
    }

    public Timestamp(TimeSource source) {
        this.source = source;
        refresh();
    }

    /** Reads the clock again. */
    public void refresh() {
        nanoTime = source.nanoTime();
        wallClockMillis = source.wallClockMillis();
    }

    /** Reads only the monotonic clock again; cheaper when wall time is not needed. */
    public void refreshNanos() {
        nanoTime = source.nanoTime();
    }

    public long nanoTime() {
        return nanoTime;
    }

    public long wallClockMillis() {
        return wallClockMillis;
    }

    public TimeSource source() {
        return source;
    }
}
