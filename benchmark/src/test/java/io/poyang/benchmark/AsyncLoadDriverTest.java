package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.*;

class AsyncLoadDriverTest {

    /**
     * A client that rejects a request inside the call that issues it (KvClient does so for a value
     * over DtKV's limit): the driver must not start the next operation from inside that call, or
     * every rejection nests one level deeper until the stack overflows (--value-size 2000000000 ran
     * for minutes, logging StackOverflowErrors).
     */
    @Test
    void anOperationRejectedInsideIssueIsRetriedLaterNotFromInsideTheCall() {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger deepest = new AtomicInteger();
        CountDownLatch enough = new CountDownLatch(20);
        Scenario rejecting = new AsyncOneClientScenario() {
            @Override
            public void issue(int client, OpCallback callback) {
                calls.incrementAndGet();
                deepest.accumulateAndGet(Thread.currentThread().getStackTrace().length, Math::max);
                enough.countDown();
                callback.failed(Outcome.FAILED, "rejected");
            }
        };
        RunStats stats = new RunStats();
        AsyncLoadDriver driver = new AsyncLoadDriver(rejecting, stats, 1);
        int base = Thread.currentThread().getStackTrace().length;
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            driver.start();
            assertTrue(enough.await(10, TimeUnit.SECONDS), "the rejected operation is retried: " + calls);
            driver.stop();
            assertTrue(driver.awaitDrained(5_000));
        });
        assertTrue(deepest.get() < base + 50, "issue() was called " + (deepest.get() - base)
                + " frames deep: operations started from inside issue()");
        assertTrue(stats.snapshot().failed >= 20, "each rejection counts as a failure: " + stats.snapshot().failed);
    }

    /** What a scenario reports as the cause of a failure or a timeout is what the run counts it under. */
    @Test
    void failuresReportedToTheCallbackAreCountedUnderTheirCause() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch hundred = new CountDownLatch(100);
        java.util.concurrent.ExecutorService completer = java.util.concurrent.Executors.newSingleThreadExecutor();
        Scenario scenario = new AsyncOneClientScenario() {
            @Override
            public void issue(int client, OpCallback callback) {
                int n = calls.incrementAndGet();
                completer.execute(() -> {
                    if (n % 2 == 0) {
                        callback.succeeded();
                    } else if (n % 4 == 1) {
                        callback.failed(Outcome.FAILED, "NotLeaderException NOT_LEADER");
                    } else {
                        callback.failed(Outcome.TIMEOUT, "RaftOutcomeUnknownException TIMEOUT");
                    }
                    hundred.countDown();
                });
            }
        };
        RunStats stats = new RunStats();
        AsyncLoadDriver driver = new AsyncLoadDriver(scenario, stats, 1);
        try {
            driver.start();
            assertTrue(hundred.await(10, TimeUnit.SECONDS), "operations completed: " + calls);
            driver.stop();
            assertTrue(driver.awaitDrained(5_000));
        } finally {
            completer.shutdownNow();
        }
        RunStats.Counts c = stats.snapshot();
        java.util.Map<String, Long> expected = new java.util.HashMap<>();
        expected.put("NotLeaderException NOT_LEADER", c.failed);
        expected.put("RaftOutcomeUnknownException TIMEOUT", c.timeout);
        assertTrue(c.failed > 0 && c.timeout > 0 && c.success > 0, c.success + " " + c.failed + " " + c.timeout);
        assertEquals(expected, c.causes);
    }
}
