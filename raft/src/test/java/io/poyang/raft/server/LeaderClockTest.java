package io.poyang.raft.server;

import io.poyang.common.TimeSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Entry timestamps follow the leader's monotonic clock within a term. A state machine that counts
 * leases and TTLs by them (DtKV) would otherwise end every lease at once when NTP or an operator
 * steps the leader's wall clock forward, or freeze them all when it steps back.
 */
class LeaderClockTest {

    @TempDir
    Path dir;

    /** The system's clocks, with a wall clock the test can step. */
    static final class SteppedWallClock implements TimeSource {
        volatile long offsetMillis;

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public long wallClockMillis() {
            return System.currentTimeMillis() + offsetMillis;
        }
    }

    @Test
    void aStepOfTheLeadersWallClockDuringItsTermMovesNoEntryTimestamp() {
        SteppedWallClock clock = new SteppedWallClock();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1})) {
            c.serverTweak = b -> b.timeSource(clock);
            c.start();
            int leader = c.waitForLeader(1);
            int term = c.group(leader, 1).term();
            c.write(1, 1);
            clock.offsetMillis = 3_600_000;    // an hour ahead
            c.write(1, 2);
            clock.offsetMillis = -3_600_000;   // an hour behind
            c.write(1, 3);
            assertEquals(term, c.group(leader, 1).term(), "one term throughout");
            long[] t = c.call(leader, 1, () -> c.machine(leader, 1).timestamps());
            assertEquals(3, t.length, Arrays.toString(t));
            for (int i = 1; i < t.length; i++) {
                long step = t[i] - t[i - 1];
                assertTrue(step >= 0 && step < 20_000, "entry " + i + " is " + step + " ms after the one before it"
                        + " (the wall clock stepped by an hour between them): " + Arrays.toString(t));
            }
            long skew = Math.abs(t[0] - System.currentTimeMillis());
            assertTrue(skew < 60_000, "the first entry is stamped with the wall clock when the term began: " + skew);
        }
    }
}
