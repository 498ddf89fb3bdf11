package io.poyang.raft.store;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TermIndexTest {

    private static TermIndex sample() {
        TermIndex t = new TermIndex();
        for (long i = 1; i <= 100; i++) {
            t.onAppend(i, i <= 10 ? 1 : i <= 50 ? 3 : 7);
        }
        return t;
    }

    @Test
    void termsAndTheConflictSearch() {
        TermIndex t = sample();
        assertEquals(3, t.size());
        assertEquals(1, t.termOf(10));
        assertEquals(3, t.termOf(11));
        assertEquals(7, t.termOf(100));
        assertEquals(10, t.lastIndexWithTermAtMost(2, 100, 1));
        assertEquals(50, t.lastIndexWithTermAtMost(6, 100, 1));
        assertEquals(30, t.lastIndexWithTermAtMost(6, 30, 1));
        assertEquals(0, t.lastIndexWithTermAtMost(0, 100, 1));
        assertThrows(IllegalArgumentException.class, () -> t.onAppend(101, 6));
    }

    @Test
    void truncateRemoveAndEncode() {
        TermIndex t = sample();
        t.truncateFrom(51);
        assertEquals(2, t.size());
        t.onAppend(51, 8);
        assertEquals(8, t.termOf(60));
        t.removeBefore(20);
        assertEquals(3, t.termOf(20));
        assertEquals("11:3,51:8", t.encode(100));
        assertEquals("11:3", t.encode(50));
        TermIndex u = new TermIndex();
        u.decode(t.encode(100));
        assertEquals(8, u.termOf(99));
        assertEquals(3, u.termOf(11));
    }
}
