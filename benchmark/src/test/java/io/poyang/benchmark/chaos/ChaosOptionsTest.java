package io.poyang.benchmark.chaos;

import io.poyang.benchmark.UsageException;
import org.junit.jupiter.api.Test;

import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.*;

class ChaosOptionsTest {

    @Test
    void defaultsAreTheIssues() throws Exception {
        ChaosOptions o = ChaosOptions.parse();
        assertNull(o.check);
        assertEquals(3, o.nodes);
        assertEquals(60, o.durationSeconds);
        assertEquals(ChaosOptions.FAULTS, o.faults);
        assertEquals(8, o.clients);
        assertEquals(16, o.keys);
        assertFalse(o.seedGiven);
        assertEquals(Paths.get("chaos-history-" + o.seed + ".txt"), o.historyFile());
        assertEquals(CheckBudget.DEFAULT_MAX_CONFIGURATIONS, o.budget().maxConfigurationsPerKey());
        assertEquals(CheckBudget.DEFAULT_MAX_MILLIS, o.budget().maxMillisPerKey());
    }

    @Test
    void everyRunOptionIsParsed() throws Exception {
        ChaosOptions o = ChaosOptions.parse("--nodes", "5", "--duration", "10m", "--faults", "kill,partition,restart-all",
                "--clients=4", "--keys", "2", "--seed", "-42", "--history", "h.txt", "--verbose");
        assertEquals(5, o.nodes);
        assertEquals(600, o.durationSeconds, 1e-9);
        assertEquals(Arrays.asList("kill", "partition", "restart-all"), o.faults);
        assertEquals(4, o.clients);
        assertEquals(2, o.keys);
        assertEquals(-42, o.seed);
        assertTrue(o.seedGiven);
        assertEquals(Paths.get("h.txt"), o.historyFile());
        assertTrue(o.verbose);
        assertEquals("nodes=5 duration=600s faults=kill,partition,restart-all clients=4 keys=2 seed=-42", o.describeRun());
    }

    @Test
    void durationsTakeUnits() throws Exception {
        assertEquals(60, ChaosOptions.parse("--duration", "60").durationSeconds, 1e-9);
        assertEquals(60, ChaosOptions.parse("--duration", "60s").durationSeconds, 1e-9);
        assertEquals(0.5, ChaosOptions.parse("--duration", "500ms").durationSeconds, 1e-9);
        assertEquals(7200, ChaosOptions.parse("--duration", "2h").durationSeconds, 1e-9);
        assertEquals(1.5, ChaosOptions.parse("--check", "f", "--max-time", "1500ms").maxSecondsPerKey, 1e-9);
    }

    @Test
    void noFaultsAtAll() throws Exception {
        assertEquals(Collections.emptyList(), ChaosOptions.parse("--faults", "none").faults);
        assertTrue(ChaosOptions.parse("--faults", "none").describeRun().contains("faults=none"));
    }

    private static void assertUsage(String message, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> ChaosOptions.parse(args));
        assertTrue(e.getMessage().contains(message), "expected '" + message + "' in: " + e.getMessage());
    }

    @Test
    void badOptionsSayWhatIsWrong() {
        assertUsage("--nodes must be 3 or 5, got 4", "--nodes", "4");
        assertUsage("--duration takes a time such as 60, 60s, 500ms, 10m or 1h, got 'soon'", "--duration", "soon");
        assertUsage("--duration must be positive", "--duration", "0");
        assertUsage("--faults: unknown fault 'meteor'; choose from kill,pause,partition,transfer,membership,restart-all",
                "--faults", "kill,meteor");
        assertUsage("--clients must be between 1 and", "--clients", "0");
        assertUsage("--keys takes a whole number, got 'many'", "--keys", "many");
        assertUsage("--seed takes a whole number", "--seed", "x");
        assertUsage("unknown option --speed (see --help)", "--speed", "3");
        assertUsage("option --check needs a value", "--check");
        assertUsage("unexpected argument 'file.txt'", "file.txt");
        assertUsage("--help takes no value", "--help=yes");
        assertUsage("--max-states must be between 1 and", "--check", "f", "--max-states", "0");
    }

    @Test
    void checkTakesNoRunOptions() {
        assertUsage("--check replays a recorded history and takes no run options (--nodes, --seed); drop them, or drop "
                + "--check to run", "--check", "h.txt", "--nodes", "3", "--seed", "1");
    }
}
