package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

class BenchCommandTest {

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();

    private int run(String... args) {
        return BenchCommand.run(args, new PrintStream(outBytes, true), new PrintStream(errBytes, true));
    }

    private String out() {
        return new String(outBytes.toByteArray(), StandardCharsets.UTF_8);
    }

    private String err() {
        return new String(errBytes.toByteArray(), StandardCharsets.UTF_8);
    }

    @Test
    void helpExitsZero() {
        assertEquals(0, run("--help"));
        assertTrue(out().startsWith("usage: poyang bench"));
    }

    @Test
    void badOptionExitsTwoWithTheReason() {
        assertEquals(2, run("--max-pending", "lots"));
        assertTrue(err().contains("--max-pending takes a whole number"), err());
    }

    @Test
    void fiberOpRunsAndReportsSwitchesAsOpsPerSecond() {
        assertEquals(0, run("--op", "fiber", "--duration", "0.5", "--warmup", "0", "--output", "json"));
        String[] lines = out().trim().split("\n");
        String json = lines[lines.length - 1];
        assertTrue(json.startsWith("{\"op\":\"fiber\""), json);
        assertTrue(json.contains("\"virtual_thread_switches_per_sec\":"), json);
        assertFalse(json.contains("\"ops_per_sec\":0,"), json);
    }

    @Test
    void logOpAppendsWithFsyncAndReportsItsFigures() {
        assertEquals(0, run("--op", "log", "--duration", "0.5", "--warmup", "0.2", "--output", "json", "--strict"),
                err());
        String[] lines = out().trim().split("\n");
        String json = lines[lines.length - 1];
        assertTrue(json.startsWith("{\"op\":\"log\""), json);
        for (String key : new String[]{"mb_per_sec", "fsyncs_per_sec", "raw_fsyncs_per_sec", "p99_ms"}) {
            assertTrue(json.contains("\"" + key + "\":"), key + " missing in " + json);
        }
        assertTrue(json.contains("\"value_size\":256"), json);
        assertFalse(json.contains("\"ops_per_sec\":0,"), json);
        assertFalse(json.contains("\"fsyncs_per_sec\":0,"), json);
    }

    @Test
    void raftOpWritesThroughThreeNodesAndReportsItsFigures() {
        assertEquals(0, run("--op", "raft", "--nodes", "3", "--groups", "2", "--duration", "1.5s", "--warmup", "0.5",
                "--max-pending", "200", "--output", "json", "--strict"), err());
        String[] lines = out().trim().split("\n");
        String json = lines[lines.length - 1];
        assertTrue(json.startsWith("{\"op\":\"raft\""), json);
        for (String key : new String[]{"log_fsyncs_per_sec", "log_fsync_avg_ms", "log_mb_per_sec", "appends_sent_per_sec", "leaders",
                "p99_ms", "first_half_ops_per_sec", "second_half_ops_per_sec", "second_half_change_pct"}) {
            assertTrue(json.contains("\"" + key + "\":"), key + " missing in " + json);
        }
        assertFalse(json.contains("\"log_mb_per_sec\":0,"), json);
        assertTrue(json.contains("\"nodes\":3"), json);
        assertTrue(json.contains("\"value_size\":256"), json);
        // the defaults for several groups: the journal, batched appends, every leader on node 1
        assertTrue(json.contains("\"log_journal\":true"), json);
        assertTrue(json.contains("\"batch_appends\":true"), json);
        assertTrue(json.contains("\"leaders_on\":1"), json);
        assertTrue(json.contains("\"leaders\":\"1,1\""), json);
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
        assertFalse(json.contains("\"ops_per_sec\":0,"), json);
    }

    /** The last line of stdout: the JSON report. */
    private String jsonReport() {
        String[] lines = out().trim().split("\n");
        return lines[lines.length - 1];
    }

    @Test
    void raftOpMovesEveryLeaderToTheNodeAskedAndRunsWithTheJournalAndBatchedAppends() {
        assertEquals(0, run("--op", "raft", "--nodes", "3", "--groups", "2", "--leaders", "2", "--log-journal", "true",
                "--batch-appends", "true", "--duration", "1s", "--warmup", "0.3", "--max-pending", "200",
                "--output", "json", "--strict"), err());
        assertBothLeadersOnNode2WithTheJournalAndBatchedAppends(jsonReport());
    }

