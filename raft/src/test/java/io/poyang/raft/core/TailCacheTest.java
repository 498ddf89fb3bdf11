package io.poyang.raft.core;

import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.LogItem;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class TailCacheTest {

    private static LogItem item(long index) {
        return new LogItem(LogItem.TYPE_NORMAL, 0, 1, 1, index, 0, null, new ByteBody(new byte[10]));
    }

    @Test
    void holdsConsecutiveEntriesAcrossGrowthAndWrapAround() {
        TailCache c = new TailCache();
        LogItem[] items = new LogItem[5000];
        for (int i = 0; i < items.length; i++) {
            items[i] = item(100 + i);
            c.add(items[i]);
            if (i % 3 == 0 && i > 1500) {
                c.evictBelow(100 + i - 1500);   // keep a sliding window so the ring wraps
            }
        }
        long first = c.firstIndex();
        assertEquals(5099, c.lastIndex());
        for (long i = first; i <= 5099; i++) {
            assertSame(items[(int) (i - 100)], c.get(i));
        }
        assertNull(c.get(first - 1));
        assertNull(c.get(5100));
        assertEquals(c.size() * (long) TailCache.sizeOf(items[0]), c.bytes());
    }

    @Test
    void truncationDropsTheTailAndANonConsecutiveEntryRestartsTheCache() {
        TailCache c = new TailCache();
        for (int i = 1; i <= 10; i++) {
            c.add(item(i));
        }
        c.truncateFrom(7);
        assertEquals(6, c.lastIndex());
        assertNull(c.get(7));
        c.add(item(7));
        assertEquals(7, c.lastIndex());
        c.add(item(20));   // a gap (a snapshot was installed): start over
        assertEquals(20, c.firstIndex());
        assertEquals(1, c.size());
        c.truncateFrom(1);
        assertEquals(-1, c.firstIndex());
        assertEquals(0, c.bytes());
    }

    @Test
    void evictionKeepsUnappliedEntriesAndWhatFollowersNeedWithinTheBounds() {
        TailCache c = new TailCache();
        for (int i = 1; i <= 100; i++) {
            c.add(item(i));
        }
        c.evict(50, 30, 1000, Long.MAX_VALUE);   // a follower needs 30 on
        assertEquals(30, c.firstIndex());
        c.evict(50, 40, 5, Long.MAX_VALUE);      // past the bound applied ones go, unapplied ones stay
        assertEquals(51, c.firstIndex());
        c.evict(100, Long.MAX_VALUE, 0, 0);
        assertEquals(-1, c.firstIndex());
    }

    @Test
    void flowControlBoundsCountAndBytesAndGivesRoomBackInBatches() {
        WriteFlowControl f = new WriteFlowControl(3, 100);
        assertEquals(true, f.tryAcquire(40));
        assertEquals(true, f.tryAcquire(40));
        assertEquals(false, f.tryAcquire(40), "bytes bound");
        assertEquals(true, f.tryAcquire(20));
        assertEquals(false, f.tryAcquire(0), "count bound");
        assertEquals(3, f.pendingCount());
        assertEquals(100, f.pendingBytes());
        f.release(2, 80);
        assertEquals(1, f.pendingCount());
        assertEquals(20, f.pendingBytes());
        assertEquals(true, f.tryAcquire(80));
    }
}
