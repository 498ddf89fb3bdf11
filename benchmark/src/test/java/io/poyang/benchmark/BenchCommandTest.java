package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

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
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
        assertFalse(json.contains("\"ops_per_sec\":0,"), json);
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
            Scenario stalling = new Scenario() {
                @Override
                public void setUp(BenchOptions options) {
                }

                @Override
                public int clients() {
                    return 1;
                }

                @Override
                public void issue(int client, OpCallback callback) {
                    boolean stalled = System.nanoTime() - stallFrom >= 0;
                    timer.schedule(() -> callback.done(stalled ? Outcome.TIMEOUT : Outcome.SUCCESS),
                            stalled ? 400 : 1, java.util.concurrent.TimeUnit.MILLISECONDS);
                }

                @Override
                public void call(int thread) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public void close() {
                }
            };
            BenchOptions o = BenchOptions.parse("--duration", "0.6", "--warmup", "0.3", "--max-pending", "10");
            Report r = BenchCommand.runScenario(stalling, o, new PrintStream(outBytes, true));
            assertTrue(r.success > 0);
            assertTrue(r.drainTimeout > 0, "timeouts while draining: " + r.drainTimeout);
            assertFalse(r.clean());
            assertTrue(r.toTable().contains("NOT CLEAN"), r.toTable());
            assertTrue(r.toJson().contains("\"drain_timeout\":" + r.drainTimeout), r.toJson());
        } finally {
            timer.shutdownNow();
        }
    }
}