    @Test
    void inProcessDtKvMovesEveryLeaderToTheNodeAskedAndRunsWithTheJournalAndBatchedAppends() {
        assertEquals(0, run("--op", "put", "--in-process", "--nodes", "3", "--groups", "2", "--leaders", "2",
                "--log-journal", "true", "--batch-appends", "true", "--keys", "500", "--duration", "1s", "--warmup", "0.3",
                "--max-pending", "200", "--output", "json", "--strict"), err());
        assertBothLeadersOnNode2WithTheJournalAndBatchedAppends(jsonReport());
    }

    private static void assertBothLeadersOnNode2WithTheJournalAndBatchedAppends(String json) {
        assertTrue(json.contains("\"leaders_on\":2"), json);
        assertTrue(json.contains("\"leaders\":\"2,2\""), json);
        assertTrue(json.contains("\"log_journal\":true"), json);
        assertTrue(json.contains("\"batch_appends\":true"), json);
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
    }

    @Test
    void raftReadOpReadsEachKindOnThreeNodesAndReportsItsFigures() {
        String[][] kinds = {{"lease", "lease_reads_per_sec"}, {"read-index", "heartbeat_rounds_per_sec"},
                {"follower", "read_index_requests_per_sec"}};
        for (String[] k : kinds) {
            outBytes.reset();
            assertEquals(0, run("--op", "raft-read", "--nodes", "3", "--read-kind", k[0], "--keys", "500", "--duration", "1s",
                    "--warmup", "0.3", "--max-pending", "200", "--output", "json", "--strict"), err());
            String[] lines = out().trim().split("\n");
            String json = lines[lines.length - 1];
            assertTrue(json.startsWith("{\"op\":\"raft-read\""), json);
            assertTrue(json.contains("\"read\":\"" + k[0] + "\""), json);
            assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
            assertFalse(json.contains("\"ops_per_sec\":0,"), json);
            // the kind's own counter moved: the reads went the way they were asked to
            assertFalse(json.contains("\"" + k[1] + "\":0,"), k[0] + ": " + json);
        }
        assertEquals(2, run("--op", "raft-read", "--read-kind", "follower"), "follower reads on one node");
        assertTrue(err().contains("--nodes 3"), err());
    }

    @Test
    void putGetAndMixedRunAgainstInProcessDtKvNodes() {
        String[][] runs = {
                {"--op", "put", "--nodes", "1"},
                {"--op", "get", "--nodes", "1", "--batch-size", "10"},
                {"--op", "mixed", "--nodes", "3", "--groups", "2"},
                {"--op", "put", "--nodes", "1", "--sync", "--threads", "8"},
        };
        for (String[] r : runs) {
            String[] args = new String[r.length + 10];
            System.arraycopy(r, 0, args, 0, r.length);
            System.arraycopy(new String[]{"--in-process", "--duration", "1", "--warmup", "0.5", "--keys", "500",
                    "--output", "json", "--strict"}, 0, args, r.length, 10);
            assertEquals(0, run(args), String.join(" ", r) + ": " + err());
            String[] lines = out().trim().split("\n");
            String json = lines[lines.length - 1];
            assertTrue(json.contains("\"op\":\"" + r[1] + "\""), json);
            assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
            assertFalse(json.contains("\"success\":0,"), json);
        }
    }

