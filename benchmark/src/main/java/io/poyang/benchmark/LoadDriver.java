package io.poyang.benchmark;

/** Keeps a scenario busy: asynchronously ({@link AsyncLoadDriver}) or from blocking threads ({@link SyncLoadDriver}). */
public interface LoadDriver {

    void start();

    /** Stops issuing new operations; those in flight still complete. */
    void stop();

    /** Waits until the operations in flight have completed; false if the timeout came first. */
    boolean awaitDrained(long timeoutMillis) throws InterruptedException;

    /** A short description for the report header, such as "async, max-pending 2000". */
    String describe();
}
