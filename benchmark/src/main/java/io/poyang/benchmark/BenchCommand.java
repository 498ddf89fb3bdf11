package io.poyang.benchmark;

import io.poyang.common.PoyangException;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code ./poyang bench}: parses the options, sets up the scenario, drives it, prints a timeline
 * line every second as the run goes (warm-up seconds marked), then the report. Exit codes: 0 done,
 * 1 the run failed (or had failures under --strict), 2 bad options or an op not built yet; ended by
 * a signal, the JVM's own: 130 for SIGINT (Ctrl-C), 143 for SIGTERM.
 */
public final class BenchCommand {

    /** How long the end of a run waits for operations still in flight. */
    private static final long DRAIN_MILLIS = 15_000;
    /**
     * How long the exit hook waits for a cleanup the run's own thread is doing, and then for that
     * thread to leave the run: longer than a node process may take to stop (15 s, then SIGKILL).
     */
    private static final long EXIT_WAIT_MILLIS = 60_000;

    private BenchCommand() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        BenchOptions o;
        try {
            o = BenchOptions.parse(args);
        } catch (UsageException e) {
            err.println("poyang bench: " + e.getMessage());
            return 2;
        }
        if (o.help) {
            out.print(BenchOptions.usage());
            return 0;
        }
        Scenario scenario = Scenarios.create(o.op);
        if (scenario == null) {
            err.println("poyang bench: " + Scenarios.notBuiltYet(o.op));
            return 2;
        }
        // Ctrl-C (or a kill) ends the JVM without running the finally below: the exit hook closes the
        // scenario (its servers, clients, node processes) and deletes its data directories then.
        Cleanup cleanup = new Cleanup(scenario, err, Thread.currentThread());
        Thread exitHook = new Thread(cleanup::onExit, "bench-exit-cleanup");
        Runtime.getRuntime().addShutdownHook(exitHook);
        try {
            Report report = runScenario(scenario, o, out);
            out.println(o.json() ? report.toJson() : report.toTable());
            if (o.strict && !report.clean()) {
                err.println("poyang bench: " + report.failed + " operations failed and " + report.timeout
                        + " timed out, " + report.drainFailed + " failed and " + report.drainTimeout
                        + " timed out after the end" + (report.drained ? "" : ", and some never ended") + " (--strict)");
                return 1;
            }
            return 0;
        } catch (UsageException e) {
            err.println("poyang bench: " + e.getMessage());
            return 2;
        } catch (Exception e) {
            if (cleanup.exiting()) {
                // interrupted by the exit hook: it said so, and the JVM ends once it has cleaned up
                return 130;
            }
            reportFailure(e, err);
            return 1;
        } finally {
            cleanup.run();
            try {
                Runtime.getRuntime().removeShutdownHook(exitHook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs the same cleanup, once
            }
            cleanup.runEnded();
        }
    }

    /**
     * Says why the run failed. Failures a user can meet (a server that cannot be reached or died, a
     * node that would not start) get one line, or the node's log; anything else is a bug and gets its
     * stack trace.
     */
    static void reportFailure(Exception e, PrintStream err) {
        if (e instanceof RunFailedException || e instanceof PoyangException || e instanceof IOException
                || e instanceof UncheckedIOException) {
            err.println("poyang bench: the run failed: " + e.getMessage());
        } else {
            err.println("poyang bench: the run failed: " + e);
            e.printStackTrace(err);
        }
    }

    /**
     * Closes the scenario and deletes the data directories left, once, from the finally or the exit
     * hook. The JVM ends as soon as its exit hooks have returned, so the hook waits for a cleanup the
     * run's thread has begun, and then for that thread to leave the run (what it set up meanwhile is
     * stopped on its way out), before deleting what is still left.
     */
    static final class Cleanup implements Runnable {
        private final Scenario scenario;
        private final PrintStream err;
        private final Thread runner;
        private final AtomicBoolean started = new AtomicBoolean();
        private final CountDownLatch cleanedUp = new CountDownLatch(1);
        private final CountDownLatch runEnded = new CountDownLatch(1);
        private volatile boolean exiting;

        Cleanup(Scenario scenario, PrintStream err, Thread runner) {
            this.scenario = scenario;
            this.err = err;
            this.runner = runner;
        }

