package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The Wing–Gong–Lowe search for a linearization of one {@link KeyProblem}: a depth-first search that places
 * operations one at a time in an order that respects real time, backtracking when a recorded result does not
 * fit, with a memo of explored configurations ({@link VisitedConfigurations}).
 *
 * <p>Definite operations live in a doubly linked list of call and return events in time order. Only the calls
 * ahead of the first remaining return are candidates for the next place (the "minimal call" rule: an operation
 * cannot come after one that had already returned when it was invoked); placing one lifts its call and return
 * out of the list and backtracking puts them back, so every step is O(1) list work. Optional operations
 * (unknown outcome) are tried after the definite candidates, and only where they can matter:
 * <ul>
 * <li>only when some definite candidate reads the state (a get, CAS or remove): before a put, whatever they
 *     did is overwritten, so leaving them for later loses nothing;</li>
 * <li>right after one, no put and no other blind write (for the same reason), only readers and CASes;</li>
 * <li>only if they change the state, and only if a reader or CAS that could come next accepts the new state.</li>
 * </ul>
 * Each rule removes only orders for which an equivalent order without the pruned step is also searched.
 *
 * <p>A configuration key is (state, index of the first unplaced definite operation, the placed bits from there
 * to the highest placed one): the placed set of a long history is mostly a solid prefix, so keys stay a few
 * words however long the history is.
 */
final class LinearizationSearch {

    enum Outcome { LINEARIZABLE, NOT_LINEARIZABLE, BUDGET_EXCEEDED }

    private static final int NIL = -1;
    private static final int HEAD = 0;
    private static final int NEW = 0;
    private static final int SEEN = 1;
    private static final int OVER_BUDGET = 2;

    private final KeyProblem p;
    private final long maxConfigurations;
    private final long deadlineNanos;
    private final boolean allEndStates;

    // The event list: node 0 is the head; node k + 1 is p.events[k].
    private final int[] next;
    private final int[] prev;
    private final int[] nodeEvent;
    private final int[] callNode;
    private final int[] returnNode;

    private final long[] placed;
    private final long[] applied;
    private int state;
    private int highestPlaced = -1;
    private int placedCount;

    private final int[] stackOp;
    private final int[] stackState;
    private final int[] stackHighest;
    private int depth;

    private final VisitedConfigurations visited = new VisitedConfigurations();
    private long[] keyBuffer;
    private final long[] noBits = new long[0];

    // Set up for the optional phase of the current configuration.
    private long optionalBoundNanos;
    private boolean optionalAllowed;
    private int[] readers = new int[8];
    private int readerCount;

    private final TreeSet<Integer> endStates = new TreeSet<>();
    private boolean outOfTime;

    /**
     * @param allEndStates search everything and collect the states the register can end in, instead of stopping
     *                     at the first linearization
     */
    LinearizationSearch(KeyProblem problem, long maxConfigurations, long deadlineNanos, boolean allEndStates) {
        this.p = problem;
        this.maxConfigurations = maxConfigurations;
        this.deadlineNanos = deadlineNanos;
        this.allEndStates = allEndStates;
        int n = problem.definiteCount;
        int nodes = 2 * n + 1;
        next = new int[nodes];
        prev = new int[nodes];
        nodeEvent = new int[nodes];
        callNode = new int[n];
        returnNode = new int[n];
        for (int k = 0; k < 2 * n; k++) {
            int node = k + 1;
            int event = problem.events[k];
            nodeEvent[node] = event;
            if (event >= 0) {
                callNode[event] = node;
            } else {
                returnNode[~event] = node;
            }
        }
        for (int node = 0; node < nodes; node++) {
            next[node] = node + 1 < nodes ? node + 1 : NIL;
            prev[node] = node - 1;
        }
        placed = new long[(n + 63) >>> 6];
        applied = new long[(problem.optionalCount + 63) >>> 6];
        keyBuffer = new long[2 + placed.length];
        int depthMax = n + problem.optionalCount + 1;
        stackOp = new int[depthMax];
        stackState = new int[depthMax];
        stackHighest = new int[depthMax];
    }

    /** Runs the search from each possible initial state until one linearizes (or, collecting end states, all). */
    Outcome run() {
        for (int initial : p.initialStates) {
            Outcome o = runFrom(initial);
            if (o == Outcome.BUDGET_EXCEEDED || (o == Outcome.LINEARIZABLE && !allEndStates)) {
                return o;
            }
        }
        return allEndStates && !endStates.isEmpty() ? Outcome.LINEARIZABLE : Outcome.NOT_LINEARIZABLE;
    }

