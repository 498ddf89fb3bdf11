package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class ReportTest {

    @Test
    void jsonIsOneLineWithExtrasAndEscapes() {
        Report r = new Report();
        r.op = "log";
        r.nodes = 1;
        r.groups = 1;
        r.clients = 1;
        r.maxPending = 100;
        r.valueSize = 256;
        r.mode = "async \"quoted\"";
        r.durationSeconds = 2;
        r.success = 1000;
        r.p50Ms = 1.23456;
        r.extras.put("fsyncs_per_sec", 1234.5);
        String json = r.toJson();
        assertFalse(json.contains("\n"));
        assertTrue(json.contains("\"ops_per_sec\":500,"), json);
        assertTrue(json.contains("\"p50_ms\":1.2346"), json);
        assertTrue(json.contains("\"fsyncs_per_sec\":1234.5"), json);
        assertTrue(json.contains("\"mode\":\"async \\\"quoted\\\"\""), json);
        assertTrue(r.toTable().contains("fsyncs_per_sec"));
    }

    @Test
    void theTableSaysSoWhenOperationsFailedOrTimedOut() {
        Report r = new Report();
        r.op = "put";
        r.mode = "async";
        r.durationSeconds = 1;
        r.success = 10;
        assertFalse(r.toTable().contains("NOT CLEAN"), r.toTable());
        r.failed = 2;
        r.timeout = 3;
        String t = r.toTable();
        assertTrue(t.contains("NOT CLEAN: 2 operations failed and 3 timed out"), t);
    }

    private static Report halves(double first, double second) {
        Report r = new Report();
        r.op = "put";
        r.mode = "async";
        r.durationSeconds = 10;
        r.success = 1000;
        r.firstHalfOpsPerSecond = first;
        r.secondHalfOpsPerSecond = second;
        return r;
    }

    @Test
    void aRunStillSpeedingUpIsCalledNotSteadyAndPointsToALongerWarmUp() {
        Report r = halves(100_000, 130_000);
        assertEquals(30.0, r.secondHalfChangePercent(), 1e-9);
        String t = r.toTable();
        assertTrue(t.contains("100,000 then 130,000 ops/s (+30 %)"), t);
        assertTrue(t.contains("NOT STEADY: the second half ran 30 % faster"), t);
        assertTrue(t.contains("--warmup"), t);
        String json = r.toJson();
        assertTrue(json.contains("\"first_half_ops_per_sec\":100000,"), json);
        assertTrue(json.contains("\"second_half_ops_per_sec\":130000,"), json);
        assertTrue(json.contains("\"second_half_change_pct\":30"), json);
    }

    @Test
    void aRunSlowingDownIsCalledNotSteadyWithItsLikelyCauses() {
        String t = halves(200_000, 150_000).toTable();
        assertTrue(t.contains("(-25 %)"), t);
        assertTrue(t.contains("NOT STEADY: the second half ran 25 % slower"), t);
        assertFalse(t.contains("warming up"), t);
    }

    @Test
    void halvesWithinTheThresholdAreShownWithoutAWarning() {
        String t = halves(100_000, 110_000).toTable();
        assertTrue(t.contains("(+10 %)"), t);
        assertFalse(t.contains("NOT STEADY"), t);
    }

    @Test
    void unknownHalvesAreLeftOut() {
        Report r = halves(0, 0);
        assertTrue(Double.isNaN(r.secondHalfChangePercent()));
        assertFalse(r.toTable().contains("halves"), r.toTable());
        assertFalse(r.toJson().contains("half"), r.toJson());
    }
}
