package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** The checker's answer for a whole history: one {@link KeyVerdict} per key, and the overall verdict. */
public final class CheckReport {

    /** Failing windows printed at most; the other failing keys are only named. */
    static final int MAX_WINDOWS_PRINTED = 5;

    private final List<KeyVerdict> keys;
    private final long operations;
    private final long elapsedNanos;

    CheckReport(List<KeyVerdict> keys, long operations, long elapsedNanos) {
        this.keys = Collections.unmodifiableList(new ArrayList<>(keys));
        this.operations = operations;
        this.elapsedNanos = elapsedNanos;
    }

    /** NOT_LINEARIZABLE if any key is, else INCONCLUSIVE if any key is, else LINEARIZABLE. */
    public Verdict verdict() {
        Verdict v = Verdict.LINEARIZABLE;
        for (KeyVerdict k : keys) {
            if (k.verdict() == Verdict.NOT_LINEARIZABLE) {
                return Verdict.NOT_LINEARIZABLE;
            }
            if (k.verdict() == Verdict.INCONCLUSIVE) {
                v = Verdict.INCONCLUSIVE;
            }
        }
        return v;
    }

    /** Per-key verdicts, by key. */
    public List<KeyVerdict> keys() {
        return keys;
    }

    /** The verdict of {@code key}, or null if the history has no operation on it. */
    public KeyVerdict key(String key) {
        for (KeyVerdict k : keys) {
            if (k.key().equals(key)) {
                return k;
            }
        }
        return null;
    }

    /** Keys with the given verdict. */
    public List<KeyVerdict> keys(Verdict verdict) {
        List<KeyVerdict> out = new ArrayList<>();
        for (KeyVerdict k : keys) {
            if (k.verdict() == verdict) {
                out.add(k);
            }
        }
        return out;
    }

    public long elapsedNanos() {
        return elapsedNanos;
    }

    /**
     * The report: with {@code everyKey}, a line per key; otherwise lines only for keys that did not pass. Then the
     * failing windows, then one verdict line last.
     */
    public String format(boolean everyKey) {
        StringBuilder b = new StringBuilder();
        for (KeyVerdict k : keys) {
            if (everyKey || k.verdict() != Verdict.LINEARIZABLE) {
                b.append(k.summary()).append('\n');
            }
        }
        List<KeyVerdict> failing = keys(Verdict.NOT_LINEARIZABLE);
        for (int i = 0; i < failing.size() && i < MAX_WINDOWS_PRINTED; i++) {
            FailingWindow window = failing.get(i).window();
            b.append('\n').append(window != null ? window.format()
                    : "key " + HistoryLine.quote(failing.get(i).key()) + ": NOT LINEARIZABLE (no failing window found)\n");
        }
        if (failing.size() > MAX_WINDOWS_PRINTED) {
            b.append("\n(").append(failing.size() - MAX_WINDOWS_PRINTED).append(" more failing keys not shown)\n");
        }
        if (!failing.isEmpty()) {
            b.append('\n');
        }
        b.append(verdictLine()).append('\n');
        return b.toString();
    }

    /** The one-line verdict. */
    public String verdictLine() {
        double seconds = elapsedNanos / 1e9;
        switch (verdict()) {
            case LINEARIZABLE:
                return String.format(Locale.ROOT, "linearizable: %s (%,d operations) in %.2f s",
                        keys.size() == 1 ? "the one key" : "all " + String.format(Locale.ROOT, "%,d", keys.size()) + " keys",
                        operations, seconds);
            case NOT_LINEARIZABLE: {
                List<String> names = new ArrayList<>();
                for (KeyVerdict k : keys(Verdict.NOT_LINEARIZABLE)) {
                    names.add(HistoryLine.quote(k.key()));
                }
                return String.format(Locale.ROOT, "NOT LINEARIZABLE: %,d of %,d keys (%s); %,d operations checked in %.2f s",
                        names.size(), keys.size(), abbreviate(names), operations, seconds);
            }
            default: {
                List<String> names = new ArrayList<>();
                for (KeyVerdict k : keys(Verdict.INCONCLUSIVE)) {
                    names.add(HistoryLine.quote(k.key()));
                }
                return String.format(Locale.ROOT, "INCONCLUSIVE: the search budget ran out on %,d of %,d keys (%s), "
                                + "the others are linearizable; raise --max-states or --max-time to finish them",
                        names.size(), keys.size(), abbreviate(names));
            }
        }
    }

    private static String abbreviate(List<String> names) {
        if (names.size() <= 10) {
            return String.join(", ", names);
        }
        return String.join(", ", names.subList(0, 10)) + ", ...";
    }
}