        /**
         * The exit hook: says why the run stops early (the stop can take some seconds), wakes the
         * thread running the benchmark so that it stops its load and prints no more timeline lines,
         * then cleans up, or waits for the cleanup under way, and for the run's thread to end.
         */
        void onExit() {
            exiting = true;
            if (started.compareAndSet(false, true)) {
                runner.interrupt();
                err.println("poyang bench: interrupted: stopping the servers and deleting their data");
                cleanUpOnce();
            } else {
                err.println("poyang bench: interrupted: waiting for the servers to stop and their data to be deleted");
                await(cleanedUp);
            }
            await(runEnded);
            // directories the run's thread made after the cleanup above (it was setting up)
            BenchDirs.deleteLeftovers();
        }

        /** True once the JVM is exiting before the run's end (Ctrl-C, a kill). */
        boolean exiting() {
            return exiting;
        }

        @Override
        public void run() {
            if (started.compareAndSet(false, true)) {
                cleanUpOnce();
            }
        }

        /** The run's thread is leaving the run: the exit hook need not wait any longer. */
        void runEnded() {
            runEnded.countDown();
        }

        private void cleanUpOnce() {
            try {
                scenario.close();
            } catch (Exception e) {
                err.println("poyang bench: cleanup failed: " + e);
            } finally {
                BenchDirs.deleteLeftovers();
                cleanedUp.countDown();
            }
        }

