package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Shrinks a key history that is not linearizable to a short window that shows why.
 * <ol>
 * <li>The end: the first completion time at which the history, cut there, is already not linearizable
 *     (binary search; a cut history that fails stays failing as time goes on).</li>
 * <li>The start: the latest invocation time such that the window between start and end fails on its own
 *     (see {@link KeyHistory#window}): one step at a time for the first few, then doubling and halving.</li>
 * <li>Reads in the window that the failure does not need are left out (leaving a read out only removes a
 *     constraint, so what still fails without it still fails with it).</li>
 * <li>The state before the window: every state the history up to its start can leave (an exhaustive search).</li>
 * </ol>
 */
final class FailingWindowFinder {

    private static final int STEP_BY_STEP = 32;
    /** Windows longer than this keep all their reads: shortening them would cost more than it shows. */
    private static final int MAX_OPERATIONS_TO_SHORTEN = 200;

    private final KeyHistory history;
    private final long maxConfigurations;
    private final long deadlineNanos;
    private boolean minimised = true;

    private FailingWindowFinder(KeyHistory history, long maxConfigurations, long deadlineNanos) {
        this.history = history;
        this.maxConfigurations = maxConfigurations;
        this.deadlineNanos = deadlineNanos;
    }

    /** The failing window of a key history already known not to be linearizable. */
    static FailingWindow find(KeyHistory history, long maxConfigurations, long deadlineNanos) {
        return new FailingWindowFinder(history, maxConfigurations, deadlineNanos).find();
    }

    private FailingWindow find() {
        long end = firstFailingEnd();
        long start = latestFailingStart(end);
        Set<Operation> excluded = Collections.newSetFromMap(new IdentityHashMap<>());
        KeyProblem window = history.window(start, end, excluded);
        Set<Long> lastCompleted = new HashSet<>();
        for (Operation op : window.definite) {
            if (op.completeNanos() == end) {
                lastCompleted.add(op.id());
            }
        }
        int readsLeftOut = 0;
        if (minimised && window.definiteCount <= MAX_OPERATIONS_TO_SHORTEN) {
            for (Operation op : window.definite) {
                if (op.writes() || lastCompleted.contains(op.id())) {
                    continue;
                }
                excluded.add(op);
                LinearizationSearch.Outcome o = outcome(history.window(start, end, excluded));
                if (o == LinearizationSearch.Outcome.NOT_LINEARIZABLE) {
                    readsLeftOut++;
                } else {
                    excluded.remove(op);
                    if (o == LinearizationSearch.Outcome.BUDGET_EXCEEDED) {
                        minimised = false;
                        break;
                    }
                }
            }
            window = history.window(start, end, excluded);
        }

        boolean fromTheStart = start == Long.MIN_VALUE;
        List<String> stateBefore = new ArrayList<>();
        boolean stateKnown = true;
        if (fromTheStart) {
            stateBefore.add(null);
        } else {
            LinearizationSearch before = new LinearizationSearch(history.prefix(start - 1), maxConfigurations,
                    deadlineNanos, true);
            if (before.run() == LinearizationSearch.Outcome.BUDGET_EXCEEDED) {
                stateKnown = false;
            } else {
                for (int id : before.endStates()) {
                    stateBefore.add(history.values.value(id));
                }
            }
        }
        return new FailingWindow(history.key, Arrays.asList(window.definite), Arrays.asList(window.optional),
                lastCompleted, stateBefore, stateKnown, fromTheStart, readsLeftOut, minimised);
    }

    /** The earliest completion time at which the history cut there is not linearizable. */
    private long firstFailingEnd() {
        long[] ends = history.completionTimes();
        int lo = 0;
        int hi = ends.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            LinearizationSearch.Outcome o = outcome(history.prefix(ends[mid]));
            if (o == LinearizationSearch.Outcome.NOT_LINEARIZABLE) {
                hi = mid;
            } else if (o == LinearizationSearch.Outcome.LINEARIZABLE) {
                lo = mid + 1;
            } else {
                minimised = false;
                break;
            }
        }
        return ends.length == 0 ? Long.MAX_VALUE : ends[hi];
    }

    /** The latest start such that the window from it to {@code end} fails; Long.MIN_VALUE for "from the start". */
    private long latestFailingStart(long end) {
        if (!minimised) {
            return Long.MIN_VALUE;
        }
        long[] starts = invocationTimesUpTo(end);
        int last = starts.length - 1;
        int passing = last + 1;
        for (int p = last; p >= 0 && p > last - STEP_BY_STEP; p--) {
            Boolean f = fails(starts[p], end);
            if (f == null) {
                return Long.MIN_VALUE;
            }
            if (f) {
                return starts[p];
            }
            passing = p;
        }
        int step = STEP_BY_STEP;
        while (passing > 0) {
            int p = Math.max(0, passing - step);
            Boolean f = fails(starts[p], end);
            if (f == null) {
                return Long.MIN_VALUE;
            }
            if (f) {
                int failing = p;
                while (passing - failing > 1) {
                    int mid = (failing + passing) >>> 1;
                    Boolean m = fails(starts[mid], end);
                    if (m == null) {
                        break;
                    }
                    if (m) {
                        failing = mid;
                    } else {
                        passing = mid;
                    }
                }
                return starts[failing];
            }
            passing = p;
            step *= 2;
        }
        return Long.MIN_VALUE;
    }

    private long[] invocationTimesUpTo(long end) {
        long[] t = new long[history.definite.length];
        int n = 0;
        for (Operation op : history.definite) {
            if (op.invokeNanos() > end) {
                break;
            }
            if (n == 0 || t[n - 1] != op.invokeNanos()) {
                t[n++] = op.invokeNanos();
            }
        }
        return Arrays.copyOf(t, n);
    }

    /** Whether the window fails; null if the budget ran out (and then the window stays as long as it is). */
    private Boolean fails(long start, long end) {
        LinearizationSearch.Outcome o = outcome(history.window(start, end, Collections.emptySet()));
        if (o == LinearizationSearch.Outcome.BUDGET_EXCEEDED) {
            minimised = false;
            return null;
        }
        return o == LinearizationSearch.Outcome.NOT_LINEARIZABLE;
    }

    private LinearizationSearch.Outcome outcome(KeyProblem problem) {
        return new LinearizationSearch(problem, maxConfigurations, deadlineNanos, false).run();
    }
}
