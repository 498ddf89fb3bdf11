package io.poyang.benchmark.chaos;

import java.util.Objects;

/**
 * What a client asked, and when: the first half of an {@link Operation}. The runner stamps an invocation just
 * before it sends the request and turns it into an operation with one of the completion methods when the
 * answer (or the lack of one) is known.
 */
public final class Invocation {

    private final long id;
    private final int clientId;
    private final OpKind kind;
    private final String key;
    private final String value;
    private final String expected;
    private final long invokeNanos;

    private Invocation(long id, int clientId, OpKind kind, String key, String value, String expected, long invokeNanos) {
        this.id = id;
        this.clientId = clientId;
        this.kind = Objects.requireNonNull(kind, "kind");
        this.key = Objects.requireNonNull(key, "key");
        this.value = value;
        this.expected = expected;
        this.invokeNanos = invokeNanos;
    }

    public static Invocation put(long id, int clientId, String key, String value, long invokeNanos) {
        return new Invocation(id, clientId, OpKind.PUT, key, Objects.requireNonNull(value, "value"), null, invokeNanos);
    }

    public static Invocation get(long id, int clientId, String key, long invokeNanos) {
        return new Invocation(id, clientId, OpKind.GET, key, null, null, invokeNanos);
    }

    /** A compare-and-set of {@code key} from {@code expected} (null: the key must be absent) to {@code newValue}. */
    public static Invocation cas(long id, int clientId, String key, String expected, String newValue, long invokeNanos) {
        return new Invocation(id, clientId, OpKind.CAS, key, Objects.requireNonNull(newValue, "newValue"), expected,
                invokeNanos);
    }

    public static Invocation remove(long id, int clientId, String key, long invokeNanos) {
        return new Invocation(id, clientId, OpKind.REMOVE, key, null, null, invokeNanos);
    }

    /** A put was acknowledged. */
    public Operation putOk(long completeNanos) {
        require(OpKind.PUT);
        return new Operation(this, OpStatus.OK, null, false, completeNanos, null);
    }

    /** A get answered {@code readValue} (null: the key was absent). */
    public Operation getOk(long completeNanos, String readValue) {
        require(OpKind.GET);
        return new Operation(this, OpStatus.OK, readValue, false, completeNanos, null);
    }

    /** A compare-and-set answered: {@code swapped} true when it wrote, false on a mismatch. */
    public Operation casOk(long completeNanos, boolean swapped) {
        require(OpKind.CAS);
        return new Operation(this, OpStatus.OK, null, swapped, completeNanos, null);
    }

    /** A remove answered: {@code removed} true when the key was there, false when it was not found. */
    public Operation removeOk(long completeNanos, boolean removed) {
        require(OpKind.REMOVE);
        return new Operation(this, OpStatus.OK, null, removed, completeNanos, null);
    }

    /** No answer the client can trust (timeout, dropped connection): it may or may not have taken effect. */
    public Operation unknown(long completeNanos, String reason) {
        return new Operation(this, OpStatus.UNKNOWN, null, false, completeNanos, reason);
    }

    /** An error proving the operation never took effect (for example NOT_LEADER before proposing). */
    public Operation failed(long completeNanos, String reason) {
        return new Operation(this, OpStatus.FAILED, null, false, completeNanos, reason);
    }

    private void require(OpKind k) {
        if (kind != k) {
            throw new IllegalStateException("operation #" + id + " is a " + kind.text() + ", not a " + k.text());
        }
    }

    public long id() {
        return id;
    }

    public int clientId() {
        return clientId;
    }

    public OpKind kind() {
        return kind;
    }

    public String key() {
        return key;
    }

    /** PUT: the value written; CAS: the new value; otherwise null. */
    public String value() {
        return value;
    }

    /** CAS: the expected value, null meaning "the key must be absent"; otherwise null. */
    public String expected() {
        return expected;
    }

    public long invokeNanos() {
        return invokeNanos;
    }
}
