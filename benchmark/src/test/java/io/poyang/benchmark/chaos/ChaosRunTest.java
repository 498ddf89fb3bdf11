package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CI-sized chaos run: three real node processes on loopback, eight clients on sixteen keys for
 * about 60 s while every fault kind is injected at least once (the run stretches
 * on a slow machine until each kind had its turn), then the history and the nodes' final state are
 * checked. It must come out linearizable with every node agreeing; when it does not, the report with
 * the failing windows is in the assertion message, and the history stays in
 * {@code benchmark/target/chaos-run-test-history.txt} for {@code ./poyang chaos --check}.
 */
class ChaosRunTest {

    @Test
    void threeNodeProcessesSurviveEveryFaultKindAndTheHistoryIsLinearizable() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true);
        ProcessChaosRunner runner = new ProcessChaosRunner();
        // Kept after the test (target/ of the module), so a failure can be replayed with --check.
        Path history = Paths.get("target", "chaos-run-test-history.txt").toAbsolutePath();
        int code = ChaosCommand.run(new String[] {"--nodes", "3", "--duration", "60s", "--clients", "8", "--keys", "16",
                "--seed", "20261121", "--history", history.toString()}, out, out, () -> runner);
        String report = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
        System.out.println(report);
        assertEquals(ChaosCommand.LINEARIZABLE, code, "the chaos run did not pass (history: " + history + "):\n"
                + report);
        Map<String, Integer> injected = runner.injected();
        for (String kind : ChaosOptions.FAULTS) {
            assertTrue(injected.getOrDefault(kind, 0) >= 1, "fault " + kind + " was never injected: " + injected
                    + "\n" + report);
        }
        assertTrue(report.contains("verdict: PASS"), report);
        List<Operation> ops;
        try {
            ops = HistoryReader.read(history);
        } catch (Exception e) {
            throw new AssertionError("the history file cannot be read back", e);
        }
        // Safety is the verdict; these are liveness: the cluster must keep serving through the faults.
        long acknowledged = ops.stream().filter(o -> o.status() == OpStatus.OK).count();
        assertTrue(acknowledged > 1000, "only " + acknowledged + " operations were acknowledged in a minute");
        assertTrue(acknowledged >= ops.size() * 0.8, "only " + acknowledged + " of " + ops.size()
                + " operations were acknowledged: clients failed for long stretches\n" + report);
        // This seed's schedule kills the leader alone twice and every node twice (at 18, 25, 45 and 51 s).
        long maxUnavailable = runner.maxUnavailabilityNanos(ops);
        assertTrue(maxUnavailable >= 0, "no leader was killed alone, so recovery went unmeasured\n" + report);
        assertTrue(maxUnavailable < TimeUnit.SECONDS.toNanos(30), "after a leader kill no write was acknowledged for "
                + (maxUnavailable == Long.MAX_VALUE ? "the rest of the run" : maxUnavailable / 1_000_000 + " ms")
                + "\n" + report);
        long afterRestartAll = runner.maxUnavailabilityAfterRestartAllNanos(ops);
        assertTrue(afterRestartAll >= 0, "every node was never killed at once\n" + report);
        assertTrue(afterRestartAll < TimeUnit.SECONDS.toNanos(30), "after a kill of every node no write was acknowledged for "
                + (afterRestartAll == Long.MAX_VALUE ? "the rest of the run" : afterRestartAll / 1_000_000 + " ms")
                + "\n" + report);
    }
}