    long configurations() {
        return visited.configurations();
    }

    /** Whether a {@link Outcome#BUDGET_EXCEEDED} came from the time limit rather than the state limit. */
    boolean outOfTime() {
        return outOfTime;
    }

    /** With {@code allEndStates}: the states (value ids) the register can hold after every operation. */
    List<Integer> endStates() {
        return new ArrayList<>(endStates);
    }

    private Outcome runFrom(int initialState) {
        state = initialState;
        int v = visit();
        if (v == OVER_BUDGET) {
            return Outcome.BUDGET_EXCEEDED;
        }
        if (v == SEEN) {
            return Outcome.NOT_LINEARIZABLE;
        }
        if (entered()) {
            return Outcome.LINEARIZABLE;
        }
        int cursor = next[HEAD];
        boolean definitePhase = true;
        int optionalCursor = 0;
        long steps = 0;
        while (true) {
            if ((++steps & 0xFFF) == 0 && System.nanoTime() - deadlineNanos > 0) {
                outOfTime = true;
                return Outcome.BUDGET_EXCEEDED;
            }
            boolean afterOptional = depth > 0 && stackOp[depth - 1] < 0;
            if (definitePhase) {
                if (cursor != NIL && nodeEvent[cursor] >= 0) {
                    int i = nodeEvent[cursor];
                    cursor = next[cursor];
                    if (afterOptional && p.code[i] == RegisterModel.PUT) {
                        continue;
                    }
                    int after = RegisterModel.stepDefinite(p.code[i], p.argA[i], p.argB[i], state);
                    if (after == RegisterModel.ILLEGAL) {
                        continue;
                    }
                    int before = state;
                    int highestBefore = highestPlaced;
                    place(i);
                    state = after;
                    int seen = visit();
                    if (seen == NEW) {
                        push(i, before, highestBefore);
                        if (entered()) {
                            return Outcome.LINEARIZABLE;
                        }
                        cursor = next[HEAD];
                        continue;
                    }
                    state = before;
                    unplace(i, highestBefore);
                    if (seen == OVER_BUDGET) {
                        return Outcome.BUDGET_EXCEEDED;
                    }
                    continue;
                }
                definitePhase = false;
                optionalCursor = 0;
                prepareOptionalPhase(cursor);
            }
            boolean descended = false;
            while (optionalAllowed && optionalCursor < p.optionalCount
                    && p.optionalInvokeNanos[optionalCursor] <= optionalBoundNanos) {
                int j = optionalCursor++;
                if (isSet(applied, j) || (afterOptional && p.optionalCode[j] != RegisterModel.OPTIONAL_CAS)) {
                    continue;
                }
                int after = RegisterModel.stepOptional(p.optionalCode[j], p.optionalA[j], p.optionalB[j], state);
                if (after == state || !worthApplying(after, j)) {
                    continue;
                }
                int before = state;
                set(applied, j);
                state = after;
                int seen = visit();
                if (seen == NEW) {
                    push(~j, before, highestPlaced);
                    descended = true;
                    break;
                }
                state = before;
                clear(applied, j);
                if (seen == OVER_BUDGET) {
                    return Outcome.BUDGET_EXCEEDED;
                }
            }
            if (descended) {
                cursor = next[HEAD];
                definitePhase = true;
                continue;
            }
            // Every candidate of this configuration is explored: backtrack.
            if (depth == 0) {
                return Outcome.NOT_LINEARIZABLE;
            }
            depth--;
            int op = stackOp[depth];
            state = stackState[depth];
            if (op >= 0) {
                unplace(op, stackHighest[depth]);
                cursor = next[callNode[op]];
                definitePhase = true;
            } else {
                clear(applied, ~op);
                optionalCursor = ~op + 1;
                definitePhase = false;
                prepareOptionalPhase(firstReturn());
            }
        }
    }

    /** After entering a new configuration: true if it ends the search with a linearization. */
    private boolean entered() {
        if (placedCount < p.definiteCount) {
            return false;
        }
        if (!allEndStates) {
            return true;
        }
        collectEndStates();
        return false;
    }

