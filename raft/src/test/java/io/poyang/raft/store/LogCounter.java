package io.poyang.raft.store;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Counts the warnings and errors (or, when asked, every record from INFO up) logged under io.poyang
 * while a test runs (a retry loop that warns at every attempt shows as thousands). Keyed by the
 * first 60 characters of each message. Public for the cluster tests of other packages.
 */
public final class LogCounter extends Handler implements AutoCloseable {
    private final Logger root = Logger.getLogger("io.poyang");
    public final AtomicLong warnings = new AtomicLong();
    public final Map<String, AtomicLong> byMessage = new ConcurrentHashMap<>();
    /** The whole messages, the first {@link #KEPT} of them. */
    public final Queue<String> messages = new ConcurrentLinkedQueue<>();
    private static final int KEPT = 10_000;

    private final int least;

    public LogCounter() {
        this(Level.WARNING);
    }

    /** Counts the records at {@code least} or above ({@link #warnings} then counts all of them). */
    public LogCounter(Level least) {
        this.least = least.intValue();
        root.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= least) {
            warnings.incrementAndGet();
            String m = String.valueOf(r.getMessage());
            byMessage.computeIfAbsent(m.substring(0, Math.min(60, m.length())), k -> new AtomicLong())
                    .incrementAndGet();
            if (warnings.get() <= KEPT) {
                messages.add(m);
            }
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        root.removeHandler(this);
    }
}
