package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static io.poyang.raft.store.StoreHarness.bodyFor;
import static io.poyang.raft.store.StoreHarness.bodyOf;
import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A follower that installed a snapshot its log does not match starts an empty log after it. */
@ExtendWith(NoImpossibleStates.class)
class SnapshotResetTest {

    @TempDir
    Path dir;

    /**
     * The reset changes the store in memory, then saves the status file. When the save fails the
     * files still describe the old log: entries appended after the snapshot would be written where
     * a restart's recovery cuts them as a torn tail. The store fails instead.
     */
    @Test
    void aResetWhoseStatusSaveFailsFailsTheStore() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        java.util.concurrent.atomic.AtomicBoolean failSave = new java.util.concurrent.atomic.AtomicBoolean();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeMove(Path from, Path to) throws java.io.IOException {
                if (to.getFileName().toString().equals(StatusFile.FILE_NAME) && failSave.get()) {
                    throw new java.io.IOException("injected: the status file cannot be saved");
                }
            }
        };
        try (StoreHarness h = new StoreHarness(dir, c -> c.fileIo(io))) {
            h.open();
            h.append(items(1, 200, 1, 0, 1, 40));
            h.awaitPersisted(200);
            failSave.set(true);
            assertThrows(Throwable.class, () -> h.call(() -> h.store.resetAfterSnapshot(5000, 4)));
            LogStoreFailedException failure = h.on(h.store::failure);
            assertTrue(failure != null && failure.getMessage().contains("resetting the log after a snapshot at index 5000"),
                    String.valueOf(failure));
            assertThrows(Throwable.class, () -> h.append(items(5001, 5001, 5, 4, 2, 40)), "appends are refused");
        }
    }

    @Test
    void resetStartsTheLogAfterTheSnapshotAndSurvivesAReopen() throws Exception {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 2000, 1, 0, 1, 40));
            h.awaitPersisted(2000);
            h.on(() -> {
                h.store.setCommitIndex(1500);
                return null;
            });
            assertThrows(TruncateBelowCommitException.class, () -> h.call(() -> h.store.resetAfterSnapshot(1400, 1)));
            h.call(() -> h.store.resetAfterSnapshot(5000, 4));
            assertEquals(5001, (long) h.on(h.store::firstIndex));
            assertEquals(5000, (long) h.on(h.store::lastIndex));
            assertEquals(4, (int) h.on(() -> h.store.termOf(5000)));
            assertEquals(new IndexTerm(5000, 4), h.on(() -> h.store.findLastMatch(9, 9000)));
            assertThrows(IllegalArgumentException.class, () -> h.append(items(2001, 2001, 1, 1, 1, 40)));
            h.append(items(5001, 5100, 5, 4, 2, 40));
            h.awaitPersisted(5100);
            assertEquals(100, h.loadAll(5001, 5100).size());
        }
        long segments;
        try (Stream<Path> s = Files.list(dir.resolve("log"))) {
            segments = s.count();
        }
        assertTrue(segments <= 3, "old segments were deleted: " + segments + " left");
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(5001, s.getFirstIndex());
            assertEquals(5100, s.getLastIndex());
            assertEquals(5, s.getLastTerm());
            assertEquals(4, (int) h.on(() -> h.store.termOf(5000)));
            for (LogItem it : h.loadAll(5001, 5100)) {
                assertArrayEquals(bodyFor(it.getIndex(), 2, 40), bodyOf(it));
            }
        }
    }

    @Test
    void resetWithNothingAppendedAfterwardsReopensEmpty() {
        try (StoreHarness h = new StoreHarness(dir, null)) {
            h.open();
            h.append(items(1, 300, 1, 0, 1, 40));
            h.awaitPersisted(300);
            h.call(() -> h.store.resetAfterSnapshot(10_000, 3));
        }
        try (StoreHarness h = new StoreHarness(dir, null)) {
            RecoveredState s = h.open();
            assertEquals(10_001, s.getFirstIndex());
            assertEquals(10_000, s.getLastIndex());
            assertEquals(3, s.getLastTerm());
            assertEquals(10_000, s.getCommitIndex());
        }
    }
}
