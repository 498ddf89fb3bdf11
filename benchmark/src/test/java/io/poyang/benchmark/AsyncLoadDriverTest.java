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
                callback.done(Outcome.FAILED);
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
}
