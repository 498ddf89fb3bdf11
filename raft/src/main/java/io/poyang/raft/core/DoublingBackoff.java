package io.poyang.raft.core;

import java.util.concurrent.TimeUnit;

/**
 * The pauses between attempts that keep failing: the first pause after a failure, then twice the
 * last one each time, up to a cap; a success (or a {@link #reset}) ends the run of failures. Times
 * are on one monotonic nanosecond clock (the dispatcher's). Not thread-safe: one owner.
 */
final class DoublingBackoff {

    private final long firstPauseMillis;
    private final long maxPauseMillis;
    /** The pause after the last failure; 0 when the last attempt did not fail. */
    private long pauseMillis;
    private long nextAttemptNanos;
    private int failuresInRow;

    DoublingBackoff(long firstPauseMillis, long maxPauseMillis) {
        if (firstPauseMillis < 1 || maxPauseMillis < firstPauseMillis) {
            throw new IllegalArgumentException("a backoff pauses at least 1 ms, at most as long as its cap: first "
                    + firstPauseMillis + " ms, cap " + maxPauseMillis + " ms");
        }
        this.firstPauseMillis = firstPauseMillis;
        this.maxPauseMillis = maxPauseMillis;
    }

    /** Whether an attempt may be made at {@code nowNanos}: no failure pending, or its pause is over. */
    boolean mayTry(long nowNanos) {
        return failuresInRow == 0 || nowNanos - nextAttemptNanos >= 0;
    }

    /** An attempt failed at {@code nowNanos}; returns the failures in a row, this one included. */
    int onFailure(long nowNanos) {
        pauseMillis = pauseMillis == 0 ? firstPauseMillis : Math.min(maxPauseMillis, pauseMillis * 2);
        nextAttemptNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(pauseMillis);
        return ++failuresInRow;
    }

    /** An attempt succeeded; returns how many failed before it in a row (0: none). */
    int onSuccess() {
        int failed = failuresInRow;
        reset();
        return failed;
    }

    /** Forgets the failures (what is tried has changed). */
    void reset() {
        failuresInRow = 0;
        pauseMillis = 0;
    }

    /** The pause after the last failure, in ms; 0 when none is pending. */
    long pauseMillis() {
        return pauseMillis;
    }
}
