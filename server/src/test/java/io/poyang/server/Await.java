package io.poyang.server;

import java.util.concurrent.TimeUnit;

/**
 * Waits in tests for a condition with a deadline: polls it every {@link #POLL_MILLIS} ms and fails
 * with what was awaited when the deadline passes. The one polling loop of the server tests.
 */
public final class Await {

    /** How often a condition is checked; short next to the timeouts, long next to a check's cost. */
    static final long POLL_MILLIS = 10;

    /** A check that may throw (an HTTP call to a node, a file read). */
    @FunctionalInterface
    public interface Probe<T> {
        /** The awaited value, or null while it is not there yet. */
        T get() throws Exception;
    }

    /** A condition that may throw. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    private Await() {
    }

    /** Returns once {@code condition} holds; an exception from it fails the wait at once. */
    public static void until(String what, long timeoutMillis, Condition condition) throws Exception {
        value(what, timeoutMillis, () -> condition.holds() ? Boolean.TRUE : null);
    }

    /** The first non-null value of {@code probe}; an exception from it fails the wait at once. */
    public static <T> T value(String what, long timeoutMillis, Probe<T> probe) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            T v = probe.get();
            if (v != null) {
                return v;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeoutMillis + " ms waiting for " + what);
            }
            Thread.sleep(POLL_MILLIS);   // poll interval of a deadline-bound wait, not a synchronisation
        }
    }
}
