package io.poyang.benchmark;

import io.poyang.server.Json;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The totals of a run, printed as a table or as one JSON object (DESIGN §10). Every op prints the
 * same shape; op-specific figures go in {@link #extras}.
 */
public final class Report {

    public String op;
    public int nodes;
    public int groups;
    public int clients;
    public int maxPending;
    public int valueSize;
    public String mode;
    public double durationSeconds;
    public double warmupSeconds;
    public long success;
    public long failed;
    public long timeout;
    /** Operations in flight at the end of the measured window that failed or timed out while they drained. */
    public long drainFailed;
    public long drainTimeout;
    /** False when some operations had not ended when the drain gave up. */
    public boolean drained = true;
    /**
     * Why the failed and timed-out operations of the measured window failed: count by cause
     * ({@link FailureCause}); the report shows the {@link #SHOWN_CAUSES} most frequent.
     */
    public Map<String, Long> failureCauses = new LinkedHashMap<>();
    /** The same for those that failed or timed out while the last ones drained. */
    public Map<String, Long> drainFailureCauses = new LinkedHashMap<>();
    public double p50Ms;
    public double p95Ms;
    public double p99Ms;
    public double p999Ms;
    public double maxMs;
    /**
     * Successful ops/s in the first and the second half of the measured time, NaN when unknown (0 is
     * a measured half in which nothing succeeded). A run whose halves differ much was not steady:
     * still warming up, stalled at first, or slowed down as it went.
     */
    public double firstHalfOpsPerSecond = Double.NaN;
    public double secondHalfOpsPerSecond = Double.NaN;
    public final Map<String, Object> extras = new LinkedHashMap<>();

    /** How far the halves may differ, in percent of the first, before the report says the run was not steady. */
    static final double UNSTEADY_PERCENT = 20;
    /** Causes shown by name, most frequent first; the others are summed as "other". */
    static final int SHOWN_CAUSES = 5;

    public double opsPerSecond() {
        return durationSeconds <= 0 ? 0 : success / durationSeconds;
    }

    /** Whether both halves were measured ({@link #firstHalfOpsPerSecond}). */
    public boolean halvesKnown() {
        return !Double.isNaN(firstHalfOpsPerSecond) && !Double.isNaN(secondHalfOpsPerSecond);
    }

    /**
     * The second half's rate against the first's, in percent (+25 = 25 % faster in the second
     * half): +infinity when nothing succeeded in the first half and something did in the second
     * (a stall at the start), NaN when the halves are unknown or nothing succeeded in either.
     */
    public double secondHalfChangePercent() {
        if (!halvesKnown() || firstHalfOpsPerSecond == 0 && secondHalfOpsPerSecond == 0) {
            return Double.NaN;
        }
        if (firstHalfOpsPerSecond == 0) {
            return Double.POSITIVE_INFINITY;
        }
        return (secondHalfOpsPerSecond / firstHalfOpsPerSecond - 1) * 100;
    }

    /**
     * False when the halves differ by {@link #UNSTEADY_PERCENT} or more of the first (or the first
     * had no success and the second had some); true when they are within it, or both empty (no
     * figure to be unsteady about: the counts say what went wrong).
     */
    public boolean steady() {
        double change = secondHalfChangePercent();
        return Double.isNaN(change) || Math.abs(change) < UNSTEADY_PERCENT;
    }

    public void latencies(LatencyHistogram h) {
        p50Ms = ms(h.percentileNanos(0.50));
        p95Ms = ms(h.percentileNanos(0.95));
        p99Ms = ms(h.percentileNanos(0.99));
        p999Ms = ms(h.percentileNanos(0.999));
        maxMs = ms(h.maxNanos());
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    public String toTable() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n== %s: %s, nodes %d, groups %d, clients %d, value-size %d ==%n",
                op, mode, nodes, groups, clients, valueSize));
        row(sb, "measured", String.format(Locale.ROOT, "%.1f s (after %.1f s of warm-up)", durationSeconds, warmupSeconds));
        row(sb, "ops/s", String.format(Locale.ROOT, "%,.0f", opsPerSecond()));
        row(sb, "success", String.format(Locale.ROOT, "%,d", success));
        row(sb, "failed", String.format(Locale.ROOT, "%,d", failed));
        row(sb, "timeout", String.format(Locale.ROOT, "%,d", timeout));
        if (!failureCauses.isEmpty()) {
            row(sb, "causes", causesText(failureCauses));
        }
        row(sb, "latency ms", String.format(Locale.ROOT, "p50 %s  p95 %s  p99 %s  p99.9 %s  max %s",
                fmt(p50Ms), fmt(p95Ms), fmt(p99Ms), fmt(p999Ms), fmt(maxMs)));
        for (Map.Entry<String, Object> e : extras.entrySet()) {
            // null: a figure the run could not measure (JSON null)
            row(sb, e.getKey(), e.getValue() == null ? "unknown" : String.valueOf(e.getValue()));
        }
        double change = secondHalfChangePercent();
        if (halvesKnown()) {
            row(sb, "halves", String.format(Locale.ROOT, "%,.0f then %,.0f ops/s", firstHalfOpsPerSecond, secondHalfOpsPerSecond)
                    + (Double.isFinite(change) ? String.format(Locale.ROOT, " (%+.0f %%)", change) : ""));
            if (change == Double.POSITIVE_INFINITY) {
                sb.append(String.format(Locale.ROOT, "  NOT STEADY: no operation succeeded in the first half of the measured"
                        + " time; the cluster made no progress for a while (a leader election, nodes still starting, a"
                        + " pause) and ops/s averages over that stall%n"));
            } else if (change >= UNSTEADY_PERCENT) {
                sb.append(String.format(Locale.ROOT, "  NOT STEADY: the second half ran %.0f %% faster than the first;"
                        + " the processes were still warming up (JIT compilation, caches). A longer --warmup"
                        + " (e.g. 15s with three nodes) gives the steady figure%n", change));
            } else if (change <= -UNSTEADY_PERCENT) {
                sb.append(String.format(Locale.ROOT, "  NOT STEADY: the second half ran %.0f %% slower than the first;"
                        + " something slowed the run down as it went (disk bandwidth after a burst, collections,"
                        + " other load on the machine)%n", -change));
            }
        }
        if (failed + timeout > 0) {
            // Said in words too: a run with failures is not a clean figure, whatever its ops/s.
            sb.append(String.format(Locale.ROOT, "  NOT CLEAN: %,d operations failed and %,d timed out in the measured"
                    + " window; ops/s counts successes only%n", failed, timeout));
        }
        if (drainFailed + drainTimeout > 0 || !drained) {
            sb.append(String.format(Locale.ROOT, "  NOT CLEAN: of the operations in flight at the end, %,d failed and"
                    + " %,d timed out%s%s%n", drainFailed, drainTimeout, drained ? "" : ", and some never ended",
                    drainFailureCauses.isEmpty() ? "" : " (" + causesText(drainFailureCauses) + ")"));
        }
        return sb.toString();
    }

    /** "NetConnectionException 12, KvException NOT_FOUND 3, other 1": the most frequent causes first. */
    private static String causesText(Map<String, Long> causes) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Long> e : FailureCauses.top(causes, SHOWN_CAUSES).entrySet()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(e.getKey()).append(' ').append(String.format(Locale.ROOT, "%,d", e.getValue()));
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String name, String value) {
        sb.append(String.format(Locale.ROOT, "  %-12s %s%n", name, value));
    }

    /**
     * Latencies in the table: to the microsecond below 10 ms, to the nanosecond below 10 µs (fiber
     * switches take tens of nanoseconds: "0.000" would say nothing).
     */
    private static String fmt(double ms) {
        return String.format(Locale.ROOT, ms < 0.01 ? "%.6f" : ms < 10 ? "%.3f" : "%.1f", ms);
    }

    /** Latencies in JSON, in ms to the nanosecond (the histogram's resolution at its low end). */
    private static final int LATENCY_DECIMALS = 6;

    /** One JSON object on one line. */
    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("nodes", nodes);
        m.put("groups", groups);
        m.put("clients", clients);
        m.put("max_pending", maxPending);
        m.put("value_size", valueSize);
        m.put("mode", mode);
        m.put("duration_s", round(durationSeconds, 3));
        m.put("warmup_s", round(warmupSeconds, 3));
        m.put("ops_per_sec", round(opsPerSecond(), 1));
        m.put("success", success);
        m.put("failed", failed);
        m.put("timeout", timeout);
        m.put("drain_failed", drainFailed);
        m.put("drain_timeout", drainTimeout);
        m.put("drained", drained);
        // next to the counts they explain; always there (empty when none failed), so scripts need not test for the key
        m.put("failure_causes", FailureCauses.top(failureCauses, SHOWN_CAUSES));
        m.put("drain_failure_causes", FailureCauses.top(drainFailureCauses, SHOWN_CAUSES));
        m.put("p50_ms", round(p50Ms, LATENCY_DECIMALS));
        m.put("p95_ms", round(p95Ms, LATENCY_DECIMALS));
        m.put("p99_ms", round(p99Ms, LATENCY_DECIMALS));
        m.put("p999_ms", round(p999Ms, LATENCY_DECIMALS));
        m.put("max_ms", round(maxMs, LATENCY_DECIMALS));
        if (halvesKnown()) {
            double change = secondHalfChangePercent();
            m.put("first_half_ops_per_sec", round(firstHalfOpsPerSecond, 1));
            m.put("second_half_ops_per_sec", round(secondHalfOpsPerSecond, 1));
            // null when there is no finite change: nothing in the first half (then "steady" is false), or in either
            m.put("second_half_change_pct", Double.isFinite(change) ? round(change, 1) : null);
            m.put("steady", steady());
        }
        m.putAll(extras);
        StringBuilder sb = new StringBuilder();
        appendObject(sb, m);
        return sb.toString();
    }

    private static void appendObject(StringBuilder sb, Map<?, ?> m) {
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            Json.appendQuoted(sb, String.valueOf(e.getKey()));
            sb.append(':');
            Object v = e.getValue();
            if (v == null) {
                sb.append("null");
            } else if (v instanceof Map) {
                appendObject(sb, (Map<?, ?>) v);
            } else if (v instanceof Double || v instanceof Float) {
                // Plain decimal, never exponent notation, so scripts and humans read it alike; to the
                // millionth, so latencies keep their nanoseconds (each figure is rounded before)
                sb.append(new java.math.BigDecimal(((Number) v).doubleValue()).setScale(LATENCY_DECIMALS, java.math.RoundingMode.HALF_UP)
                        .stripTrailingZeros().toPlainString());
            } else if (v instanceof Number || v instanceof Boolean) {
                sb.append(v);
            } else {
                Json.appendQuoted(sb, v.toString());
            }
        }
        sb.append('}');
    }

    private static double round(double v, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(v * scale) / scale;
    }

    /** No operation failed or timed out, in the measured window or while the last ones drained. */
    public boolean clean() {
        return failed + timeout + drainFailed + drainTimeout == 0 && drained;
    }
}
