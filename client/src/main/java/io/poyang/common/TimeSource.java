package io.poyang.common;

/**
 * Where time comes from. Production code uses {@link #SYSTEM}; tests that depend on timing (leases,
 * election timeouts, TTLs) pass a {@link ManualTimeSource} and move time by hand.
 */
public interface TimeSource {

    /** A monotonic clock in nanoseconds, like {@link System#nanoTime()}. */
    long nanoTime();

    /** Wall-clock time in milliseconds since the epoch, like {@link System#currentTimeMillis()}. */
    long wallClockMillis();

    TimeSource SYSTEM = new TimeSource() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public long wallClockMillis() {
            return System.currentTimeMillis();
        }

        @Override
        public String toString() {
            return "TimeSource.SYSTEM";
        }
    };
}
