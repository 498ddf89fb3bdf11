package io.poyang.common;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TimestampTest {

    @Test
    void readingsStayCachedUntilRefreshed() {
        ManualTimeSource time = new ManualTimeSource(5_000, 1_000);
        Timestamp ts = new Timestamp(time);
        assertEquals(5_000, ts.nanoTime());
        assertEquals(1_000, ts.wallClockMillis());
        time.advance(3, TimeUnit.MILLISECONDS);
        assertEquals(5_000, ts.nanoTime(), "a cached clock does not move by itself");
        ts.refreshNanos();
        assertEquals(3_005_000, ts.nanoTime());
        assertEquals(1_000, ts.wallClockMillis(), "refreshNanos leaves the wall clock alone");
        ts.refresh();
        assertEquals(1_003, ts.wallClockMillis());
    }

    @Test
    void manualTimeOnlyMovesForward() {
        ManualTimeSource time = new ManualTimeSource();
        assertThrows(IllegalArgumentException.class, () -> time.advance(-1, TimeUnit.SECONDS));
    }

    @Test
    void systemTimestampIsMonotonic() {
        Timestamp ts = new Timestamp();
        long first = ts.nanoTime();
        ts.refresh();
        assertEquals(true, ts.nanoTime() - first >= 0);
    }
}
