package io.poyang.benchmark;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.*;

class CounterWindowTest {

    @Test
    void ratesCountOnlyWhatHappenedBetweenStartAndEnd() throws Exception {
        AtomicLong fsyncs = new AtomicLong(1_000_000);   // the warm-up's: must not count
        CounterWindow w = new CounterWindow(() -> new long[]{fsyncs.get(), 7});
        w.start();
        fsyncs.addAndGet(500);
        TimeUnit.MILLISECONDS.sleep(200);
        w.end();
        fsyncs.addAndGet(1_000_000);   // the drain's: must not count either
        long rate = w.perSecond(0);
        // 500 in a window of at least 200 ms (and, on a slow machine, well under 5 s)
        assertTrue(rate > 100 && rate <= 2_500, "rate " + rate);
        assertEquals(0, w.perSecond(1), "a counter that did not move");
    }

    @Test
    void aWindowNotReadAtBothEndsHasNoRates() {
        CounterWindow w = new CounterWindow(() -> new long[]{1});
        assertFalse(w.complete());
        assertThrows(IllegalStateException.class, () -> w.perSecond(0));
        w.start();
        assertFalse(w.complete());
        assertThrows(IllegalStateException.class, () -> w.perSecond(0));
    }
}
