package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The operations on one key, sorted and sorted out: acknowledged ones (definite: they took effect once, between
 * invocation and completion, with the recorded result) and unknown-outcome writes (optional: they may take effect
 * at any time after their invocation, or never). Failed operations never took effect and unknown reads change
 * nothing, so both are only counted. Builds the {@link KeyProblem}s the search runs on: the whole history, a
 * prefix in time, or a window.
 */
final class KeyHistory {

    private static final Comparator<Operation> BY_INVOKE =
            Comparator.comparingLong(Operation::invokeNanos).thenComparingLong(Operation::id);

    final String key;
    final ValueTable values = new ValueTable();
    /** Acknowledged operations, by invocation time. */
    final Operation[] definite;
    /** Unknown-outcome operations that may write (not gets), by invocation time. */
    final Operation[] unknownWrites;
    final int failedCount;
    final int unknownReadCount;

    KeyHistory(String key, List<Operation> operations) {
        this.key = key;
        List<Operation> ok = new ArrayList<>();
        List<Operation> unknown = new ArrayList<>();
        int failed = 0;
        int unknownReads = 0;
        for (Operation op : operations) {
            if (!op.key().equals(key)) {
                throw new IllegalArgumentException("operation #" + op.id() + " is on key " + HistoryLine.quote(op.key())
                        + ", not " + HistoryLine.quote(key));
            }
            values.id(op.value());
            values.id(op.expected());
            values.id(op.readValue());
            switch (op.status()) {
                case OK:
                    ok.add(op);
                    break;
                case UNKNOWN:
                    if (op.kind() == OpKind.GET) {
                        unknownReads++;
                    } else {
                        unknown.add(op);
                    }
                    break;
                default:
                    failed++;
                    break;
            }
        }
        ok.sort(BY_INVOKE);
        unknown.sort(BY_INVOKE);
        this.definite = ok.toArray(new Operation[0]);
        this.unknownWrites = unknown.toArray(new Operation[0]);
        this.failedCount = failed;
        this.unknownReadCount = unknownReads;
    }

    /** Operations the checker looks at: acknowledged ones and unknown writes. */
    int checkedCount() {
        return definite.length + unknownWrites.length;
    }

    /** The whole history of the key, from an absent register. */
    KeyProblem whole() {
        return window(Long.MIN_VALUE, Long.MAX_VALUE, Collections.emptySet());
    }

    /**
     * The history as it stood at time {@code endNanos}: operations invoked by then, those acknowledged by then
     * definite, the rest optional. If the whole history is linearizable, so is every such prefix; the first
     * completion time whose prefix is not is where the history went wrong.
     */
    KeyProblem prefix(long endNanos) {
        return window(Long.MIN_VALUE, endNanos, Collections.emptySet());
    }

    /**
     * The operations that could take effect between {@code startNanos} and {@code endNanos}, as a problem of its
     * own: acknowledged operations invoked and completed inside are definite; those that overlap an edge, and
     * every unknown-outcome write invoked before the end, are optional (they may have taken effect before the
     * window, inside it, or after). The register may hold, before the window, any value written by an operation
     * invoked before it, or nothing. So if this window is not linearizable, neither is the whole history.
     * {@code excluded} operations are left out (used to minimise a failing window).
     */
    KeyProblem window(long startNanos, long endNanos, Set<Operation> excluded) {
        boolean fromStart = startNanos == Long.MIN_VALUE;
        List<Operation> inside = new ArrayList<>();
        List<Operation> optional = new ArrayList<>();
        TreeSet<Integer> writtenBefore = new TreeSet<>();
        for (Operation op : definite) {
            if (op.invokeNanos() > endNanos) {
                break;
            }
            boolean startsInside = op.invokeNanos() >= startNanos;
            if (!startsInside && op.writes()) {
                writtenBefore.add(values.id(writtenValue(op)));
            }
            if (excluded.contains(op)) {
                continue;
            }
            if (startsInside && op.completeNanos() <= endNanos) {
                inside.add(op);
            } else if ((startsInside || op.completeNanos() >= startNanos)
                    && RegisterModel.optionalCode(op) != RegisterModel.NO_EFFECT) {
                optional.add(op);
            }
        }
        for (Operation op : unknownWrites) {
            if (op.invokeNanos() > endNanos) {
                break;
            }
            if (op.invokeNanos() < startNanos && op.writes()) {
                writtenBefore.add(values.id(writtenValue(op)));
            }
            if (!excluded.contains(op) && RegisterModel.optionalCode(op) != RegisterModel.NO_EFFECT) {
                optional.add(op);
            }
        }
        optional.sort(BY_INVOKE);
        int[] initialStates = fromStart ? new int[]{RegisterModel.ABSENT}
                : initialStates(writtenBefore, inside, optional);
        return new KeyProblem(this, inside, optional, initialStates);
    }

    private static String writtenValue(Operation op) {
        return op.kind() == OpKind.REMOVE ? null : op.value();
    }

    /**
     * The states worth starting a window from: absent, the values written before it that an operation of the
     * window compares against, and one more written value standing for all the others (the register cannot
     * tell them apart, so one is enough).
     */
    private int[] initialStates(Set<Integer> writtenBefore, List<Operation> inside, List<Operation> optional) {
        Set<Integer> compared = new TreeSet<>();
        for (Operation op : inside) {
            if (op.kind() == OpKind.GET) {
                compared.add(values.id(op.readValue()));
            } else if (op.kind() == OpKind.CAS) {
                compared.add(values.id(op.expected()));
            }
        }
        for (Operation op : optional) {
            if (op.kind() == OpKind.CAS) {
                compared.add(values.id(op.expected()));
            }
        }
        List<Integer> states = new ArrayList<>();
        states.add(RegisterModel.ABSENT);
        Integer other = null;
        for (int v : writtenBefore) {
            if (v == RegisterModel.ABSENT) {
                continue;
            }
            if (compared.contains(v)) {
                states.add(v);
            } else if (other == null) {
                other = v;
            }
        }
        if (other != null) {
            states.add(other);
        }
        int[] out = new int[states.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = states.get(i);
        }
        return out;
    }

    /** Distinct completion times of the acknowledged operations, ascending. */
    long[] completionTimes() {
        long[] t = new long[definite.length];
        for (int i = 0; i < t.length; i++) {
            t[i] = definite[i].completeNanos();
        }
        Arrays.sort(t);
        int n = 0;
        for (int i = 0; i < t.length; i++) {
            if (n == 0 || t[n - 1] != t[i]) {
                t[n++] = t[i];
            }
        }
        return Arrays.copyOf(t, n);
    }
}
