package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A deliberately naive linearizability check for tiny one-key histories, to cross-check the real checker: tries
 * every order of the operations that respects real time (an operation may not come after one that had returned
 * before it was invoked; unknown-outcome writes may come anywhere after their invocation or be left out), with no
 * memo and no pruning beyond legality. It can also list every state such an order can end in.
 */
final class BruteForceLinearizability {

    private final List<Operation> definite = new ArrayList<>();
    private final List<Operation> optional = new ArrayList<>();
    /** When collecting end states: every state a full placement can leave, with any unknown writes after it. */
    private Set<String> endStates;

    private BruteForceLinearizability(List<Operation> ops) {
        for (Operation op : ops) {
            if (op.status() == OpStatus.OK) {
                definite.add(op);
            } else if (op.status() == OpStatus.UNKNOWN && op.kind() != OpKind.GET) {
                optional.add(op);
            }
        }
    }

    static boolean isLinearizable(List<Operation> ops) {
        BruteForceLinearizability b = new BruteForceLinearizability(ops);
        return b.search(null, new boolean[b.definite.size()], new boolean[b.optional.size()], 0);
    }

    /** The states (null: absent) the register can hold after every operation, or an empty set if none. */
    static Set<String> endStates(List<Operation> ops) {
        BruteForceLinearizability b = new BruteForceLinearizability(ops);
        b.endStates = new HashSet<>();
        b.search(null, new boolean[b.definite.size()], new boolean[b.optional.size()], 0);
        return b.endStates;
    }

    private boolean search(String state, boolean[] usedDefinite, boolean[] usedOptional, int placed) {
        if (placed == definite.size()) {
            if (endStates == null) {
                return true;
            }
            // Collecting end states: carry on, so unknown writes may still come after the last definite one.
            endStates.add(state);
        }
        for (int i = 0; i < definite.size(); i++) {
            Operation op = definite.get(i);
            if (usedDefinite[i] || !mayGoNext(op, usedDefinite)) {
                continue;
            }
            Object after = step(op, state);
            if (after == ILLEGAL) {
                continue;
            }
            usedDefinite[i] = true;
            boolean ok = search((String) after, usedDefinite, usedOptional, placed + 1);
            usedDefinite[i] = false;
            if (ok) {
                return true;
            }
        }
        for (int j = 0; j < optional.size(); j++) {
            Operation op = optional.get(j);
            if (usedOptional[j] || !mayGoNext(op, usedDefinite)) {
                continue;
            }
            String after = state;
            switch (op.kind()) {
                case PUT:
                    after = op.value();
                    break;
                case CAS:
                    if (Objects.equals(state, op.expected())) {
                        after = op.value();
                    }
                    break;
                default:
                    after = null;
                    break;
            }
            usedOptional[j] = true;
            boolean ok = search(after, usedDefinite, usedOptional, placed);
            usedOptional[j] = false;
            if (ok) {
                return true;
            }
        }
        return false;
    }

    /** No definite operation still to place returned before {@code op} was invoked. */
    private boolean mayGoNext(Operation op, boolean[] usedDefinite) {
        for (int i = 0; i < definite.size(); i++) {
            if (!usedDefinite[i] && definite.get(i).completeNanos() < op.invokeNanos()) {
                return false;
            }
        }
        return true;
    }

    private static final Object ILLEGAL = new Object();

    private static Object step(Operation op, String state) {
        switch (op.kind()) {
            case PUT:
                return op.value();
            case GET:
                return Objects.equals(state, op.readValue()) ? state : ILLEGAL;
            case CAS:
                if (op.succeeded()) {
                    return Objects.equals(state, op.expected()) ? op.value() : ILLEGAL;
                }
                return Objects.equals(state, op.expected()) ? ILLEGAL : state;
            default:
                if (op.succeeded()) {
                    return state != null ? null : ILLEGAL;
                }
                return state == null ? null : ILLEGAL;
        }
    }
}
