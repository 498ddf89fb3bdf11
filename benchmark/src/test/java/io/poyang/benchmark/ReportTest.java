package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class ReportTest {

    /** The report of an asynchronous put run of 1 s with 10 successes; tests add what they look at. */
    private static Report tenPutsInOneSecond() {
        Report r = new Report();
        r.op = "put";
        r.mode = "async";
        r.durationSeconds = 1;
        r.success = 10;
        return r;
    }

    @Test
    void latenciesOfNanosecondsAreShownNotRoundedToZero() {
        Report r = tenPutsInOneSecond();
        r.op = "fiber";
        r.p50Ms = 0.000085;   // an 85 ns fiber switch
        r.p99Ms = 0.0042;
        r.maxMs = 12.5;
        assertTrue(r.toTable().contains("p50 0.000085  p95 0.000000  p99 0.004200  p99.9 0.000000  max 12.5"), r.toTable());
        assertTrue(r.toJson().contains("\"p50_ms\":0.000085,"), r.toJson());
    }

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
        assertTrue(json.contains("\"p50_ms\":1.23456"), json);
        assertTrue(json.contains("\"fsyncs_per_sec\":1234.5"), json);
        assertTrue(json.contains("\"mode\":\"async \\\"quoted\\\"\""), json);
        assertTrue(r.toTable().contains("fsyncs_per_sec"));
    }

    @Test
    void theTableSaysSoWhenOperationsFailedOrTimedOut() {
        Report r = tenPutsInOneSecond();
        assertFalse(r.toTable().contains("NOT CLEAN"), r.toTable());
        r.failed = 2;
        r.timeout = 3;
        String t = r.toTable();
        assertTrue(t.contains("NOT CLEAN: 2 operations failed and 3 timed out"), t);
    }

    private static Report withFailures() {
        Report r = tenPutsInOneSecond();
        r.failed = 24;
        r.timeout = 4;
        r.failureCauses.put("IllegalStateException", 2L);
        r.failureCauses.put("NotLeaderException NOT_LEADER", 7L);
        r.failureCauses.put("RaftOutcomeUnknownException TIMEOUT", 4L);
        r.failureCauses.put("KvException NOT_FOUND", 6L);
        r.failureCauses.put("NetConnectionException", 3L);
        r.failureCauses.put("RemoteException NOT_LEADER", 5L);
        r.failureCauses.put("StoppedException STOPPED", 1L);
        return r;
    }

    @Test
    void theTableNamesTheFiveMostFrequentCausesOfFailureWithTheirCounts() {
        String t = withFailures().toTable();
        assertTrue(t.contains("  causes       NotLeaderException NOT_LEADER 7, KvException NOT_FOUND 6,"
                + " RemoteException NOT_LEADER 5, RaftOutcomeUnknownException TIMEOUT 4, NetConnectionException 3, other 3"
                + System.lineSeparator()), t);
        assertTrue(t.indexOf("  timeout ") < t.indexOf("  causes "), "right below the counts it explains: " + t);
    }

    @Test
    void theJsonHasTheTopCausesAsAnObjectAndTheOldFieldsUnchanged() {
        String json = withFailures().toJson();
        assertTrue(json.contains("\"failed\":24,\"timeout\":4,\"drain_failed\":0,\"drain_timeout\":0,\"drained\":true,"), json);
        assertTrue(json.contains("\"failure_causes\":{\"NotLeaderException NOT_LEADER\":7,\"KvException NOT_FOUND\":6,"
                + "\"RemoteException NOT_LEADER\":5,\"RaftOutcomeUnknownException TIMEOUT\":4,\"NetConnectionException\":3,"
                + "\"other\":3}"), json);
        assertTrue(json.contains("\"drain_failure_causes\":{}"), json);
        assertTrue(json.contains(",\"p50_ms\":0,\"p95_ms\":0,\"p99_ms\":0,\"p999_ms\":0,\"max_ms\":0"), json);
    }

    @Test
    void aCleanRunHasNoCausesRowAndEmptyCauseObjects() {
        Report r = tenPutsInOneSecond();
        assertFalse(r.toTable().contains("causes"), r.toTable());
        assertTrue(r.toJson().contains("\"failure_causes\":{},\"drain_failure_causes\":{}"), r.toJson());
    }

    @Test
    void theDrainsNotCleanLineSaysWhyTheLastOperationsFailed() {
        Report r = tenPutsInOneSecond();
        r.drainTimeout = 3;
        r.drainFailureCauses.put("RaftOutcomeUnknownException TIMEOUT", 3L);
        String t = r.toTable();
        assertTrue(t.contains("NOT CLEAN: of the operations in flight at the end, 0 failed and 3 timed out"
                + " (RaftOutcomeUnknownException TIMEOUT 3)"), t);
        assertTrue(r.toJson().contains("\"drain_failure_causes\":{\"RaftOutcomeUnknownException TIMEOUT\":3}"), r.toJson());
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
        Report r = tenPutsInOneSecond();
        assertFalse(r.halvesKnown());
        assertTrue(Double.isNaN(r.secondHalfChangePercent()));
        assertFalse(r.toTable().contains("halves"), r.toTable());
        assertFalse(r.toJson().contains("half"), r.toJson());
        assertFalse(r.toJson().contains("steady"), r.toJson());
    }

    /**
     * Nothing succeeded in the first half, then the run went: the most unsteady run there is (a
     * stall at the start the whole-window ops/s averages over), not "halves unknown" as it was taken to be.
     */
    @Test
    void aRunWithNoSuccessInItsFirstHalfIsCalledNotSteady() {
        Report r = halves(0, 1000);
        assertEquals(Double.POSITIVE_INFINITY, r.secondHalfChangePercent());
        assertFalse(r.steady());
        String t = r.toTable();
        assertTrue(t.contains("  halves       0 then 1,000 ops/s" + System.lineSeparator()), t);
        assertTrue(t.contains("NOT STEADY: no operation succeeded in the first half"), t);
        String json = r.toJson();
        assertTrue(json.contains("\"first_half_ops_per_sec\":0,\"second_half_ops_per_sec\":1000,"
                + "\"second_half_change_pct\":null,\"steady\":false"), json);
    }

    @Test
    void halvesWithNoSuccessAtAllAreShownWithoutASteadinessWarning() {
        Report r = halves(0, 0);
        assertTrue(r.halvesKnown());
        assertTrue(r.steady());
        String t = r.toTable();
        assertTrue(t.contains("  halves       0 then 0 ops/s" + System.lineSeparator()), t);
        assertFalse(t.contains("NOT STEADY"), t);
        assertTrue(r.toJson().contains("\"second_half_change_pct\":null,\"steady\":true"), r.toJson());
    }

    @Test
    void theJsonSaysWhetherTheRunWasSteady() {
        assertTrue(halves(100_000, 110_000).toJson().contains("\"second_half_change_pct\":10,\"steady\":true"));
        assertTrue(halves(200_000, 150_000).toJson().contains("\"second_half_change_pct\":-25,\"steady\":false"));
    }
}
