package io.poyang.dtkv.client;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Waiting for a condition with a deadline, for the client-package tests that run a local cluster. */
final class Await {

    private Await() {
    }

    /** Polls {@code condition} every 5 ms until it holds; fails after 10 s naming {@code what}. */
    static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after 10 s waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
        }
    }
}
