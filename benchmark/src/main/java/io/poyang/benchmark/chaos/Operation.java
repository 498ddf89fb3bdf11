package io.poyang.benchmark.chaos;

/**
 * One client operation of a chaos history: what was asked ({@link Invocation}), when it was invoked and
 * completed (nanoseconds from one monotonic clock of the runner process), and how it ended. Immutable.
 *
 * <p>Results of {@link OpStatus#OK} operations: a GET has {@link #readValue()} (null: absent); a CAS and a
 * REMOVE have {@link #succeeded()} (swapped / removed); a PUT has none. UNKNOWN and FAILED operations have no
 * result, only an optional {@link #error()} text saying why.
 */
public final class Operation {

    private final Invocation invocation;
    private final OpStatus status;
    private final String readValue;
    private final boolean succeeded;
    private final long completeNanos;
    private final String error;

    Operation(Invocation invocation, OpStatus status, String readValue, boolean succeeded, long completeNanos,
              String error) {
        if (completeNanos < invocation.invokeNanos()) {
            throw new IllegalArgumentException("operation #" + invocation.id() + " completes at " + completeNanos
                    + " ns, before its invocation at " + invocation.invokeNanos() + " ns");
        }
        this.invocation = invocation;
        this.status = status;
        this.readValue = readValue;
        this.succeeded = succeeded;
        this.completeNanos = completeNanos;
        this.error = error;
    }

    // Shorthands for acknowledged operations, mostly for tests and hand-made histories.

    public static Operation put(long id, int clientId, String key, String value, long invokeNanos, long completeNanos) {
        return Invocation.put(id, clientId, key, value, invokeNanos).putOk(completeNanos);
    }

    /** A get that read {@code readValue} (null: absent). */
    public static Operation get(long id, int clientId, String key, String readValue, long invokeNanos,
                                long completeNanos) {
        return Invocation.get(id, clientId, key, invokeNanos).getOk(completeNanos, readValue);
    }

    /** A compare-and-set from {@code expected} (null: absent) to {@code newValue} that answered {@code swapped}. */
    public static Operation cas(long id, int clientId, String key, String expected, String newValue, boolean swapped,
                                long invokeNanos, long completeNanos) {
        return Invocation.cas(id, clientId, key, expected, newValue, invokeNanos).casOk(completeNanos, swapped);
    }

    public static Operation remove(long id, int clientId, String key, boolean removed, long invokeNanos,
                                   long completeNanos) {
        return Invocation.remove(id, clientId, key, invokeNanos).removeOk(completeNanos, removed);
    }

    public Invocation invocation() {
        return invocation;
    }

    public long id() {
        return invocation.id();
    }

    public int clientId() {
        return invocation.clientId();
    }

    public OpKind kind() {
        return invocation.kind();
    }

    public String key() {
        return invocation.key();
    }

    /** PUT: the value written; CAS: the new value; otherwise null. */
    public String value() {
        return invocation.value();
    }

    /** CAS: the expected value, null meaning "absent"; otherwise null. */
    public String expected() {
        return invocation.expected();
    }

    public long invokeNanos() {
        return invocation.invokeNanos();
    }

    /** When the answer came, or, for UNKNOWN, when the client gave up (it may take effect even later). */
    public long completeNanos() {
        return completeNanos;
    }

    public OpStatus status() {
        return status;
    }

    /** GET with status OK: the value read, null when the key was absent. */
    public String readValue() {
        return readValue;
    }

    /** CAS with status OK: it swapped; REMOVE with status OK: the key was there and is now removed. */
    public boolean succeeded() {
        return succeeded;
    }

    /** UNKNOWN or FAILED: why, as the client saw it; may be null. */
    public String error() {
        return error;
    }

    /** Whether this operation changes the key when it takes effect with its recorded result. */
    boolean writes() {
        switch (kind()) {
            case PUT:
                return true;
            case GET:
                return false;
            default:
                return status != OpStatus.OK || succeeded;
        }
    }

    /** The arguments for a report: {@code "v"} for a put, {@code "a" -> "b"} for a CAS, empty otherwise. */
    String describeArguments() {
        switch (kind()) {
            case PUT:
                return HistoryLine.quote(value());
            case CAS:
                return (expected() == null ? "absent" : HistoryLine.quote(expected())) + " -> " + HistoryLine.quote(value());
            default:
                return "";
        }
    }

    /** The result for a report: {@code ok}, a value, {@code absent}, {@code true}/{@code false}, {@code removed}/{@code not-found}, or the status. */
    String describeResult() {
        if (status != OpStatus.OK) {
            return status.text();
        }
        switch (kind()) {
            case PUT:
                return "ok";
            case GET:
                return readValue == null ? "absent" : HistoryLine.quote(readValue);
            case CAS:
                return succeeded ? "true" : "false";
            default:
                return succeeded ? "removed" : "not-found";
        }
    }

    /** The history-file line of this operation. */
    @Override
    public String toString() {
        return HistoryLine.format(this);
    }
}
