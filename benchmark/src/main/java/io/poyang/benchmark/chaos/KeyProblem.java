package io.poyang.benchmark.chaos;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One linearizability question about a key, in the int-indexed form the search runs on: definite operations
 * (which must all be placed, each between its invocation and completion, with its recorded result), optional
 * ones (which may be placed anywhere after their invocation, or not at all), and the states the register may
 * start in. Also the time-ordered list of invocation and completion events of the definite operations, calls
 * before returns at equal times (operations that touch are treated as overlapping, the lenient reading).
 */
final class KeyProblem {

    final KeyHistory history;

    final int definiteCount;
    final Operation[] definite;
    final byte[] code;
    final int[] argA;
    final int[] argB;
    final long[] invokeNanos;
    final long[] completeNanos;

    final int optionalCount;
    final Operation[] optional;
    final byte[] optionalCode;
    final int[] optionalA;
    final int[] optionalB;
    final long[] optionalInvokeNanos;
    /**
     * Optional puts of values no operation compares against (no get reads them, no CAS expects them), by
     * invocation: the register cannot tell these values apart, so the search only ever needs to try one of them.
     */
    final int[] unobservedPuts;
    /** Optional puts of values some operation compares against, by invocation. */
    final int[] observedPuts;
    /** Optional puts by the value they write (observed values only). */
    final Map<Integer, int[]> observedPutsByValue;
    /** Optional removes, by invocation: all alike, so the search only ever needs to try one of them. */
    final int[] optionalRemoves;
    /** Optional compare-and-sets, by invocation. */
    final int[] optionalCases;

    final int[] initialStates;
    /** Events by time: {@code i} is the call of definite operation i, {@code ~i} its return. */
    final int[] events;

    KeyProblem(KeyHistory history, List<Operation> definiteOps, List<Operation> optionalOps, int[] initialStates) {
        this.history = history;
        this.initialStates = initialStates;
        ValueTable values = history.values;

        definiteCount = definiteOps.size();
        definite = definiteOps.toArray(new Operation[0]);
        code = new byte[definiteCount];
        argA = new int[definiteCount];
        argB = new int[definiteCount];
        invokeNanos = new long[definiteCount];
        completeNanos = new long[definiteCount];
        for (int i = 0; i < definiteCount; i++) {
            Operation op = definite[i];
            code[i] = RegisterModel.definiteCode(op);
            switch (op.kind()) {
                case PUT:
                    argA[i] = values.id(op.value());
                    break;
                case GET:
                    argA[i] = values.id(op.readValue());
                    break;
                case CAS:
                    argA[i] = values.id(op.expected());
                    argB[i] = values.id(op.value());
                    break;
                default:
                    break;
            }
            invokeNanos[i] = op.invokeNanos();
            completeNanos[i] = op.completeNanos();
        }

        optionalCount = optionalOps.size();
        optional = optionalOps.toArray(new Operation[0]);
        optionalCode = new byte[optionalCount];
        optionalA = new int[optionalCount];
        optionalB = new int[optionalCount];
        optionalInvokeNanos = new long[optionalCount];
        for (int j = 0; j < optionalCount; j++) {
            Operation op = optional[j];
            optionalCode[j] = RegisterModel.optionalCode(op);
            switch (op.kind()) {
                case PUT:
                    optionalA[j] = values.id(op.value());
                    break;
                case CAS:
                    optionalA[j] = values.id(op.expected());
                    optionalB[j] = values.id(op.value());
                    break;
                default:
                    break;
            }
            optionalInvokeNanos[j] = op.invokeNanos();
        }
        events = mergeEvents();

        Set<Integer> compared = new HashSet<>();
        for (int i = 0; i < definiteCount; i++) {
            if (code[i] == RegisterModel.GET || code[i] == RegisterModel.CAS_SWAPPED
                    || code[i] == RegisterModel.CAS_MISMATCH) {
                compared.add(argA[i]);
            }
        }
        IntList unobserved = new IntList();
        IntList observed = new IntList();
        IntList removes = new IntList();
        IntList cases = new IntList();
        Map<Integer, IntList> byValue = new HashMap<>();
        for (int j = 0; j < optionalCount; j++) {
            if (optionalCode[j] == RegisterModel.OPTIONAL_CAS) {
                compared.add(optionalA[j]);
            }
        }
        for (int j = 0; j < optionalCount; j++) {
            switch (optionalCode[j]) {
                case RegisterModel.OPTIONAL_PUT:
                    if (compared.contains(optionalA[j])) {
                        observed.add(j);
                        byValue.computeIfAbsent(optionalA[j], v -> new IntList()).add(j);
                    } else {
                        unobserved.add(j);
                    }
                    break;
                case RegisterModel.OPTIONAL_CAS:
                    cases.add(j);
                    break;
                default:
                    removes.add(j);
                    break;
            }
        }
        unobservedPuts = unobserved.toArray();
        observedPuts = observed.toArray();
        optionalRemoves = removes.toArray();
        optionalCases = cases.toArray();
        observedPutsByValue = new HashMap<>();
        for (Map.Entry<Integer, IntList> e : byValue.entrySet()) {
            observedPutsByValue.put(e.getKey(), e.getValue().toArray());
        }
    }

    /** A growable list of ints, for building the index arrays. */
    private static final class IntList {
        private int[] items = new int[8];
        private int size;

        void add(int v) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            items[size++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }
    }

    private int[] mergeEvents() {
        Integer[] byCompletion = new Integer[definiteCount];
        for (int i = 0; i < definiteCount; i++) {
            byCompletion[i] = i;
        }
        Arrays.sort(byCompletion, (x, y) -> {
            int c = Long.compare(completeNanos[x], completeNanos[y]);
            return c != 0 ? c : Integer.compare(x, y);
        });
        int[] out = new int[2 * definiteCount];
        int calls = 0;
        int returns = 0;
        int n = 0;
        while (calls < definiteCount || returns < definiteCount) {
            if (calls < definiteCount
                    && (returns == definiteCount || invokeNanos[calls] <= completeNanos[byCompletion[returns]])) {
                out[n++] = calls++;
            } else {
                out[n++] = ~byCompletion[returns++];
            }
        }
        return out;
    }
}
