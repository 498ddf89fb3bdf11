package io.poyang.benchmark;

import io.poyang.common.PoyangTimeoutException;

import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Blocking callers: --threads threads, each performing one operation at a time. Uses virtual
 * threads when the JDK has them (21+, found by reflection since this module targets Java 11),
 * platform threads otherwise.
 */
public final class SyncLoadDriver implements LoadDriver {

    private final Scenario scenario;
    private final RunStats stats;
    private final int threads;
    private final ThreadFactory factory;
    private final boolean virtual;
    private final CountDownLatch finished;
    private volatile boolean running;

    public SyncLoadDriver(Scenario scenario, RunStats stats, int threads) {
        this.scenario = scenario;
        this.stats = stats;
        this.threads = threads;
        ThreadFactory v = virtualThreadFactory();
        this.virtual = v != null;
        this.factory = v != null ? v : platformThreadFactory();
        this.finished = new CountDownLatch(threads);
    }

    /** Thread.ofVirtual().factory() when it exists, else null. */
    static ThreadFactory virtualThreadFactory() {
        try {
            Method ofVirtual = Thread.class.getMethod("ofVirtual");
            Object builder = ofVirtual.invoke(null);
            Method factory = Class.forName("java.lang.Thread$Builder").getMethod("factory");
            return (ThreadFactory) factory.invoke(builder);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    private static ThreadFactory platformThreadFactory() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "bench-caller-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void start() {
        running = true;
        for (int i = 0; i < threads; i++) {
            int id = i;
            factory.newThread(() -> loop(id)).start();
        }
    }

    private void loop(int id) {
        try {
            while (running) {
                long start = System.nanoTime();
                try {
                    scenario.call(id);
                    stats.recordSuccess(System.nanoTime() - start);
                } catch (Exception e) {
                    boolean timedOut = isTimeout(e);
                    stats.recordFailure(timedOut ? Outcome.TIMEOUT : Outcome.FAILED, FailureCause.of(e));
                    if (!timedOut) {
                        // a failing operation usually fails fast: do not spin on it
                        Thread.sleep(1);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            finished.countDown();
        }
    }

    static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException || t instanceof PoyangTimeoutException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean awaitDrained(long timeoutMillis) throws InterruptedException {
        return finished.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public String describe() {
        return "sync, " + threads + (virtual ? " virtual" : " platform") + " threads";
    }
}
