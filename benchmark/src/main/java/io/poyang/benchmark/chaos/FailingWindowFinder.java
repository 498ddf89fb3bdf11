package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Shrinks a key history that is not linearizable to a short window that shows why, or finds such a window in a
 * history the full search could not finish (a window that fails on its own proves the whole history fails; see
 * {@link KeyHistory#window}).
 * <ol>
 * <li>The end: a completion time at which the history, cut there, is already not linearizable. The search's
 *     {@link LinearizationSearch#furthestNanos() furthest point} is where to start looking: no linearization of a
 *     prefix gets past the first failing end. If the windows ending there and at the next few completion times do
 *     not fail, a binary search over prefixes finds the first failing end (a prefix that fails keeps failing as
 *     time goes on).</li>
 * <li>The start: the latest invocation time such that the window between start and end fails on its own: one step
 *     at a time for the first few, then doubling and halving.</li>
 * <li>Reads in the window that the failure does not need are left out (leaving a read out only removes a
 *     constraint, so what still fails without it still fails with it).</li>
 * <li>The state before the window: every state the history up to its start can leave (an exhaustive search with
 *     a small budget), or at least the one a linearization of it ends in.</li>
 * </ol>
 */
final class FailingWindowFinder {

    private static final int STEP_BY_STEP = 32;
    /** Completion times tried as the window's end, from the search's furthest point on, before the binary search. */
    private static final int ENDS_NEAR_THE_HINT = 8;
    /** Windows near the hint stop growing at this many starts: a longer one is the binary search's job. */
    private static final int MAX_STARTS_NEAR_THE_HINT = 4096;
    /** Windows longer than this keep all their reads: shortening them would cost more than it shows. */
    private static final int MAX_OPERATIONS_TO_SHORTEN = 200;
    private static final long STATE_BEFORE_MAX_CONFIGURATIONS = 200_000;
    private static final long STATE_BEFORE_MAX_NANOS = 2_000_000_000L;

    private final KeyHistory history;
    private final long maxConfigurations;
    private final long deadlineNanos;
    private boolean minimised = true;
    private boolean budgetRanOut;

    private FailingWindowFinder(KeyHistory history, long maxConfigurations, long deadlineNanos) {
        this.history = history;
        this.maxConfigurations = maxConfigurations;
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * A failing window of {@code history}, looking first at windows ending at {@code furthestNanos} (from the
     * search). With {@code provenFailing} (the search proved the history is not linearizable) a window is always
     * returned, if need be the whole prefix up to the failing point, marked as not minimised; otherwise null when
     * no failing window was found within the budget.
     */
    static FailingWindow find(KeyHistory history, long furthestNanos, boolean provenFailing, long maxConfigurations,
                              long deadlineNanos) {
        return new FailingWindowFinder(history, maxConfigurations, deadlineNanos).find(furthestNanos, provenFailing);
    }

    private FailingWindow find(long furthestNanos, boolean provenFailing) {
        long[] ends = history.completionTimes();
        if (ends.length == 0) {
            return null;
        }
        int first = 0;
        while (first < ends.length && ends[first] < furthestNanos) {
            first++;
        }
        for (int k = first; k < ends.length && k < first + ENDS_NEAR_THE_HINT && !budgetRanOut; k++) {
            Long start = latestFailingStart(ends[k], MAX_STARTS_NEAR_THE_HINT);
            if (start != null) {
                return describe(start, ends[k]);
            }
        }
        if (!provenFailing) {
            return null;
        }
        if (!budgetRanOut) {
            long end = firstFailingEnd(ends, Math.min(first, ends.length - 1));
            if (!budgetRanOut) {
                Long start = latestFailingStart(end, Integer.MAX_VALUE);
                return describe(start != null ? start : Long.MIN_VALUE, end);
            }
        }
        minimised = false;
        return describe(Long.MIN_VALUE, ends[Math.min(first, ends.length - 1)]);
    }

    private FailingWindow describe(long start, long end) {
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
        return new FailingWindow(history.key, Arrays.asList(window.definite), mostRelevantFirst(window),
                lastCompleted, stateBefore(start), readsLeftOut, minimised);
    }

    /**
     * The window's optional operations for the report: first those that write a value an operation of the window
     * reads or expects (the ones a reader would suspect), then the others, most recent first.
     */
    private static List<Operation> mostRelevantFirst(KeyProblem window) {
        Set<String> compared = new HashSet<>();
        boolean absentCompared = false;
        for (Operation op : window.definite) {
            String v = op.kind() == OpKind.GET ? op.readValue() : op.kind() == OpKind.CAS ? op.expected() : null;
            if (v != null) {
                compared.add(v);
            } else if (op.kind() != OpKind.PUT) {
                absentCompared = true;
            }
        }
        List<Operation> relevant = new ArrayList<>();
        List<Operation> others = new ArrayList<>();
        for (Operation op : window.optional) {
            boolean writesCompared = op.kind() == OpKind.REMOVE ? absentCompared : compared.contains(op.value());
            (writesCompared ? relevant : others).add(op);
        }
        Collections.reverse(relevant);
        Collections.reverse(others);
        relevant.addAll(others);
        return relevant;
    }

    /** What the key may hold just before {@code start}. */
    private FailingWindow.StateBefore stateBefore(long start) {
        if (start == Long.MIN_VALUE) {
            return FailingWindow.StateBefore.fromTheStart();
        }
        KeyProblem before = history.prefix(start - 1);
        long deadline = Math.min(deadlineNanos, System.nanoTime() + STATE_BEFORE_MAX_NANOS);
        LinearizationSearch all = new LinearizationSearch(before,
                Math.min(maxConfigurations, STATE_BEFORE_MAX_CONFIGURATIONS), deadline, true);
        LinearizationSearch.Outcome o = all.run();
        if (o != LinearizationSearch.Outcome.BUDGET_EXCEEDED) {
            return FailingWindow.StateBefore.all(values(all.endStates()));
        }
        LinearizationSearch one = new LinearizationSearch(before, maxConfigurations, deadlineNanos, false);
        if (one.run() == LinearizationSearch.Outcome.LINEARIZABLE) {
            return FailingWindow.StateBefore.example(history.values.value(one.linearizedEndState()));
        }
        return FailingWindow.StateBefore.unknown();
    }

    private List<String> values(List<Integer> ids) {
        List<String> out = new ArrayList<>();
        for (int id : ids) {
            out.add(history.values.value(id));
        }
        return out;
    }

    /** The earliest completion time (from index {@code from} on) at which the history cut there is not linearizable. */
    private long firstFailingEnd(long[] ends, int from) {
        int lo = from;
        int hi = ends.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            LinearizationSearch.Outcome o = outcome(history.prefix(ends[mid]));
            if (o == LinearizationSearch.Outcome.NOT_LINEARIZABLE) {
                hi = mid;
            } else if (o == LinearizationSearch.Outcome.LINEARIZABLE) {
                lo = mid + 1;
            } else {
                budgetRanOut = true;
                break;
            }
        }
        return ends[hi];
    }

    /**
     * The latest start such that the window from it to {@code end} fails, trying at most {@code maxStarts}
     * invocation times back from the end; null if none fails within them (or the budget ran out).
     */
    private Long latestFailingStart(long end, int maxStarts) {
        long[] starts = invocationTimesUpTo(end);
        int last = starts.length - 1;
        int oldest = Math.max(0, starts.length - maxStarts);
        int passing = last + 1;
        for (int p = last; p >= oldest && p > last - STEP_BY_STEP; p--) {
            Boolean f = fails(starts[p], end);
            if (f == null) {
                return null;
            }
            if (f) {
                return starts[p];
            }
            passing = p;
        }
        int step = STEP_BY_STEP;
        while (passing > oldest) {
            int p = Math.max(oldest, passing - step);
            Boolean f = fails(starts[p], end);
            if (f == null) {
                return null;
            }
            if (f) {
                int failing = p;
                while (passing - failing > 1) {
                    int mid = (failing + passing) >>> 1;
                    Boolean m = fails(starts[mid], end);
                    if (m == null) {
                        // starts[failing] is a failing window already, just perhaps not the shortest.
                        minimised = false;
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
        return null;
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

    /** Whether the window fails; null if the budget ran out. */
    private Boolean fails(long start, long end) {
        LinearizationSearch.Outcome o = outcome(history.window(start, end, Collections.emptySet()));
        if (o == LinearizationSearch.Outcome.BUDGET_EXCEEDED) {
            budgetRanOut = true;
            return null;
        }
        return o == LinearizationSearch.Outcome.NOT_LINEARIZABLE;
    }

    private LinearizationSearch.Outcome outcome(KeyProblem problem) {
        return new LinearizationSearch(problem, maxConfigurations, deadlineNanos, false).run();
    }
}
