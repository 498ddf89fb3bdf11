package io.poyang.benchmark.chaos;

/**
 * The sequential specification of one key: a register holding a value or nothing, with put, get,
 * compare-and-set and remove. Values are small ints from a {@link ValueTable} ({@link #ABSENT} is 0) and
 * operations are byte codes with up to two int arguments, so the search steps without allocating.
 *
 * <p>A definite operation (acknowledged, result known) is legal only if its recorded result is what the register
 * would answer in that state. An optional one (unknown outcome, or cut by a window edge) has no result to
 * check: it simply does what it would do.
 */
final class RegisterModel {

    static final int ABSENT = 0;
    /** Returned by a step whose recorded result does not fit the state. */
    static final int ILLEGAL = -1;

    // Definite operations; a = value id (PUT), read value (GET) or expected value (CAS); b = CAS new value.
    static final byte PUT = 0;
    static final byte GET = 1;
    static final byte CAS_SWAPPED = 2;
    static final byte CAS_MISMATCH = 3;
    static final byte REMOVED = 4;
    static final byte NOT_FOUND = 5;

    // Optional operations (effect only).
    static final byte OPTIONAL_PUT = 0;
    static final byte OPTIONAL_CAS = 1;
    static final byte OPTIONAL_REMOVE = 2;
    /** The operation has no effect when applied with its recorded result (a mismatched CAS, a read): leave it out. */
    static final byte NO_EFFECT = -1;

    private RegisterModel() {
    }

    /** The state after definite operation {@code code(a, b)} in {@code state}, or {@link #ILLEGAL}. */
    static int stepDefinite(byte code, int a, int b, int state) {
        switch (code) {
            case PUT:
                return a;
            case GET:
                return state == a ? state : ILLEGAL;
            case CAS_SWAPPED:
                return state == a ? b : ILLEGAL;
            case CAS_MISMATCH:
                return state != a ? state : ILLEGAL;
            case REMOVED:
                return state != ABSENT ? ABSENT : ILLEGAL;
            default:
                return state == ABSENT ? ABSENT : ILLEGAL;
        }
    }

    /** The state after optional operation {@code code(a, b)} in {@code state}. */
    static int stepOptional(byte code, int a, int b, int state) {
        switch (code) {
            case OPTIONAL_PUT:
                return a;
            case OPTIONAL_CAS:
                return state == a ? b : state;
            default:
                return ABSENT;
        }
    }

    /** Whether a definite operation's result depends on the state (everything but a put). */
    static boolean observes(byte code) {
        return code != PUT;
    }

    /** The definite code of an acknowledged operation. */
    static byte definiteCode(Operation op) {
        switch (op.kind()) {
            case PUT:
                return PUT;
            case GET:
                return GET;
            case CAS:
                return op.succeeded() ? CAS_SWAPPED : CAS_MISMATCH;
            default:
                return op.succeeded() ? REMOVED : NOT_FOUND;
        }
    }

    /**
     * The optional code of an operation that may or may not take effect: what it does if it does. An
     * acknowledged operation cut by a window edge keeps what its result proves: a mismatched CAS or a remove
     * that found nothing changed nothing, and a read never changes anything.
     */
    static byte optionalCode(Operation op) {
        boolean known = op.status() == OpStatus.OK;
        switch (op.kind()) {
            case PUT:
                return OPTIONAL_PUT;
            case CAS:
                return known && !op.succeeded() ? NO_EFFECT : OPTIONAL_CAS;
            case REMOVE:
                return known && !op.succeeded() ? NO_EFFECT : OPTIONAL_REMOVE;
            default:
                return NO_EFFECT;
        }
    }
}
