package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultClockTest {

    private static final long S = 1_000_000_000L;

    @Test
    void aRecoveryWindowKeepsTheClientsGoingButMakesNoRoomForAnotherFault() {
        AtomicLong clientsEnd = new AtomicLong(60 * S);
        FaultClock clock = new FaultClock(clientsEnd);
        // a fault of 4 s (hold 3 s) at 55 s fits before 60 s and ends at 59 s
        assertTrue(clock.faultFits(55 * S, 4 * S));
        assertEquals(9 * S, clock.stretchForRecovery(59 * S, 10 * S), "the clients' end moved by");
        assertEquals(69 * S, clientsEnd.get());
        // 2 s of quiet later: the clients have until 69 s, but no fault may start after the run's end
        assertFalse(clock.faultFits(61 * S, 2 * S));
        // a window that ends before the clients do moves nothing
        assertEquals(0, clock.stretchForRecovery(50 * S, 10 * S));
        assertEquals(69 * S, clientsEnd.get());
    }

    @Test
    void theFirstRoundStretchesBothEnds() {
        AtomicLong clientsEnd = new AtomicLong(10 * S);
        FaultClock clock = new FaultClock(clientsEnd);
        // a first-round fault needing 6 s and 2 s of quiet after it, at 8 s: both ends go to 16 s
        assertEquals(6 * S, clock.stretchForFirstRound(8 * S, 6 * S, 2 * S));
        assertEquals(16 * S, clientsEnd.get());
        assertTrue(clock.faultFits(8 * S, 6 * S));
        assertFalse(clock.faultFits(11 * S, 6 * S));
    }
}
