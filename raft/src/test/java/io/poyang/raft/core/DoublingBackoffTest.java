package io.poyang.raft.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pauses between failed hand-overs to a preferred leader: doubling from the first, capped, reset by a success. */
class DoublingBackoffTest {

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void pausesDoubleUpToTheCapAndASuccessEndsTheRun() {
        DoublingBackoff b = new DoublingBackoff(500, 60_000);
        long now = 1_000_000_000L;
        assertTrue(b.mayTry(now), "nothing failed yet");
        long[] expected = {500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(i + 1, b.onFailure(now));
            assertEquals(expected[i], b.pauseMillis(), "pause after failure " + (i + 1));
            assertFalse(b.mayTry(now + ms(expected[i]) - 1), "tried before the pause ended, failure " + (i + 1));
            now += ms(expected[i]);
            assertTrue(b.mayTry(now), "the pause after failure " + (i + 1) + " did not end");
        }
        assertEquals(expected.length, b.onSuccess());
        assertEquals(0, b.pauseMillis());
        assertTrue(b.mayTry(now));
        assertEquals(1, b.onFailure(now), "a new run starts counting again");
        assertEquals(500, b.pauseMillis(), "a new run starts from the first pause");
        b.reset();
        assertTrue(b.mayTry(now), "a reset forgets the pending pause");
        assertEquals(0, b.onSuccess());
    }

    @Test
    void aPauseTheClockWrapsPastStillEnds() {
        DoublingBackoff b = new DoublingBackoff(1_000, 1_000);
        long now = Long.MAX_VALUE - ms(10);
        b.onFailure(now);
        assertFalse(b.mayTry(now + ms(999)));
        assertTrue(b.mayTry(now + ms(1_000)));
    }

    @Test
    void aBackoffNeedsAPositiveFirstPauseNoLongerThanItsCap() {
        assertThrows(IllegalArgumentException.class, () -> new DoublingBackoff(0, 10));
        assertThrows(IllegalArgumentException.class, () -> new DoublingBackoff(100, 10));
    }
}
