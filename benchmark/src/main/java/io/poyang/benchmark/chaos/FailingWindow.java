package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The evidence for a key that is not linearizable: a short stretch of its history that cannot be linearized
 * by itself, whatever the key held before it, even letting every unknown-outcome operation (and every
 * operation overlapping the stretch's edges) take effect inside it or not. Found by {@link FailingWindowFinder}.
 */
public final class FailingWindow {

    /** Operations printed at most; a longer window prints its last ones. */
    static final int MAX_PRINTED = 60;
    /** Optional operations named at most in the "also considered" line. */
    static final int MAX_OPTIONAL_NAMED = 8;

    private final String key;
    private final List<Operation> operations;
    private final List<Operation> optional;
    private final Set<Long> lastCompletedIds;
    private final StateBefore stateBefore;
    private final int readsLeftOut;
    private final boolean minimised;

    FailingWindow(String key, List<Operation> operations, List<Operation> optional, Set<Long> lastCompletedIds,
                  StateBefore stateBefore, int readsLeftOut, boolean minimised) {
        this.key = key;
        this.operations = Collections.unmodifiableList(new ArrayList<>(operations));
        this.optional = Collections.unmodifiableList(new ArrayList<>(optional));
        this.lastCompletedIds = lastCompletedIds;
        this.stateBefore = stateBefore;
        this.readsLeftOut = readsLeftOut;
        this.minimised = minimised;
    }

    /** What the key may have held just before the window. */
    static final class StateBefore {
        enum Kind { FROM_THE_START, ALL, EXAMPLE, UNKNOWN }

        final Kind kind;
        final List<String> values;

        private StateBefore(Kind kind, List<String> values) {
            this.kind = kind;
            this.values = Collections.unmodifiableList(new ArrayList<>(values));
        }

        /** The window starts with the history: the key was absent. */
        static StateBefore fromTheStart() {
            return new StateBefore(Kind.FROM_THE_START, Collections.singletonList(null));
        }

        /** Every state the history before the window can leave. */
        static StateBefore all(List<String> values) {
            return new StateBefore(Kind.ALL, values);
        }

        /** One state the history before the window can leave (finding them all ran out of budget). */
        static StateBefore example(String value) {
            return new StateBefore(Kind.EXAMPLE, Collections.singletonList(value));
        }

        static StateBefore unknown() {
            return new StateBefore(Kind.UNKNOWN, Collections.emptyList());
        }
    }

    public String key() {
        return key;
    }

    /** The acknowledged operations of the window, by invocation time: together they cannot be linearized. */
    public List<Operation> operations() {
        return operations;
    }

    /** The ids of the operations of the window, by invocation time. */
    public List<Long> operationIds() {
        List<Long> ids = new ArrayList<>();
        for (Operation op : operations) {
            ids.add(op.id());
        }
        return ids;
    }

    /**
     * Operations that may or may not have taken effect during the window (unknown outcome, or acknowledged but
     * overlapping an edge of it). The window fails with all of them considered, so none of them explains it.
     */
    public List<Operation> optionalOperations() {
        return optional;
    }

    /**
     * The values the key may have held just before the window (null: absent): all of them, or one example when
     * finding them all ran out of budget; empty if not computed.
     */
    public List<String> stateBefore() {
        return stateBefore.values;
    }

    /** False when the search budget ran out before the window could be made as short as possible. */
    public boolean minimised() {
        return minimised;
    }

    /** The window, readable: a verdict line, the state before, then one line per operation. */
    public String format() {
        StringBuilder b = new StringBuilder();
        b.append("key ").append(HistoryLine.quote(key)).append(": NOT LINEARIZABLE: no order of the ")
                .append(operations.size()).append(operations.size() == 1 ? " operation" : " operations")
                .append(" below gives the results they returned")
                .append(stateBefore.kind == StateBefore.Kind.FROM_THE_START ? ", starting from an absent key"
                        : ", whatever the key held before them")
                .append('\n');
        b.append("  before the window the key held: ").append(describeStateBefore()).append('\n');
        long origin = operations.isEmpty() ? 0 : operations.get(0).invokeNanos();
        b.append("  times in ms from the window start (the first invocation below)\n");
        b.append(String.format(Locale.ROOT, "  %10s %7s %-7s %-28s %-12s %10s %10s%n",
                "op id", "client", "kind", "arguments", "result", "invoke", "complete"));
        int skip = Math.max(0, operations.size() - MAX_PRINTED);
        if (skip > 0) {
            b.append("  ... ").append(skip).append(" earlier operations not shown\n");
        }
        for (int k = skip; k < operations.size(); k++) {
            Operation op = operations.get(k);
            b.append(String.format(Locale.ROOT, "  %10d %7d %-7s %-28s %-12s %10s %10s%s%n",
                    op.id(), op.clientId(), op.kind().text(), op.describeArguments(), op.describeResult(),
                    millis(op.invokeNanos() - origin), millis(op.completeNanos() - origin),
                    lastCompletedIds.contains(op.id()) ? "  <- completed last: from here no order works" : ""));
        }
        if (readsLeftOut > 0) {
            b.append("  (").append(readsLeftOut).append(readsLeftOut == 1 ? " read" : " reads")
                    .append(" in this time span left out: the window fails without them)\n");
        }
        if (!optional.isEmpty()) {
            b.append("  also considered, and none of them explains it: ").append(optional.size())
                    .append(optional.size() == 1 ? " operation" : " operations")
                    .append(" that may have taken effect during the window (unknown outcome, or overlapping its edges):\n");
            int named = Math.min(optional.size(), MAX_OPTIONAL_NAMED);
            for (int k = 0; k < named; k++) {
                Operation op = optional.get(k);
                b.append(String.format(Locale.ROOT, "  %10d %7d %-7s %-28s %-12s %10s %10s%n",
                        op.id(), op.clientId(), op.kind().text(), op.describeArguments(), op.describeResult(),
                        millis(op.invokeNanos() - origin),
                        op.status() == OpStatus.UNKNOWN ? "-" : millis(op.completeNanos() - origin)));
            }
            if (optional.size() > named) {
                b.append("  ... and ").append(optional.size() - named).append(" more\n");
            }
        }
        if (!minimised) {
            b.append("  (the search budget ran out while shortening this window: a shorter one may exist)\n");
        }
        return b.toString();
    }

    private String describeStateBefore() {
        switch (stateBefore.kind) {
            case FROM_THE_START:
                return "nothing (absent: this window starts at the beginning of the history)";
            case UNKNOWN:
                return "not computed (the search budget ran out)";
            case EXAMPLE:
                return HistoryLine.quote(stateBefore.values.get(0))
                        + " (where one valid order of the earlier operations leaves it; listing every possible state"
                        + " ran out of budget)";
            default:
                break;
        }
        if (stateBefore.values.isEmpty()) {
            return "no possible state: the history before the window is not linearizable either";
        }
        List<String> shown = new ArrayList<>();
        for (String v : stateBefore.values) {
            shown.add(HistoryLine.quote(v));
        }
        return shown.size() == 1 ? shown.get(0) : "one of " + String.join(", ", shown);
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }

    @Override
    public String toString() {
        return format();
    }
}
