package io.poyang.benchmark;

/** Told once, from any thread, how an asynchronous operation ended: one of its two methods, once. */
public interface OpCallback {

    /** The operation succeeded. Called for every successful operation: implementations allocate nothing. */
    void succeeded();

    /**
     * The operation failed ({@link Outcome#FAILED}) or timed out ({@link Outcome#TIMEOUT}), for the
     * reason {@code cause}: {@link FailureCause#of} of the error, or a short phrase of the
     * scenario's own when there is no exception ("short echo").
     */
    void failed(Outcome outcome, String cause);
}
