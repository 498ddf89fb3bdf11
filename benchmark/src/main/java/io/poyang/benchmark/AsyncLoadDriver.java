package io.poyang.benchmark;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps up to --max-pending operations in flight on each client: it starts that many, and each
 * completion records its latency and starts the next one (on the thread that completed it, for
 * the rpc scenario the client's I/O thread). An operation that cannot even start is counted as
 * failed and retried a little later, so a dead server does not turn into a busy loop. So is one
 * that a client completes from inside the call that issued it (a request it rejects at once, such
 * as a value over its size limit): starting the next one there would recurse until the stack overflows.
 */
public final class AsyncLoadDriver implements LoadDriver {

    private static final long RETRY_DELAY_MILLIS = 10;

    private final Scenario scenario;
    private final RunStats stats;
    private final int maxPending;
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicBoolean reportedStartError = new AtomicBoolean();
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-retry");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean running;

    public AsyncLoadDriver(Scenario scenario, RunStats stats, int maxPending) {
        this.scenario = scenario;
        this.stats = stats;
        this.maxPending = maxPending;
    }

    @Override
    public void start() {
        running = true;
        for (int c = 0; c < scenario.clients(); c++) {
            for (int i = 0; i < maxPending; i++) {
                issue(new Op(c));
            }
        }
    }

    /**
     * Starts {@code op}'s next operation. One {@link Op} per in-flight slot is reused for every
     * operation of the slot, so the load generator allocates nothing per operation of its own (its
     * garbage would be charged to the client being measured).
     */
    private void issue(Op op) {
        inFlight.incrementAndGet();
        op.startNanos = System.nanoTime();
        op.issuingThread = Thread.currentThread();
        try {
            scenario.issue(op.client, op);
        } catch (Throwable t) {
            inFlight.decrementAndGet();
            stats.recordFailure(Outcome.FAILED, FailureCause.of(t));
            if (reportedStartError.compareAndSet(false, true)) {
                System.err.println("bench: an operation could not start: " + t + " (retrying; reported once)");
            }
            retryLater(op);
        } finally {
            op.issuingThread = null;
        }
    }

    /** Issues {@code op}'s next operation after {@link #RETRY_DELAY_MILLIS}, unless the driver stopped. */
    private void retryLater(Op op) {
        if (!running) {
            return;
        }
        try {
            retries.schedule(() -> {
                if (running) {
                    issue(op);
                }
            }, RETRY_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // stopped meanwhile
        }
    }

    /** One in-flight slot: its client and the start time of its current operation. */
    private final class Op implements OpCallback {
        private final int client;
        /** Written before the operation is issued, read by its completion (the scenario hands it over). */
        private long startNanos;
        /**
         * The thread inside {@link Scenario#issue} for this slot, null once it returned. Only that
         * thread can read itself here, and only while the call is under way: a completion that sees
         * its own thread came from inside the call.
         */
        private Thread issuingThread;

        Op(int client) {
            this.client = client;
        }

        @Override
        public void succeeded() {
            stats.recordSuccess(System.nanoTime() - startNanos);
            next();
        }

        @Override
        public void failed(Outcome outcome, String cause) {
            stats.recordFailure(outcome, cause);
            next();
        }

        /** The slot's operation has been counted: start the slot's next one. */
        private void next() {
            inFlight.decrementAndGet();
            if (issuingThread == Thread.currentThread()) {
                // completed inside issue(): an operation that could not start; not from here (recursion)
                retryLater(this);
            } else if (running) {
                issue(this);
            }
        }
    }

    @Override
    public void stop() {
        running = false;
        retries.shutdownNow();
    }

    @Override
    public boolean awaitDrained(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (inFlight.get() > 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    @Override
    public String describe() {
        return "async, max-pending " + maxPending + " per client";
    }
}
