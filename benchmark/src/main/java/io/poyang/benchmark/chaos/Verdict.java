package io.poyang.benchmark.chaos;

/** What the checker concluded about a key, or about a whole history (the worst of its keys). */
public enum Verdict {
    /** Some order of the operations, each placed between its invocation and completion, gives every recorded result. */
    LINEARIZABLE,
    /** No such order exists: a failing window shows why. */
    NOT_LINEARIZABLE,
    /** The search budget ran out before an answer. */
    INCONCLUSIVE
}
