package io.poyang.raft.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ConfigHistoryTest {

    private static final Members ONE = new Members(1);
    private static final Members TWO = new Members(1, 2);
    private static final Members THREE = new Members(1, 2, 3);
    private static final Members FOUR = new Members(1, 2, 3, 4);

    private static ConfigHistory history() {
        ConfigHistory h = new ConfigHistory();
        h.reset(0, ONE);
        h.add(10, TWO);
        h.add(20, THREE);
        h.add(30, FOUR);
        return h;
    }

    @Test
    void compactingToASnapshotIndexKeepsTheConfigurationInForceThereAndEveryLaterOne() {
        ConfigHistory h = history();
        h.compactTo(25);
        assertEquals(2, h.size(), "the entry of 20 (in force at 25) and the one of 30 stay: " + h);
        assertEquals(THREE, h.at(25));
        assertEquals(THREE, h.at(29));
        assertEquals(FOUR, h.at(30));
        assertEquals(FOUR, h.latest());
        assertEquals(30, h.latestIndex(), "the latest entry keeps its own index");
    }

    @Test
    void compactingPastTheLatestEntryKeepsItWithItsIndex() {
        ConfigHistory h = history();
        h.compactTo(1_000);
        assertEquals(1, h.size());
        assertEquals(FOUR, h.at(1_000));
        assertEquals(30, h.latestIndex(), "a retried change compares with the entry's index, not the snapshot's");
    }

    @Test
    void compactingBelowTheFirstEntryForgetsNothing() {
        ConfigHistory h = history();
        h.compactTo(5);
        assertEquals(4, h.size());
        assertEquals(ONE, h.at(5));
        h.compactTo(10);
        assertEquals(3, h.size(), "the base goes once the entry of 10 is in force");
        assertEquals(TWO, h.at(10));
    }

    @Test
    void aTruncationAboveTheCompactedPointStillGoesBackToTheConfigurationBeforeIt() {
        ConfigHistory h = history();
        h.compactTo(22);
        assertEquals(THREE, h.truncateFrom(30), "the tail from 30 dropped: the entry of 20 is in force again");
        assertEquals(20, h.latestIndex());
        assertEquals(THREE, h.truncateFrom(21), "an entry is never dropped below the one in force at the snapshot");
    }
}
