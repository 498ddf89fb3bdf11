package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@ExtendWith(NoImpossibleStates.class)
class TruncateTest {

    @TempDir
    Path dir;

    @Test
    void refusedAtOrBelowCommit() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 50, 1, 0, 1, 20));
            h.awaitPersisted(50);
            h.on(() -> {
                h.store.setCommitIndex(20);
                return null;
            });
            assertThrows(TruncateBelowCommitException.class, () -> h.call(() -> h.store.truncateTail(20)));
            assertThrows(TruncateBelowCommitException.class, () -> h.call(() -> h.store.truncateTail(3)));
            assertEquals(50, (long) h.on(h.store::lastIndex));
            h.call(() -> h.store.truncateTail(21));
            assertEquals(20, (long) h.on(h.store::lastIndex));
        }
    }

    @Test
    void truncateWithinASegmentThenAppendAndReopen() {
        truncateAndCheck(60, 45, 1 << 20);
    }

    @Test
    void truncateAcrossSegmentsThenAppendAndReopen() {
        // ~140-byte items over 64 KB segments: index 3000 is several segments back from 5000.
        truncateAndCheck(5000, 3000, 64 * 1024);
    }

    private void truncateAndCheck(int n, int cut, int segmentBytes) {
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(segmentBytes))) {
            h.open();
            h.append(items(1, n, 1, 0, 1, 40));
            h.awaitPersisted(n);
            h.on(() -> {
                h.store.setCommitIndex(cut - 10);
                return null;
            });
            h.call(() -> h.store.truncateTail(cut));
            assertEquals(cut - 1, (long) h.on(h.store::lastIndex));
            assertEquals(cut - 1, h.persisted());
            assertEquals(1, (int) h.on(h.store::lastTerm));
            // The new leader's entries, of term 2 and with other bodies.
            h.append(items(cut, cut + 20, 2, 1, 2, 40));
            h.awaitPersisted(cut + 20);
            check(h, cut, cut + 20);
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.segmentBytes(segmentBytes))) {
            RecoveredState s = h.open();
            assertEquals(cut + 20, s.getLastIndex(), "old items beyond the truncation must not come back");
            assertEquals(2, s.getLastTerm());
            check(h, cut, cut + 20);
        }
    }

    private static void check(StoreHarness h, int cut, int last) {
        List<LogItem> all = h.loadAll(1, last);
        assertEquals(last, all.size());
        for (LogItem it : all) {
            long i = it.getIndex();
            int salt = i < cut ? 1 : 2;
            assertEquals(i < cut ? 1 : 2, it.getTerm(), "term of " + i);
            assertArrayEquals(bodyFor(i, salt, 40), bodyOf(it), "body of " + i);
        }
        assertEquals(new IndexTerm(cut - 1, 1), h.on(() -> h.store.findLastMatch(1, last)));
    }
}
