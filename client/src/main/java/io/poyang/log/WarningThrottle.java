package io.poyang.log;

/**
 * Decides which occurrences of a repeating failure are logged: the first of a run at once, then at
 * most one per interval, carrying the count of those not logged in between. A run ends when the
 * failing thing works again ({@link #endRun}). Without it a failure that repeats on every accept or
 * every write in flight (a full disk, no file descriptors left) buries the log in stack traces.
 *
 * <p>Not thread-safe: one thread owns it (an acceptor thread, a log store's dispatcher).
 */
public final class WarningThrottle {

    private final long intervalNanos;
    private long runLength;
    private long notLogged;
    private long lastLoggedNanos;
    // what the logged occurrence reports: the count skipped before it, the time since the previous one
    private long lastNotLogged;
    private long lastInterval;

    /** @param intervalNanos the least time between two logged occurrences of one run */
    public WarningThrottle(long intervalNanos) {
        if (intervalNanos < 0) {
            throw new IllegalArgumentException("intervalNanos must be >= 0, was " + intervalNanos);
        }
        this.intervalNanos = intervalNanos;
    }

    /**
     * Counts one occurrence at {@code nowNanos} ({@link System#nanoTime()}). True when it is to be
     * logged: the first of a run, or the first after an interval. Then {@link #isFirstOfRun()} and
     * {@link #notLoggedBefore()} describe it.
     */
    public boolean occurred(long nowNanos) {
        runLength++;
        if (runLength == 1 || nowNanos - lastLoggedNanos >= intervalNanos) {
            lastNotLogged = notLogged;
            lastInterval = runLength == 1 ? 0 : nowNanos - lastLoggedNanos;
            notLogged = 0;
            lastLoggedNanos = nowNanos;
            return true;
        }
        notLogged++;
        return false;
    }

    /** Whether the occurrence just logged began a run. */
    public boolean isFirstOfRun() {
        return runLength == 1;
    }

    /** How many occurrences were not logged between the previous logged one and the one just logged. */
    public long notLoggedBefore() {
        return lastNotLogged;
    }

    /** Nanoseconds from the previous logged occurrence to the one just logged (0 for the first of a run). */
    public long nanosSinceLastLogged() {
        return lastInterval;
    }

    /** Whether failures have occurred since the last {@link #endRun}. Cheap enough for a hot path. */
    public boolean inRun() {
        return runLength != 0;
    }

    /** The failing thing works again: returns the number of occurrences of the run that ended (0 if none). */
    public long endRun() {
        long n = runLength;
        runLength = 0;
        notLogged = 0;
        return n;
    }
}
