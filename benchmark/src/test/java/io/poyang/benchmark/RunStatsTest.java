package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RunStatsTest {

    @Test
    void failuresAndTimeoutsAreCountedByCauseAsWellAsByOutcome() {
        RunStats stats = new RunStats();
        stats.recordSuccess(1_000);
        stats.recordFailure(Outcome.FAILED, "NetConnectionException");
        stats.recordFailure(Outcome.FAILED, "NetConnectionException");
        stats.recordFailure(Outcome.TIMEOUT, "RaftOutcomeUnknownException TIMEOUT");
        RunStats.Counts c = stats.snapshot();
        assertEquals(1, c.success);
        assertEquals(2, c.failed);
        assertEquals(1, c.timeout);
        Map<String, Long> expected = new HashMap<>();
        expected.put("NetConnectionException", 2L);
        expected.put("RaftOutcomeUnknownException TIMEOUT", 1L);
        assertEquals(expected, c.causes, "successes have no cause");
        assertThrows(IllegalArgumentException.class, () -> stats.recordFailure(Outcome.SUCCESS, "x"));
    }

    /** The report's causes must add up to its failed and timeout counts, even while operations keep failing. */
    @Test
    void aSnapshotsCausesAddUpToItsFailuresAndTimeoutsWhileFailuresAreRecorded() throws Exception {
        RunStats stats = new RunStats();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread failing = new Thread(() -> {
            for (long i = 0; !stop.get(); i++) {
                stats.recordFailure(i % 3 == 0 ? Outcome.TIMEOUT : Outcome.FAILED, "cause " + (i % 7));
            }
        });
        failing.start();
        try {
            RunStats.Counts first = stats.snapshot();
            RunStats.Counts last = first;
            for (int i = 0; i < 2_000; i++) {
                last = stats.snapshot();
                assertEquals(last.failed + last.timeout, FailureCauses.total(last.causes));
            }
            RunStats.Counts window = last.minus(first);
            assertEquals(window.failed + window.timeout, FailureCauses.total(window.causes));
        } finally {
            stop.set(true);
            failing.join();
        }
    }

    /** The hot path: a successful operation must not allocate (its garbage would be charged to the client measured). */
    @Test
    void recordingASuccessAllocatesNothing() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean, "this JVM does not count allocated bytes per thread");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        RunStats stats = new RunStats();
        stats.startMeasuring();
        stats.recordFailure(Outcome.FAILED, "warm the failure path too");
        long id = Thread.currentThread().getId();
        for (int round = 0; round < 3; round++) {
            // the first rounds may load classes or compile; a per-operation allocation shows in every round
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 100_000; i++) {
                stats.recordSuccess(1_000 + i);
            }
            long allocated = threads.getThreadAllocatedBytes(id) - before;
            if (allocated < 1_024) {
                return;
            }
        }
        fail("100,000 successes allocated a kilobyte or more in each of three rounds");
    }
}