    @Test
    void rpcRunPrintsTimelineAndJsonOnTheLastLine() {
        assertEquals(0, run("--op", "rpc", "--duration", "1.2s", "--warmup", "0.5", "--max-pending", "200",
                "--output", "json", "--strict"), err());
        String[] lines = out().trim().split("\n");
        String json = lines[lines.length - 1];
        assertTrue(json.startsWith("{") && json.endsWith("}"), json);
        for (String key : new String[]{"op", "nodes", "groups", "clients", "max_pending", "value_size", "duration_s",
                "ops_per_sec", "success", "failed", "timeout", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"}) {
            assertTrue(json.contains("\"" + key + "\":"), key + " missing in " + json);
        }
        assertTrue(json.contains("\"op\":\"rpc\""), json);
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
        assertFalse(json.contains("\"success\":0,"), json);
        assertTrue(out().contains("(warm-up)"), "the timeline marks warm-up seconds: " + out());
        assertTrue(lines.length >= 4, "timeline lines expected: " + out());
    }

    @Test
    void syncRpcRunPrintsATable() {
        assertEquals(0, run("--op", "rpc", "--sync", "--threads", "4", "--duration", "1", "--warmup", "0",
                "--value-size", "1000"), err());
        assertTrue(out().contains("ops/s"), out());
        assertTrue(out().contains("sync, 4"), out());
        assertTrue(out().contains("latency ms"), out());
    }

    @Test
    void operationsThatTimeOutWhileTheLastOnesDrainMakeTheRunNotClean() throws Exception {
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            // fine until 0.2 s before the end of the measured window, then every operation times out
            // 0.4 s later: after the window, while the run drains
            long stallFrom = System.nanoTime() + 700_000_000L;
            Scenario stalling = new AsyncOneClientScenario() {
                @Override
                public void issue(int client, OpCallback callback) {
                    boolean stalled = System.nanoTime() - stallFrom >= 0;
                    timer.schedule(() -> {
                        if (stalled) {
                            callback.failed(Outcome.TIMEOUT, "PoyangTimeoutException TIMEOUT");
                        } else {
                            callback.succeeded();
                        }
                    }, stalled ? 400 : 1, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
            };
            BenchOptions o = BenchOptions.parse("--duration", "0.6", "--warmup", "0.3", "--max-pending", "10");
            Report r = BenchCommand.runScenario(stalling, o, new PrintStream(outBytes, true));
            assertTrue(r.success > 0);
            assertTrue(r.drainTimeout > 0, "timeouts while draining: " + r.drainTimeout);
            assertFalse(r.clean());
            assertTrue(r.toTable().contains("NOT CLEAN"), r.toTable());
            assertTrue(r.toJson().contains("\"drain_timeout\":" + r.drainTimeout), r.toJson());
            // and why: the cause of the drain's timeouts, in the NOT CLEAN line and the JSON
            assertEquals(java.util.Collections.singletonMap("PoyangTimeoutException TIMEOUT", r.drainTimeout),
                    r.drainFailureCauses);
            assertTrue(r.toTable().contains(String.format(java.util.Locale.ROOT,
                    "timed out (PoyangTimeoutException TIMEOUT %,d)", r.drainTimeout)), r.toTable());
            assertTrue(r.toJson().contains("\"drain_failure_causes\":{\"PoyangTimeoutException TIMEOUT\":" + r.drainTimeout + "}"),
                    r.toJson());
        } finally {
            timer.shutdownNow();
        }
    }

    /**
     * A cluster that answers nothing for the first half of the measured window, then catches up (a
     * leader election after --warmup 0): no failure, so only the halves can tell; the first half is
     * a measured 0, and the report calls the run not steady.
     */
    @Test
    void aRunThatStallsThroughItsFirstHalfIsNotSteady() throws Exception {
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            // the window opens as runScenario starts (--warmup 0); its middle is 0.4 s later
            long stallEnd = System.nanoTime() + 550_000_000L;
            Scenario stalling = new AsyncOneClientScenario() {
                @Override
                public void issue(int client, OpCallback callback) {
                    long delayNanos = Math.max(1_000_000L, stallEnd - System.nanoTime());
                    timer.schedule(callback::succeeded, delayNanos, TimeUnit.NANOSECONDS);
                }
            };
            BenchOptions o = BenchOptions.parse("--duration", "0.8", "--warmup", "0", "--max-pending", "10");
            Report r = BenchCommand.runScenario(stalling, o, new PrintStream(outBytes, true));
            assertEquals(0, r.firstHalfOpsPerSecond, out());
            assertTrue(r.secondHalfOpsPerSecond > 0, out());
            assertTrue(r.clean());
            assertTrue(r.toTable().contains("NOT STEADY: no operation succeeded in the first half"), r.toTable());
            assertTrue(r.toJson().contains("\"steady\":false"), r.toJson());
        } finally {
            timer.shutdownNow();
        }
    }

    /**
     * The timeline's ops/s counts successes, as the totals' does: a run whose every operation fails
     * shows 0 there, not its rate of failures (rejections retried at once looked like throughput).
     */
    @Test
    void theTimelinesOpsPerSecondCountsSuccessesOnly() throws Exception {
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            Scenario failing = new AsyncOneClientScenario() {
                @Override
                public void issue(int client, OpCallback callback) {
                    timer.schedule(() -> callback.failed(Outcome.FAILED, "x"), 1, TimeUnit.MILLISECONDS);
                }
            };
            BenchOptions o = BenchOptions.parse("--duration", "1.3", "--warmup", "0", "--max-pending", "10");
            Report r = BenchCommand.runScenario(failing, o, new PrintStream(outBytes, true));
            assertTrue(r.failed > 0, out());
            String[] lines = out().trim().split("\n");
            assertTrue(lines[1].trim().startsWith("time") && lines[1].contains("ops/s"), out());
            assertTrue(lines.length >= 4, "a line a second and one at the end: " + out());
            for (int i = 2; i < lines.length; i++) {
                String[] fields = lines[i].trim().split("\\s+");
                assertEquals("0", fields[1], "ops/s of " + lines[i]);
                assertNotEquals("0", fields[3], "failed of " + lines[i]);
            }
        } finally {
            timer.shutdownNow();
        }
    }

