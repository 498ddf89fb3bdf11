package io.poyang.testutil;

import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Waits for a condition with a deadline, instead of sleeping for a guessed time. */
public final class Await {

    private Await() {
    }

    public static void until(String what, long timeoutMillis, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeoutMillis + " ms waiting for " + what);
            }
            Thread.yield();
        }
    }

    /** Joins the thread, failing the test if it is still alive after the timeout. */
    public static void join(Thread t, long timeoutMillis) throws InterruptedException {
        t.join(timeoutMillis);
        if (t.isAlive()) {
            StringBuilder sb = new StringBuilder();
            for (StackTraceElement e : t.getStackTrace()) {
                sb.append("\n  at ").append(e);
            }
            fail("thread " + t.getName() + " still running after " + timeoutMillis + " ms" + sb);
        }
    }
}
