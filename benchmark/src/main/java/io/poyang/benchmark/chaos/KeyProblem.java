package io.poyang.benchmark.chaos;

import java.util.Arrays;
import java.util.List;

/**
 * One linearizability question about a key, in the int-indexed form the search runs on: definite operations
 * (which must all be placed, each between its invocation and completion, with its recorded result), optional
 * ones (which may be placed anywhere after their invocation, or not at all), and the states the register may
 * start in. Also the time-ordered list of invocation and completion events of the definite operations, calls
 * before returns at equal times (operations that touch are treated as overlapping, the lenient reading).
 */
final class KeyProblem {

    final KeyHistory history;
    final long startNanos;
    final long endNanos;

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
    final boolean anyOptionalCas;

    final int[] initialStates;
    /** Events by time: {@code i} is the call of definite operation i, {@code ~i} its return. */
    final int[] events;

    KeyProblem(KeyHistory history, List<Operation> definiteOps, List<Operation> optionalOps, int[] initialStates,
               long startNanos, long endNanos) {
        this.history = history;
        this.startNanos = startNanos;
        this.endNanos = endNanos;
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
        boolean cas = false;
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
                    cas = true;
                    break;
                default:
                    break;
            }
            optionalInvokeNanos[j] = op.invokeNanos();
        }
        anyOptionalCas = cas;
        events = mergeEvents();
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
