package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(NoImpossibleStates.class)
class LogStoreAppendReadTest {

    @TempDir
    Path dir;

    @Test
    void roundTripAcrossSegmentRollsAndReopen() throws Exception {
        int n = 3000;   // ~300 KB over 64 KB segments: several rolls
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(0, s.getLastIndex());
            assertEquals(1, s.getFirstIndex());
            long next = 1;
            int prevTerm = 0;
            for (int batch = 0; next <= n; batch++) {
                int term = 1 + batch / 10;
                long to = Math.min(n, next + batch % 50);
                h.append(items(next, to, term, prevTerm, 1, 20));
                prevTerm = term;
                next = to + 1;
            }
            h.awaitPersisted(n);
            assertEquals(n, (long) h.on(h.store::lastIndex));
            assertEquals(n, (long) h.on(h.store::writtenIndex));
            checkItems(h, 1, n);
            long segs;
            try (Stream<Path> files = Files.list(dir.resolve("log"))) {
                segs = files.count();
            }
            assertTrue(segs >= 4, "expected several segments, found " + segs);
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(n, s.getLastIndex());
            assertEquals(n, h.persisted());
            checkItems(h, 1, n);
            int lastTerm = s.getLastTerm();
            h.append(items(n + 1, n + 10, lastTerm + 1, lastTerm, 1, 20));
            h.awaitPersisted(n + 10);
            checkItems(h, 1, n + 10);
        }
    }

    private static void checkItems(StoreHarness h, long from, long to) {
        List<LogItem> all = h.loadAll(from, to);
        assertEquals(to - from + 1, all.size());
        for (int i = 0; i < all.size(); i++) {
            LogItem it = all.get(i);
            assertEquals(from + i, it.getIndex());
            assertArrayEquals(bodyFor(it.getIndex(), 1, 20), bodyOf(it), "body of index " + it.getIndex());
            assertEquals(7, it.getBizType());
            assertEquals(1_700_000_000_000L + it.getIndex(), it.getTimestampMillis());
            if (it.getIndex() % 3 == 0) {
                assertNull(it.getHeader());
            } else {
                assertEquals("h" + it.getIndex(), new String(((ByteBody) it.getHeader()).toByteArray()));
            }
            assertEquals(it.getTerm(), (int) h.on(() -> h.store.termOf(it.getIndex())));
        }
    }

    @Test
    void loadRespectsLimitsAndWrittenIndex() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 100, 1, 0, 2, 100));
            h.awaitPersisted(100);
            assertEquals(10, h.load(1, 10, 1 << 20).size());
            List<LogItem> few = h.load(5, 1000, 500);
            assertTrue(few.size() >= 1 && few.size() <= 3, "maxBytes bounds the read: " + few.size());
            assertEquals(5, few.get(0).getIndex());
            assertEquals(1, h.load(7, 1000, 1).size(), "at least one item even over maxBytes");
            assertTrue(h.load(101, 10, 1 << 20).isEmpty());
        }
    }

    @Test
    void termsAndConflictSearch() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 10, 1, 0, 0, 10));
            h.append(items(11, 20, 3, 1, 0, 10));
            h.append(items(21, 30, 4, 3, 0, 10));
            assertEquals(0, (int) h.on(() -> h.store.termOf(0)));
            assertEquals(1, (int) h.on(() -> h.store.termOf(10)));
            assertEquals(3, (int) h.on(() -> h.store.termOf(11)));
            assertEquals(4, (int) h.on(() -> h.store.termOf(30)));
            assertThrows(IllegalArgumentException.class, () -> h.on(() -> h.store.termOf(31)));
            assertEquals(new IndexTerm(10, 1), h.on(() -> h.store.findLastMatch(2, 25)));
            assertEquals(new IndexTerm(20, 3), h.on(() -> h.store.findLastMatch(3, 25)));
            assertEquals(new IndexTerm(25, 4), h.on(() -> h.store.findLastMatch(9, 25)));
            assertEquals(new IndexTerm(30, 4), h.on(() -> h.store.findLastMatch(9, 99)));
            assertEquals(new IndexTerm(7, 1), h.on(() -> h.store.findLastMatch(1, 7)));
            assertEquals(new IndexTerm(0, 0), h.on(() -> h.store.findLastMatch(0, 7)));
        }
    }

    @Test
    void refusesItemsThatDoNotFollowTheLog() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 5, 2, 0, 0, 10));
            assertThrows(IllegalArgumentException.class, () -> h.append(items(7, 8, 2, 2, 0, 10)), "gap");
            assertThrows(IllegalArgumentException.class, () -> h.append(items(6, 8, 2, 1, 0, 10)), "prevLogTerm");
            assertThrows(IllegalArgumentException.class, () -> h.append(items(6, 8, 1, 2, 0, 10)), "term goes back");
            assertThrows(IllegalArgumentException.class,
                    () -> h.append(items(6, 6, 2, 2, 0, 70_000)), "bigger than a segment");
            assertEquals(5, (long) h.on(h.store::lastIndex));
        }
    }

    /** A hook that holds every fsync of a log segment until {@code release} opens. */
    private static FaultyFileIo.Hook logFsyncsHeldUntil(java.util.concurrent.CountDownLatch release) {
        return new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws java.io.IOException {
                if (!metadata && file.getParent().getFileName().toString().equals("log")) {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            }
        };
    }

    @Test
    void syncForceFalseReportsPersistedAfterTheWrite() {
        FaultyFileIo io = new FaultyFileIo();
        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(false).fileIo(io))) {
            h.open();
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            io.hook = logFsyncsHeldUntil(release);
            h.append(items(1, 50, 1, 0, 0, 10));
            h.awaitPersisted(50);   // no fsync has returned: persisted came from the writes
            assertEquals(0, (long) h.on(h.store::fsyncCount));
            release.countDown();
        }
    }

    @Test
    void syncForceFalseSavesNoCommitIndexAheadOfTheFsyncedItems() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(false).fileIo(io))) {
            h.open();
            // the log's fsyncs hang: every item is written (and counted persisted), none is on the disk
            io.hook = logFsyncsHeldUntil(release);
            // a status save with commit 1800 (a term change saves one)
            h.append(items(1, 1800, 1, 0, 0, 20));
            h.awaitPersisted(1800);
            h.call(() -> h.store.saveStatus(1, 0, 1800));
            java.util.Map<String, String> status = StatusFile.decode(dir.resolve("status"),
                    java.nio.file.Files.readAllBytes(dir.resolve("status")));
            assertEquals("0", status.get(LogRecovery.K_COMMIT_INDEX), "a commit index no fsync covered: " + status);
            release.countDown();
            // once the fsyncs return, the same saves may claim what they covered
            h.waitFor("an fsync to cover index 1800",
                    (java.util.concurrent.Callable<Boolean>) () -> h.store.syncedIndexForTest() == 1800);
            h.call(() -> h.store.saveStatus(1, 0, 1800));
            status = StatusFile.decode(dir.resolve("status"), java.nio.file.Files.readAllBytes(dir.resolve("status")));
            assertEquals("1800", status.get(LogRecovery.K_COMMIT_INDEX), status.toString());
        }
    }
}