        private void await(CountDownLatch latch) {
            try {
                if (!latch.await(EXIT_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                    err.println("poyang bench: gave up waiting for the run to stop after " + EXIT_WAIT_MILLIS + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Sets up, warms up, measures and reports one run. Interrupting the thread that runs it stops
     * the load and ends the run with an {@link InterruptedException}, with no more timeline lines.
     */
    static Report runScenario(Scenario scenario, BenchOptions o, PrintStream out) throws Exception {
        scenario.setUp(o);
        RunStats stats = new RunStats();
        LoadDriver driver = scenario.ownDriver(stats, o);
        if (driver == null) {
            driver = o.sync ? new SyncLoadDriver(scenario, stats, o.threads)
                    : new AsyncLoadDriver(scenario, stats, o.maxPending);
        }
        out.printf(Locale.ROOT, "bench --op %s: %s, %d client(s), warm-up %.1f s, duration %.1f s%n",
                o.op, driver.describe(), scenario.clients(), o.warmupSeconds, o.durationSeconds);
        out.printf(Locale.ROOT, "%8s %12s %12s %9s %9s%n", "time", "ops/s", "success", "failed", "timeout");

        long start = System.nanoTime();
        long warmupEnd = start + toNanos(o.warmupSeconds);
        long end = warmupEnd + toNanos(o.durationSeconds);
        RunStats.Counts atWarmupEnd = null;
        // the middle of the measured time: the report compares the rates of the two halves
        RunStats.Counts atMiddle = null;
        long middleNanos = 0;
        long middle = warmupEnd + toNanos(o.durationSeconds) / 2;
        long measureStart = start;
        ProcessCpu cpu = new ProcessCpu(scenario.serverPids());
        long ownCpuStart = 0;
        long serverCpuStart = 0;
        if (o.warmupSeconds <= 0) {
            stats.startMeasuring();
            atWarmupEnd = stats.snapshot();
            ownCpuStart = cpu.ownNanos();
            serverCpuStart = cpu.serversNanos();
            startWindow(scenario);
        }
        driver.start();

        RunStats.Counts last = stats.snapshot();
        long lastNanos = start;
        long nextTick = start + TimeUnit.SECONDS.toNanos(1);
        while (true) {
            checkFailure(scenario, driver);
            long now = System.nanoTime();
            long wake = Math.min(nextTick, atWarmupEnd == null ? warmupEnd : atMiddle == null ? middle : end);
            if (wake - now > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wake - now);
                } catch (InterruptedException e) {
                    // the exit hook (Ctrl-C, a kill) wants the run to end: no more load, no more lines
                    driver.stop();
                    throw e;
                }
                continue;
            }
            if (atWarmupEnd == null && now - warmupEnd >= 0) {
                atWarmupEnd = stats.snapshot();
                stats.startMeasuring();
                measureStart = now;
                ownCpuStart = cpu.ownNanos();
                serverCpuStart = cpu.serversNanos();
                startWindow(scenario);
            }
            if (atWarmupEnd != null && atMiddle == null && now - middle >= 0) {
                atMiddle = stats.snapshot();
                middleNanos = now;
            }
            boolean finished = atWarmupEnd != null && now - end >= 0;
            if (now - nextTick >= 0 || finished) {
                RunStats.Counts c = stats.snapshot();
                RunStats.Counts d = c.minus(last);
                double secs = (now - lastNanos) / 1e9;
                if (secs > 0.05 || !finished) {
                    // ops/s counts successes, as the report's does: failures retried at once would
                    // otherwise show a storm of rejections as throughput
                    out.printf(Locale.ROOT, "%7.1fs %,12.0f %,12d %,9d %,9d%s%n", (now - start) / 1e9,
                            d.success / secs, d.success, d.failed, d.timeout, lastNanos - warmupEnd < 0 ? "  (warm-up)" : "");
                }
                last = c;
                lastNanos = now;
                nextTick += TimeUnit.SECONDS.toNanos(1);
            }
            if (finished) {
                break;
            }
        }
        long measureEnd = System.nanoTime();
        RunStats.Counts atEnd = stats.snapshot();
        CounterWindow counters = scenario.counterWindow();
        if (counters != null) {
            counters.end();
        }
        // unknown (-1) when a reading failed at either end (a server process gone): no figure rather than a wrong one
        long ownCpu = ProcessCpu.between(ownCpuStart, cpu.ownNanos());
        long serverCpu = ProcessCpu.between(serverCpuStart, cpu.serversNanos());
        stats.stopMeasuring();
        driver.stop();
        boolean drained = driver.awaitDrained(DRAIN_MILLIS);
        if (!drained) {
            out.println("(some operations were still in flight " + DRAIN_MILLIS + " ms after the end)");
        }
        // a server that died in the last second: the window's figures are not a cluster's
        checkFailure(scenario, driver);
        // Operations in flight at the end finish during the drain: their failures count too (a
        // cluster that stalls just before the end must not give a clean report).
        RunStats.Counts drain = stats.snapshot().minus(atEnd);

        RunStats.Counts window = atEnd.minus(atWarmupEnd);
        Report r = new Report();
        r.op = o.op;
        r.nodes = o.clusterNodes();
        r.groups = o.groups;
        r.clients = scenario.clients();
        r.maxPending = o.sync ? 0 : o.maxPending;
        r.valueSize = o.valueSize;
        r.mode = driver.describe();
        r.durationSeconds = (measureEnd - measureStart) / 1e9;
        r.warmupSeconds = o.warmupSeconds;
        r.success = window.success;
        r.failed = window.failed;
        r.timeout = window.timeout;
        r.drainFailed = drain.failed;
        r.drainTimeout = drain.timeout;
        r.drained = drained;
        r.failureCauses = window.causes;
        r.drainFailureCauses = drain.causes;
        r.latencies(stats.histogram());
        if (atMiddle != null && middleNanos - measureStart > 0 && measureEnd - middleNanos > 0) {
            r.firstHalfOpsPerSecond = atMiddle.minus(atWarmupEnd).success / ((middleNanos - measureStart) / 1e9);
            r.secondHalfOpsPerSecond = atEnd.minus(atMiddle).success / ((measureEnd - middleNanos) / 1e9);
        }
        r.extras.putAll(scenario.extras(r.durationSeconds));
        cpuPerOp(r, ownCpu, serverCpu, cpu.serversNamed(), window.success);
        return r;
    }

    /** Ends the run when the scenario says it cannot go on (a server process it started exited). */
    private static void checkFailure(Scenario scenario, LoadDriver driver) throws RunFailedException {
        String failure = scenario.failure();
        if (failure != null) {
            driver.stop();
            throw new RunFailedException(failure);
        }
    }

    private static void startWindow(Scenario scenario) {
        CounterWindow counters = scenario.counterWindow();
        if (counters != null) {
            counters.start();
        }
    }

    /**
     * CPU microseconds per successful operation over the measured window, the unit of ops/s (a run
     * whose operations fail fast must not look cheaper): this process (the client, and the servers
     * when they run in it) and, when the scenario names server processes, theirs. Named servers whose
     * CPU is unknown ({@code serverCpuNanos} -1) leave the total and their share null: the client's
     * alone would pass for the total.
     */
    static void cpuPerOp(Report r, long ownCpuNanos, long serverCpuNanos, boolean serversNamed, long successes) {
        if (successes <= 0 || ownCpuNanos < 0) {
            return;
        }
        double own = ownCpuNanos / 1e3 / successes;
        if (!serversNamed) {
            r.extras.put("cpu_us_per_op", round2(own));
            return;
        }
        Double server = serverCpuNanos < 0 ? null : round2(serverCpuNanos / 1e3 / successes);
        r.extras.put("cpu_us_per_op", server == null ? null : round2(own + serverCpuNanos / 1e3 / successes));
        r.extras.put("client_cpu_us_per_op", round2(own));
        r.extras.put("server_cpu_us_per_op", server);
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }

    private static long toNanos(double seconds) {
        return (long) (seconds * 1e9);
    }
}
