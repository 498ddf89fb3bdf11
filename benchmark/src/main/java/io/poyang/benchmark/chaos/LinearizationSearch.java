package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * <li>right after one, no put and no other blind write (for the same reason), only CASes;</li>
 * <li>only to give a reader that could come next a state it accepts and the current state is not (before a
 *     reader that accepts the current state too, the optional operation can as well come after it, or, before a
 *     remove, not at all), or to let an optional CAS fire;</li>
 * <li>of the optional puts of values nothing ever compares against, only one: the register cannot tell those
 *     values apart, and the one invoked last is as good as any (the others stay available longer); likewise only
 *     one optional remove. Not when collecting end states: the end state tells those values apart.</li>
 * </ul>
 * Each rule removes only orders for which an equivalent order is also searched. They matter: a chaos history
 * has many unknown-outcome writes, and each one applied where it is not needed would split the rest of the
 * search in two.
 *
 * <p>The search also notes how far it got ({@link #furthestNanos()}): the latest completion time of the first
 * operation it could not place, over all configurations. No configuration gets past the point where the history
 * stops being linearizable, so that is where to look for a failing window.
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
    private final long[] keyBuffer;
    private final long[] noBits = new long[0];

    // The optional operations worth trying next from the current configuration, in the order to try them.
    private int[] candidates = new int[16];
    private int candidateCount;
    private final int[] candidateMark;
    private int markRound;
    private int[] wanted = new int[8];
    private int wantedCount;

    // The optional puts as the search tells them apart: see the constructor.
    private final int[] unobservedPuts;
    private final int[] observedPuts;
    private final Map<Integer, int[]> observedPutsByValue;

    private final TreeSet<Integer> endStates = new TreeSet<>();
    private int linearizedEndState = RegisterModel.ABSENT;
    private long furthestNanos = Long.MIN_VALUE;
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
        candidateMark = new int[problem.optionalCount];
        keyBuffer = new long[2 + placed.length];
        int depthMax = n + problem.optionalCount + 1;
        stackOp = new int[depthMax];
        stackState = new int[depthMax];
        stackHighest = new int[depthMax];
        if (allEndStates && problem.unobservedPuts.length > 0) {
            // The end state tells apart the values nothing else compares against, so here no unobserved put stands
            // for the others: with only the latest tried for all, a value the search put to use earlier could never
            // be an end state, though another unknown put could have taken its place there.
            observedPuts = new int[problem.observedPuts.length + problem.unobservedPuts.length];
            Map<Integer, Integer> perValue = new HashMap<>();
            int puts = 0;
            for (int j = 0; j < problem.optionalCount; j++) {
                if (problem.optionalCode[j] == RegisterModel.OPTIONAL_PUT) {
                    observedPuts[puts++] = j;
                    perValue.merge(problem.optionalA[j], 1, Integer::sum);
                }
            }
            observedPutsByValue = new HashMap<>();
            for (Map.Entry<Integer, Integer> e : perValue.entrySet()) {
                observedPutsByValue.put(e.getKey(), new int[e.getValue()]);
            }
            Map<Integer, Integer> filled = new HashMap<>();
            for (int j : observedPuts) {
                int k = filled.merge(problem.optionalA[j], 1, Integer::sum) - 1;
                observedPutsByValue.get(problem.optionalA[j])[k] = j;
            }
            unobservedPuts = new int[0];
        } else {
            unobservedPuts = problem.unobservedPuts;
            observedPuts = problem.observedPuts;
            observedPutsByValue = problem.observedPutsByValue;
        }
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

    /**
     * The completion time of the first operation that could not be placed, at the configuration that got
     * furthest; Long.MAX_VALUE once every definite operation was placed.
     */
    long furthestNanos() {
        return furthestNanos;
    }

    /** After {@link Outcome#LINEARIZABLE} without {@code allEndStates}: the state the linearization found ends in. */
    int linearizedEndState() {
        return linearizedEndState;
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
                findOptionalCandidates(cursor, afterOptional);
            }
            boolean descended = false;
            while (optionalCursor < candidateCount) {
                int j = candidates[optionalCursor++];
                int after = RegisterModel.stepOptional(p.optionalCode[j], p.optionalA[j], p.optionalB[j], state);
                if (after == state) {
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
                int j = ~op;
                clear(applied, j);
                definitePhase = false;
                findOptionalCandidates(firstReturn(), depth > 0 && stackOp[depth - 1] < 0);
                optionalCursor = positionAfter(j);
            }
        }
    }

    /**
     * Where to carry on in the rebuilt candidate list of a configuration after backtracking from optional {@code j}:
     * the list depends on the configuration only, so {@code j} is in it.
     */
    private int positionAfter(int j) {
        for (int k = 0; k < candidateCount; k++) {
            if (candidates[k] == j) {
                return k + 1;
            }
        }
        throw new IllegalStateException("linearization search lost its place: optional operation "
                + p.optional[j].id() + " is not a candidate of the configuration it was tried from");
    }

    /** After entering a new configuration: true if it ends the search with a linearization. */
    private boolean entered() {
        if (placedCount < p.definiteCount) {
            int blocking = firstReturn();
            long reached = p.completeNanos[~nodeEvent[blocking]];
            if (reached > furthestNanos) {
                furthestNanos = reached;
            }
            return false;
        }
        furthestNanos = Long.MAX_VALUE;
        if (!allEndStates) {
            linearizedEndState = state;
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
     * Lists the optional operations worth trying from the current configuration (see the class comment): those
     * invoked before the first remaining return that give a definite reader among the candidates a state it
     * accepts and the current one is not, or let an optional CAS fire. The list depends on the configuration
     * only, so backtracking can rebuild it and carry on after the operation it had tried.
     */
    private void findOptionalCandidates(int firstReturnNode, boolean afterOptional) {
        candidateCount = 0;
        if (p.optionalCount == 0) {
            return;
        }
        long bound = firstReturnNode == NIL ? Long.MAX_VALUE : p.completeNanos[~nodeEvent[firstReturnNode]];
        boolean anyReader = false;
        boolean anyChange = false;
        wantedCount = 0;
        for (int node = next[HEAD]; node != firstReturnNode; node = next[node]) {
            int i = nodeEvent[node];
            byte code = p.code[i];
            if (!RegisterModel.observes(code)) {
                continue;
            }
            anyReader = true;
            if (RegisterModel.stepDefinite(code, p.argA[i], p.argB[i], state) != RegisterModel.ILLEGAL) {
                continue;
            }
            switch (code) {
                case RegisterModel.GET:
                case RegisterModel.CAS_SWAPPED:
                    want(p.argA[i]);
                    break;
                case RegisterModel.NOT_FOUND:
                    want(RegisterModel.ABSENT);
                    break;
                default:
                    // A mismatched CAS rejecting the state expects exactly it, and a remove that found a value
                    // rejects only absent: any change of state will do.
                    anyChange = true;
                    break;
            }
        }
        if (!anyReader) {
            return;
        }
        int available = invokedBy(bound);
        for (int j : p.optionalCases) {
            if (j >= available) {
                break;
            }
            if (!isSet(applied, j) && p.optionalA[j] != state && p.optionalB[j] != p.optionalA[j]) {
                want(p.optionalA[j]);
            }
        }
        if (anyChange || wantedCount > 0) {
            markRound++;
        }
        if (anyChange) {
            if (!afterOptional) {
                addCandidate(latestUnapplied(unobservedPuts, available));
                if (state != RegisterModel.ABSENT) {
                    addCandidate(latestUnapplied(p.optionalRemoves, available));
                }
                for (int j : observedPuts) {
                    if (j >= available) {
                        break;
                    }
                    addCandidate(j);
                }
            }
            for (int j : p.optionalCases) {
                if (j >= available) {
                    break;
                }
                if (p.optionalA[j] == state) {
                    addCandidate(j);
                }
            }
            return;
        }
        for (int w = 0; w < wantedCount; w++) {
            int value = wanted[w];
            if (!afterOptional) {
                if (value == RegisterModel.ABSENT) {
                    addCandidate(latestUnapplied(p.optionalRemoves, available));
                } else {
                    int[] puts = observedPutsByValue.get(value);
                    if (puts != null) {
                        for (int j : puts) {
                            if (j >= available) {
                                break;
                            }
                            addCandidate(j);
                        }
                    }
                }
            }
            for (int j : p.optionalCases) {
                if (j >= available) {
                    break;
                }
                if (p.optionalA[j] == state && p.optionalB[j] == value) {
                    addCandidate(j);
                }
            }
        }
    }

    private void want(int value) {
        for (int w = 0; w < wantedCount; w++) {
            if (wanted[w] == value) {
                return;
            }
        }
        if (wantedCount == wanted.length) {
            wanted = Arrays.copyOf(wanted, wantedCount * 2);
        }
        wanted[wantedCount++] = value;
    }

    private void addCandidate(int j) {
        if (j < 0 || isSet(applied, j) || candidateMark[j] == markRound) {
            return;
        }
        candidateMark[j] = markRound;
        if (candidateCount == candidates.length) {
            candidates = Arrays.copyOf(candidates, candidateCount * 2);
        }
        candidates[candidateCount++] = j;
    }

    /** How many optional operations (a prefix, as they are sorted by invocation) were invoked by {@code bound}. */
    private int invokedBy(long bound) {
        int lo = 0;
        int hi = p.optionalCount;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (p.optionalInvokeNanos[mid] <= bound) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The last of {@code ops} (ascending optional indices) below {@code available} not yet applied, or -1. */
    private int latestUnapplied(int[] ops, int available) {
        int lo = 0;
        int hi = ops.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ops[mid] < available) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (int k = lo - 1; k >= 0; k--) {
            if (!isSet(applied, ops[k])) {
                return ops[k];
            }
        }
        return -1;
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