    /** Every definite operation is placed: the end states are this one and what the optional ones left can reach. */
    private void collectEndStates() {
        TreeSet<Integer> reach = new TreeSet<>();
        reach.add(state);
        for (int j = 0; j < p.optionalCount; j++) {
            if (!isSet(applied, j)) {
                if (p.optionalCode[j] == RegisterModel.OPTIONAL_PUT) {
                    reach.add(p.optionalA[j]);
                } else if (p.optionalCode[j] == RegisterModel.OPTIONAL_REMOVE) {
                    reach.add(RegisterModel.ABSENT);
                }
            }
        }
        boolean grew = true;
        while (grew) {
            grew = false;
            for (int j = 0; j < p.optionalCount; j++) {
                if (!isSet(applied, j) && p.optionalCode[j] == RegisterModel.OPTIONAL_CAS
                        && reach.contains(p.optionalA[j]) && reach.add(p.optionalB[j])) {
                    grew = true;
                }
            }
        }
        endStates.addAll(reach);
    }

    private int firstReturn() {
        int node = next[HEAD];
        while (node != NIL && nodeEvent[node] >= 0) {
            node = next[node];
        }
        return node;
    }

    /**
     * Sets up the optional phase: optional operations invoked before the first remaining return may go next, and
     * only if a definite candidate reads the state.
     */
    private void prepareOptionalPhase(int firstReturnNode) {
        optionalBoundNanos = firstReturnNode == NIL ? Long.MAX_VALUE : p.completeNanos[~nodeEvent[firstReturnNode]];
        readerCount = 0;
        for (int node = next[HEAD]; node != firstReturnNode; node = next[node]) {
            int i = nodeEvent[node];
            if (RegisterModel.observes(p.code[i])) {
                if (readerCount == readers.length) {
                    readers = java.util.Arrays.copyOf(readers, readerCount * 2);
                }
                readers[readerCount++] = i;
            }
        }
        optionalAllowed = readerCount > 0 && p.optionalCount > 0;
    }

    /** Whether applying optional {@code j} to reach {@code after} can be followed by anything. */
    private boolean worthApplying(int after, int j) {
        for (int r = 0; r < readerCount; r++) {
            int i = readers[r];
            if (RegisterModel.stepDefinite(p.code[i], p.argA[i], p.argB[i], after) != RegisterModel.ILLEGAL) {
                return true;
            }
        }
        if (p.anyOptionalCas) {
            for (int k = 0; k < p.optionalCount && p.optionalInvokeNanos[k] <= optionalBoundNanos; k++) {
                if (k != j && p.optionalCode[k] == RegisterModel.OPTIONAL_CAS && !isSet(applied, k)
                        && p.optionalA[k] == after && p.optionalB[k] != after) {
                    return true;
                }
            }
        }
        return false;
    }

    private void place(int i) {
        set(placed, i);
        if (i > highestPlaced) {
            highestPlaced = i;
        }
        placedCount++;
        lift(callNode[i]);
        lift(returnNode[i]);
    }

    private void unplace(int i, int highestBefore) {
        unlift(returnNode[i]);
        unlift(callNode[i]);
        placedCount--;
        highestPlaced = highestBefore;
        clear(placed, i);
    }

    private void lift(int node) {
        next[prev[node]] = next[node];
        if (next[node] != NIL) {
            prev[next[node]] = prev[node];
        }
    }

    private void unlift(int node) {
        next[prev[node]] = node;
        if (next[node] != NIL) {
            prev[next[node]] = node;
        }
    }

    private void push(int op, int stateBefore, int highestBefore) {
        stackOp[depth] = op;
        stackState[depth] = stateBefore;
        stackHighest[depth] = highestBefore;
        depth++;
    }

    /** Records the current configuration in the memo. */
    private int visit() {
        if (visited.configurations() >= maxConfigurations) {
            return OVER_BUDGET;
        }
        int first = next[HEAD] == NIL ? p.definiteCount : nodeEvent[next[HEAD]];
        int words = 1;
        keyBuffer[0] = ((long) state << 32) | (first & 0xFFFFFFFFL);
        if (highestPlaced >= first) {
            int from = first >>> 6;
            int to = highestPlaced >>> 6;
            System.arraycopy(placed, from, keyBuffer, 1, to - from + 1);
            words += to - from + 1;
        }
        int appliedWords = applied.length;
        while (appliedWords > 0 && applied[appliedWords - 1] == 0) {
            appliedWords--;
        }
        return visited.add(keyBuffer, words, appliedWords == 0 ? noBits : applied, appliedWords) ? NEW : SEEN;
    }

    private static boolean isSet(long[] bits, int i) {
        return (bits[i >>> 6] & (1L << i)) != 0;
    }

    private static void set(long[] bits, int i) {
        bits[i >>> 6] |= 1L << i;
    }

    private static void clear(long[] bits, int i) {
        bits[i >>> 6] &= ~(1L << i);
    }
}
