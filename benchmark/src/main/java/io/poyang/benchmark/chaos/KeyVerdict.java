package io.poyang.benchmark.chaos;

import java.util.Locale;

/** The checker's answer for one key, with the figures of its search and, when it failed, the failing window. */
public final class KeyVerdict {

    private final String key;
    private final Verdict verdict;
    private final int acknowledged;
    private final int unknownWrites;
    private final int unknownReads;
    private final int failed;
    private final long configurations;
    private final long elapsedNanos;
    private final FailingWindow window;
    private final String inconclusiveReason;

    KeyVerdict(KeyHistory h, Verdict verdict, long configurations, long elapsedNanos, FailingWindow window,
               String inconclusiveReason) {
        this.key = h.key;
        this.verdict = verdict;
        this.acknowledged = h.definite.length;
        this.unknownWrites = h.unknownWrites.length;
        this.unknownReads = h.unknownReadCount;
        this.failed = h.failedCount;
        this.configurations = configurations;
        this.elapsedNanos = elapsedNanos;
        this.window = window;
        this.inconclusiveReason = inconclusiveReason;
    }

    public String key() {
        return key;
    }

    public Verdict verdict() {
        return verdict;
    }

    /** The failing window when the verdict is {@link Verdict#NOT_LINEARIZABLE}, else null. */
    public FailingWindow window() {
        return window;
    }

    /** Acknowledged operations of the key (all checked). */
    public int acknowledged() {
        return acknowledged;
    }

    /** Unknown-outcome writes of the key (checked as "may have taken effect, or not"). */
    public int unknownWrites() {
        return unknownWrites;
    }

    /** Search configurations explored for the verdict (the failing window's search not counted). */
    public long configurations() {
        return configurations;
    }

    public long elapsedNanos() {
        return elapsedNanos;
    }

    /** One line: the key, the verdict and the figures. */
    public String summary() {
        String what = verdict == Verdict.LINEARIZABLE ? "linearizable"
                : verdict == Verdict.NOT_LINEARIZABLE ? "NOT LINEARIZABLE" : "INCONCLUSIVE (" + inconclusiveReason + ")";
        return String.format(Locale.ROOT, "key %s: %s; %,d acknowledged, %,d unknown writes, %,d unknown reads and "
                        + "%,d failed (both left out); %,d configurations, %.1f ms",
                HistoryLine.quote(key), what, acknowledged, unknownWrites, unknownReads, failed, configurations,
                elapsedNanos / 1e6);
    }
}
