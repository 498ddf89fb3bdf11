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
}
