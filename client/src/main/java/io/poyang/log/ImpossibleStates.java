package io.poyang.log;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Reports of states the code believes cannot happen. Each report is logged at error level with a
 * stack trace and counted; tests assert the count stays zero, so a silent invariant breach fails
 * the build instead of hiding in a log file.
 */
public final class ImpossibleStates {

    private static final PoyangLog log = PoyangLogs.get(ImpossibleStates.class);
    private static final AtomicLong count = new AtomicLong();

    private ImpossibleStates() {
    }

    /** Logs the state (with {@code {}} placeholders) and counts it. Never throws. */
    public static void report(String format, Object... args) {
        count.incrementAndGet();
        if (args != null && args.length > 0 && args[args.length - 1] instanceof Throwable) {
            log.error("IMPOSSIBLE STATE: " + format, args);
            return;
        }
        Object[] withTrace = new Object[args == null ? 1 : args.length + 1];
        if (args != null) {
            System.arraycopy(args, 0, withTrace, 0, args.length);
        }
        withTrace[withTrace.length - 1] = new IllegalStateException("impossible state");
        log.error("IMPOSSIBLE STATE: " + format, withTrace);
    }

    /** The number of reports since the JVM started or since the last {@link #reset()}. */
    public static long count() {
        return count.get();
    }

    /** For tests: forget earlier reports. */
    public static void reset() {
        count.set(0);
    }
}
