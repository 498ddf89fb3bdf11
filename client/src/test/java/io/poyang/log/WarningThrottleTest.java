package io.poyang.log;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WarningThrottleTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void theFirstOfARunIsLoggedThenOnePerIntervalWithTheCountInBetween() {
        WarningThrottle w = new WarningThrottle(10 * SECOND);
        long t0 = 123_456_789L;
        assertFalse(w.inRun());
        assertTrue(w.occurred(t0));
        assertTrue(w.isFirstOfRun());
        assertEquals(0, w.notLoggedBefore());
        for (int i = 1; i <= 99; i++) {
            assertFalse(w.occurred(t0 + i * SECOND / 10), "occurrence " + i + " within the interval");
        }
        assertTrue(w.occurred(t0 + 10 * SECOND));
        assertFalse(w.isFirstOfRun());
        assertEquals(99, w.notLoggedBefore());
        assertEquals(10 * SECOND, w.nanosSinceLastLogged());
        assertFalse(w.occurred(t0 + 15 * SECOND));
        assertTrue(w.occurred(t0 + 21 * SECOND));
        assertEquals(1, w.notLoggedBefore());
        assertEquals(11 * SECOND, w.nanosSinceLastLogged());
        assertEquals(103, w.endRun());
    }

    @Test
    void anEndedRunStartsAfreshAndTheNextFailureIsLoggedAtOnce() {
        WarningThrottle w = new WarningThrottle(10 * SECOND);
        assertTrue(w.occurred(0));
        assertFalse(w.occurred(1));
        assertTrue(w.inRun());
        assertEquals(2, w.endRun());
        assertFalse(w.inRun());
        assertEquals(0, w.endRun(), "no run to end");
        assertTrue(w.occurred(2), "a new run is logged at once, within the old interval");
        assertTrue(w.isFirstOfRun());
        assertEquals(0, w.notLoggedBefore(), "the old run's skipped count does not leak into the new one");
    }

    @Test
    void nanoTimeThatWrapsAroundStillMeasuresTheInterval() {
        WarningThrottle w = new WarningThrottle(10 * SECOND);
        long start = Long.MAX_VALUE - SECOND;
        assertTrue(w.occurred(start));
        assertFalse(w.occurred(start + 5 * SECOND));   // wraps to a negative value
        assertTrue(w.occurred(start + 10 * SECOND));
    }

    @Test
    void aNegativeIntervalIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new WarningThrottle(-1));
    }
}