    /**
     * Every operation burns 50 µs of CPU and one in a hundred succeeds: the report's CPU per
     * operation is per success (at least 50 µs × operations / successes), the unit of its ops/s; it
     * was per completion, so the failing run looked a hundred times cheaper.
     */
    @Test
    void cpuPerOpIsChargedToTheSuccessfulOperations() throws Exception {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads.isCurrentThreadCpuTimeSupported());
        long spinNanos = 50_000;
        java.util.concurrent.ExecutorService worker = java.util.concurrent.Executors.newSingleThreadExecutor();
        AtomicInteger completed = new AtomicInteger();
        try {
            Scenario mostlyFailing = new AsyncOneClientScenario() {
                @Override
                public void issue(int client, OpCallback callback) {
                    worker.execute(() -> {
                        long until = threads.getCurrentThreadCpuTime() + spinNanos;
                        while (threads.getCurrentThreadCpuTime() < until) {
                            // CPU the operation costs, whatever its outcome
                        }
                        if (completed.incrementAndGet() % 100 == 0) {
                            callback.succeeded();
                        } else {
                            callback.failed(Outcome.FAILED, "x");
                        }
                    });
                }
            };
            BenchOptions o = BenchOptions.parse("--duration", "0.6", "--warmup", "0", "--max-pending", "10");
            Report r = BenchCommand.runScenario(mostlyFailing, o, new PrintStream(outBytes, true));
            assertTrue(r.success > 0 && r.failed > 0, r.toTable());
            double spentPerSuccessMicros = spinNanos / 1e3 * (r.success + r.failed) / r.success;
            Object cpuPerOp = r.extras.get("cpu_us_per_op");
            assertNotNull(cpuPerOp, r.toTable());
            // half the spin alone: the edges of the window may move a handful of operations either way
            assertTrue((Double) cpuPerOp >= spentPerSuccessMicros / 2, "cpu_us_per_op " + cpuPerOp + ", spin alone "
                    + spentPerSuccessMicros + " µs per success: " + r.toTable());
        } finally {
            worker.shutdownNow();
        }
    }

    /** A scenario that does nothing: its operations succeed at once, on another thread. */
    private static class IdleScenario extends AsyncOneClientScenario {
        final AtomicInteger closes = new AtomicInteger();

        @Override
        public void issue(int client, OpCallback callback) {
            new Thread(callback::succeeded).start();
        }

        @Override
        public void close() throws Exception {
            closes.incrementAndGet();
        }
    }

    /** A node process killed mid-run: the run ends and says so, it does not measure on for the whole --duration. */
    @Test
    void aScenarioThatCannotGoOnEndsTheRunWithItsReason() throws Exception {
        Scenario dead = new IdleScenario() {
            @Override
            public String failure() {
                return "node 1 (pid 42) exited with code 137 (signal 9) during the run";
            }
        };
        BenchOptions o = BenchOptions.parse("--duration", "1h", "--warmup", "0", "--max-pending", "1");
        RunFailedException e = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> assertThrows(RunFailedException.class, () -> BenchCommand.runScenario(dead, o, new PrintStream(outBytes, true))));
        assertEquals("node 1 (pid 42) exited with code 137 (signal 9) during the run", e.getMessage());
    }

    /**
     * A value over DtKV's limit is a bad option, told before any server starts (the client rejected
     * every put inside the call, and the load driver recursed on it for minutes).
     */
    @Test
    void aValueOverDtKvsLimitIsABadOption() {
        assertEquals(2, assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run("--op", "put", "--value-size", "5000000",
                "--in-process", "--duration", "0.5", "--warmup", "0")));
        assertTrue(err().startsWith("poyang bench: --value-size is at most 4194304 for --op put (DtKV's value limit)"), err());
    }

    /**
     * Gets of values over ~8.3 KB: the keys written before the run (600 × 16 KiB, over one request's
     * 8,323,072 bytes) go in batches that fit (one batch of all of them failed the setup, exit 1).
     */
    @Test
    void getsOfLargeValuesPreloadTheirKeysAndRun() {
        assertEquals(0, run("--op", "get", "--in-process", "--keys", "600", "--value-size", "16384", "--duration", "0.3",
                "--warmup", "0", "--output", "json", "--strict"), err());
        String[] lines = out().trim().split("\n");
        String json = lines[lines.length - 1];
        assertTrue(json.contains("\"value_size\":16384"), json);
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
        assertFalse(json.contains("\"success\":0,"), json);
        assertTrue(json.contains("\"leaders\":\"1\""), "the one node leads the one group: " + json);
    }

    /**
     * Asynchronous gets that find no value (the keys were not written) are failures the report
     * counts and names, KvException NOT_FOUND, as --sync does: they were counted as successes.
     */
    @Test
    void asyncGetsThatFindNoValueAreReportedAsNotFoundFailures() throws Exception {
        Scenario scenario = io.poyang.benchmark.kv.KvScenarios.withoutPreload("get");
        try {
            BenchOptions o = BenchOptions.parse("--op", "get", "--in-process", "--keys", "100", "--duration", "0.3",
                    "--warmup", "0", "--max-pending", "50");
            Report r = BenchCommand.runScenario(scenario, o, new PrintStream(outBytes, true));
            assertEquals(0, r.success, r.toTable());
            assertTrue(r.failed > 0, r.toTable());
            assertEquals(java.util.Collections.singletonMap("KvException NOT_FOUND", r.failed), r.failureCauses);
            assertTrue(r.toTable().contains(String.format(java.util.Locale.ROOT, "causes       KvException NOT_FOUND %,d",
                    r.failed)), r.toTable());
        } finally {
            scenario.close();
        }
    }

    /**
     * Batches over DtKV's request size (100 values of 100,000 bytes) are a bad option, told before
     * any server starts: every batchPut failed in the client, and the run reported ops/s 0 and NOT CLEAN.
     */
    @Test
    void batchesOverDtKvsRequestSizeAreABadOption() {
        assertEquals(2, assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run("--op", "put", "--in-process",
                "--batch-size", "100", "--value-size", "100000", "--duration", "0.2", "--warmup", "0")));
        assertTrue(err().startsWith("poyang bench: --batch-size 100 with --value-size 100000 makes requests (or batchGet"
                + " answers) of up to "), err());
        assertTrue(err().contains("DtKV takes at most 8323072: at most 83 keys of this size per batch"), err());
    }

    @Test
    void moreWritesInFlightThanAClientsSessionWindowIsABadOption() {
        assertEquals(2, assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run("--op", "mixed", "--in-process",
                "--max-pending", "40000", "--duration", "0.2", "--warmup", "0")));
        assertTrue(err().startsWith("poyang bench: --max-pending 40000 for --op mixed: a KvClient keeps at most 32768"
                + " writes in flight to one group; use more --clients"), err());
    }

    @Test
    void aPreloadOverTwoGibibytesIsABadOption() {
        // 10,000 keys of 4 MiB: 40 GiB that the node would hold in memory, after minutes of writing
        assertEquals(2, assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run("--op", "get", "--in-process",
                "--value-size", "4194304", "--duration", "0.2", "--warmup", "0")));
        assertTrue(err().startsWith("poyang bench: --op get preloads --keys 10000 values of --value-size 4194304,"
                + " 41943040000 bytes; at most 2147483648 (2 GiB) are allowed: lower --keys or --value-size"), err());
    }

    /** With --servers the report's nodes are the servers listed (it said 1, the --nodes default, for a 3-node cluster). */
    @Test
    void theReportOfARunAgainstServersCountsTheServersListed() throws Exception {
        BenchOptions o = BenchOptions.parse("--servers", "a:1,b:2,c:3", "--duration", "0.2", "--warmup", "0", "--max-pending", "1");
        Report r = BenchCommand.runScenario(new IdleScenario(), o, new PrintStream(outBytes, true));
        assertEquals(3, r.nodes);
        assertTrue(r.toJson().contains("\"nodes\":3,"), r.toJson());
    }

    /** What a user can meet (an unreachable server, a directory that cannot be made): one line, no stack trace. */
    @Test
    void aRunThatFailsSaysWhyInOneLineWithoutAStackTrace() {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("POYANG_BENCH_DIR") == null,
                "the benchmark's directories go to java.io.tmpdir");
        String tmp = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", tmp + "/poyang-no-such-dir/below");
        try {
            assertEquals(1, run("--op", "log", "--duration", "0.5", "--warmup", "0"));
        } finally {
            System.setProperty("java.io.tmpdir", tmp);
        }
        String[] lines = err().trim().split("\n");
        assertEquals(1, lines.length, err());
        assertTrue(lines[0].startsWith("poyang bench: the run failed: ") && lines[0].contains("poyang-no-such-dir"), err());
    }

    /**
     * Ctrl-C while the run's own thread is stopping the servers (the run had ended): the exit hook
     * must wait for that to finish, since the JVM ends as soon as its hooks return (the data
     * directory of the nodes was left, and with a SIGINT to the benchmark alone, a node process).
     */
    @Test
    void theExitHookWaitsForACleanupUnderWayOnTheRunsThread() throws Exception {
        CountDownLatch closing = new CountDownLatch(1);
        CountDownLatch mayFinish = new CountDownLatch(1);
        IdleScenario slowToClose = new IdleScenario() {
            @Override
            public void close() throws Exception {
                super.close();
                closing.countDown();
                mayFinish.await();
            }
        };
        Thread runner = new Thread(() -> { });
        BenchCommand.Cleanup cleanup = new BenchCommand.Cleanup(slowToClose, new PrintStream(errBytes, true), runner);
        Thread runsThread = new Thread(() -> {
            cleanup.run();
            cleanup.runEnded();
        });
        runsThread.start();
        assertTrue(closing.await(10, TimeUnit.SECONDS));
        Thread hook = new Thread(cleanup::onExit);
        hook.start();
        Thread.State state = waitUntilBlockedOrEnded(hook);
        assertNotEquals(Thread.State.TERMINATED, state, "the hook returned while the servers were still stopping");
        mayFinish.countDown();
        hook.join(10_000);
        assertFalse(hook.isAlive());
        runsThread.join(10_000);
        assertEquals(1, slowToClose.closes.get(), "closed once");
        assertTrue(cleanup.exiting());
    }

    /**
     * Ctrl-C while the run's thread is setting up: the hook cleans up, then waits for that thread to
     * leave the run before the JVM ends, and deletes what it made meanwhile.
     */
    @Test
    void theExitHookDeletesWhatTheRunsThreadMadeAfterTheCleanup() throws Exception {
        IdleScenario scenario = new IdleScenario();
        CountDownLatch settingUp = new CountDownLatch(1);
        AtomicReference<Path> madeLate = new AtomicReference<>();
        AtomicReference<BenchCommand.Cleanup> cleanup = new AtomicReference<>();
        Thread runsThread = new Thread(() -> {
            try {
                settingUp.countDown();
                new CountDownLatch(1).await();   // a setup step, until the hook interrupts it
            } catch (InterruptedException e) {
                try {
                    // the setup step on its way out, after the hook's cleanup
                    madeLate.set(BenchDirs.create("poyang-bench-test-"));
                } catch (java.io.IOException io) {
                    throw new java.io.UncheckedIOException(io);
                }
            } finally {
                cleanup.get().run();
                cleanup.get().runEnded();
            }
        });
        cleanup.set(new BenchCommand.Cleanup(scenario, new PrintStream(errBytes, true), runsThread));
        runsThread.start();
        assertTrue(settingUp.await(10, TimeUnit.SECONDS));
        cleanup.get().onExit();
        assertNotNull(madeLate.get(), "the run's thread ended before the hook returned");
        assertFalse(Files.exists(madeLate.get()), "left behind: " + madeLate.get());
        assertEquals(1, scenario.closes.get());
        assertTrue(err().contains("poyang bench: interrupted: stopping the servers and deleting their data"), err());
    }

    /** Waits until {@code t} waits (on a lock, a latch, a sleep) or ended; returns which. */
    private static Thread.State waitUntilBlockedOrEnded(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            Thread.State s = t.getState();
            if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING || s == Thread.State.BLOCKED
                    || s == Thread.State.TERMINATED) {
                return s;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);   // poll interval; the loop has a deadline
        }
        return t.getState();
    }
}
