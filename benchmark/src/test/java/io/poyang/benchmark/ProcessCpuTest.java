package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.*;

class ProcessCpuTest {

    /** A pid not running (a typo, a node restarted under a new pid): no servers' figure, not this process's CPU alone. */
    @Test
    void aNamedServerThatIsNotRunningMakesTheServersCpuUnknown() {
        long self = ProcessHandle.current().pid();
        ProcessCpu withAMissingOne = new ProcessCpu(Arrays.asList(self, 999_999_999L));
        assertTrue(withAMissingOne.serversNamed());
        assertEquals(-1, withAMissingOne.serversNanos());
        ProcessCpu allRunning = new ProcessCpu(Collections.singletonList(self));
        assertTrue(allRunning.serversNanos() > 0, "this JVM has used CPU");
        ProcessCpu none = new ProcessCpu(Collections.emptyList());
        assertFalse(none.serversNamed());
        assertEquals(-1, none.serversNanos());
    }

    /** A reading of -1 (the JVM cannot tell) at either end gives no figure, not 0 or a negative one. */
    @Test
    void cpuBetweenTwoReadingsIsUnknownWhenEitherIs() {
        assertEquals(7, ProcessCpu.between(3, 10));
        assertEquals(-1, ProcessCpu.between(-1, -1));
        assertEquals(-1, ProcessCpu.between(-1, 10));
        assertEquals(-1, ProcessCpu.between(3, -1));
    }

    /** CPU per operation is per success, the unit of ops/s: 90 fast failures do not make the run look ten times cheaper. */
    @Test
    void cpuPerOpIsPerSuccessfulOperation() {
        Report r = new Report();
        BenchCommand.cpuPerOp(r, 1_000_000, -1, false, 10);
        assertEquals(100.0, r.extras.get("cpu_us_per_op"));
        assertFalse(r.extras.containsKey("server_cpu_us_per_op"));

        Report withServers = new Report();
        BenchCommand.cpuPerOp(withServers, 1_000_000, 3_000_000, true, 10);
        assertEquals(400.0, withServers.extras.get("cpu_us_per_op"));
        assertEquals(100.0, withServers.extras.get("client_cpu_us_per_op"));
        assertEquals(300.0, withServers.extras.get("server_cpu_us_per_op"));
    }

    /** Named servers whose CPU is unknown: the total is unknown too (JSON null), not the client's alone under its name. */
    @Test
    void cpuPerOpIsUnknownWhenNamedServersCannotBeRead() {
        Report r = new Report();
        r.op = "put";
        r.mode = "async";
        BenchCommand.cpuPerOp(r, 1_000_000, -1, true, 10);
        assertTrue(r.extras.containsKey("cpu_us_per_op"));
        assertNull(r.extras.get("cpu_us_per_op"));
        assertEquals(100.0, r.extras.get("client_cpu_us_per_op"));
        assertNull(r.extras.get("server_cpu_us_per_op"));
        assertTrue(r.toJson().contains("\"cpu_us_per_op\":null,\"client_cpu_us_per_op\":100,\"server_cpu_us_per_op\":null"),
                r.toJson());
        assertTrue(r.toTable().contains("  cpu_us_per_op unknown"), r.toTable());

        Report noOwnCpu = new Report();
        BenchCommand.cpuPerOp(noOwnCpu, -1, -1, false, 10);
        assertTrue(noOwnCpu.extras.isEmpty(), noOwnCpu.extras.toString());
        Report noSuccess = new Report();
        BenchCommand.cpuPerOp(noSuccess, 1_000_000, -1, false, 0);
        assertTrue(noSuccess.extras.isEmpty(), noSuccess.extras.toString());
    }
}
