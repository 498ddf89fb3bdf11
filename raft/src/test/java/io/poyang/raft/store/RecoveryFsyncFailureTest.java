package io.poyang.raft.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Consumer;

import static io.poyang.raft.store.StoreHarness.items;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A write or fsync that fails while recovery makes the scanned tail durable (or, without syncForce,
 * a running store's failed fsync) is recorded with the machine's boot id: a start on the same boot
 * (where the page cache may hold items the disk never got, marked clean) is refused until the
 * machine restarts; after a restart the scan decides.
 */
@ExtendWith(NoImpossibleStates.class)
class RecoveryFsyncFailureTest {

    private static final String BOOT = "8d0c3f3e-boot-one";
    private static final String NEXT_BOOT = "51b7a2c4-boot-two";

    @TempDir
    Path dir;

    private static boolean isLog(Path file) {
        return file.getParent().getFileName().toString().equals("log");
    }

    @ParameterizedTest(name = "syncForce={0}")
    @ValueSource(booleans = {true, false})
    void aFailedRecoveryFsyncRefusesStartsOnTheSameBootUntilTheMachineRestarts(boolean syncForce) throws IOException {
        crashWithTwentyItems(c -> c.syncForce(syncForce));

        // start 1: the recovery fsync of the scanned items fails
        FaultyFileIo eio = new FaultyFileIo();
        eio.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (isLog(file)) {
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        RuntimeException first = assertThrows(RuntimeException.class,
                () -> openOnce(c -> c.syncForce(syncForce).fileIo(eio).bootId(() -> BOOT)));

        // start 2, same boot, the disk answering again: the page cache is not trusted, nothing is touched
        // (before, it opened with 20 items persisted, fsynced "successfully" from the page cache)
        byte[] statusBefore = Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME));
        byte[] logBefore = Files.readAllBytes(dir.resolve("log").resolve(LogSegment.fileName(0)));
        LogStoreException refused = assertThrows(LogStoreException.class,
                () -> openOnce(c -> c.syncForce(syncForce).bootId(() -> BOOT)));
        assertTrue(refused.getMessage().contains("restart the machine"), refused.getMessage());
        assertTrue(refused.getMessage().contains(dir.toString()), refused.getMessage());
        assertArrayEquals(statusBefore, Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME)));
        assertArrayEquals(logBefore, Files.readAllBytes(dir.resolve("log").resolve(LogSegment.fileName(0))));

        assertTrue(first instanceof LogStoreException && first.getMessage().contains("restart the machine"),
                first.toString());
        Map<String, String> status = status();
        assertEquals(BOOT, status.get(LogRecovery.K_FSYNC_FAILED_ON_BOOT));
        assertEquals("7", status.get(LogRecovery.K_TERM), "the rest of the status is kept as it was");
        assertEquals("10", status.get(LogRecovery.K_COMMIT_INDEX));

        // start 3, after a reboot: the disk is the truth; the next status save drops the mark
        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(syncForce).bootId(() -> NEXT_BOOT))) {
            RecoveredState s = h.open();
            assertEquals(20, s.getLastIndex());
            assertEquals(20, h.persisted());
            h.call(() -> h.store.saveStatus(7, 0, 10));
            assertFalse(status().containsKey(LogRecovery.K_FSYNC_FAILED_ON_BOOT));
            h.append(items(21, 25, 7, 7, 0, 20));
            h.awaitPersisted(25);
        }
        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(syncForce).bootId(() -> NEXT_BOOT))) {
            assertEquals(25, h.open().getLastIndex());
        }
    }

    /**
     * Without syncForce a running store's failed fsync cuts nothing (the items after it were reported
     * persisted once written): it saves the boot instead, and a restart on that boot is refused.
     */
    @Test
    void withoutSyncForceARunningStoresFailedFsyncRefusesARestartOnTheSameBoot() {
        FaultyFileIo eio = new FaultyFileIo();
        String failure;
        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(false).fileIo(eio).bootId(() -> BOOT))) {
            h.open();
            h.append(items(1, 10, 7, 0, 0, 20));
            h.waitFor("items fsynced", () -> h.store.syncedIndexForTest() >= 10);
            eio.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeForce(Path file, boolean metadata) throws IOException {
                    if (isLog(file)) {
                        throw new IOException("Input/output error (injected)");
                    }
                }
            };
            h.append(items(11, 20, 7, 7, 0, 20));
            h.waitFor("the store failed", () -> h.store.failure() != null);
            failure = h.on(() -> h.store.failure().getMessage());
            eio.hook = new FaultyFileIo.Hook() {
            };
        }   // (the status save the failure started ends before the harness's I/O threads do)

        LogStoreException refused = assertThrows(LogStoreException.class,
                () -> openOnce(c -> c.syncForce(false).bootId(() -> BOOT)));
        assertTrue(refused.getMessage().contains("restart the machine"), refused.getMessage());
        assertTrue(failure.contains("restart the machine"), failure);
        assertEquals(BOOT, status().get(LogRecovery.K_FSYNC_FAILED_ON_BOOT));
        assertFalse(status().containsKey(LogRecovery.K_FSYNC_FAILED_AFTER), "nothing reported persisted is cut");

        try (StoreHarness h = new StoreHarness(dir, c -> c.syncForce(false).bootId(() -> NEXT_BOOT))) {
            assertEquals(20, h.open().getLastIndex());
            h.call(() -> h.store.saveStatus(7, 0, 10));
            assertFalse(status().containsKey(LogRecovery.K_FSYNC_FAILED_ON_BOOT));
        }
    }

    /** Cutting a torn tail is a write and an fsync of the scanned segment: its failure is recorded the same way. */
    @Test
    void aFailedZeroingOfATornTailIsRecordedToo() throws IOException {
        long nextPos = crashWithTwentyItems(null);
        byte[] garbage = new byte[LogItemCodec.HEADER_BYTES];
        Arrays.fill(garbage, (byte) 0x5A);
        try (FileChannel ch = FileChannel.open(dir.resolve("log").resolve(LogSegment.fileName(0)),
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(garbage), nextPos);
        }
        FaultyFileIo full = new FaultyFileIo();
        full.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (isLog(file)) {
                    throw new IOException("No space left on device (injected)");
                }
            }
        };
        RuntimeException first = assertThrows(RuntimeException.class,
                () -> openOnce(c -> c.fileIo(full).bootId(() -> BOOT)));
        assertThrows(LogStoreException.class, () -> openOnce(c -> c.bootId(() -> BOOT)));
        assertTrue(first.getMessage().contains("zeroing"), first.getMessage());
        assertEquals(BOOT, status().get(LogRecovery.K_FSYNC_FAILED_ON_BOOT));

        try (StoreHarness h = new StoreHarness(dir, c -> c.bootId(() -> NEXT_BOOT))) {
            RecoveredState s = h.open();
            assertEquals(20, s.getLastIndex());
            assertTrue(s.hadTornTail());
        }
    }

    /**
     * Without a boot id (not Linux) the mark cannot be matched: the store says so and starts, as it
     * did before the mark existed.
     */
    @Test
    void withoutABootIdTheMarkIsWrittenButCannotRefuse() throws IOException {
        crashWithTwentyItems(null);
        FaultyFileIo eio = new FaultyFileIo();
        eio.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                if (isLog(file)) {
                    throw new IOException("Input/output error (injected)");
                }
            }
        };
        LogStoreException first = assertThrows(LogStoreException.class,
                () -> openOnce(c -> c.fileIo(eio).bootId(() -> null)));
        assertTrue(first.getMessage().contains("no boot id"), first.getMessage());
        assertEquals(LogRecovery.UNKNOWN_BOOT, status().get(LogRecovery.K_FSYNC_FAILED_ON_BOOT));
        try (StoreHarness h = new StoreHarness(dir, c -> c.bootId(() -> null))) {
            assertEquals(20, h.open().getLastIndex());
        }
    }

    /** The status file cannot be saved either: the start fails saying so, and to restart the machine. */
    @Test
    void aMarkThatCannotBeSavedIsReportedWithTheRestartAdvice() throws IOException {
        crashWithTwentyItems(null);
        byte[] statusBefore = Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME));
        FaultyFileIo eio = new FaultyFileIo();
        eio.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeForce(Path file, boolean metadata) throws IOException {
                throw new IOException("Input/output error (injected)");
            }
        };
        LogStoreException first = assertThrows(LogStoreException.class,
                () -> openOnce(c -> c.fileIo(eio).bootId(() -> BOOT)));
        assertTrue(first.getMessage().contains("failed too"), first.getMessage());
        assertTrue(first.getMessage().contains("restart the machine"), first.getMessage());
        assertArrayEquals(statusBefore, Files.readAllBytes(dir.resolve(StatusFile.FILE_NAME)));
    }

    @Test
    void theBootIdIsTheKernelsOnLinux() throws IOException {
        assumeTrue(Files.isReadable(BootId.LINUX_BOOT_ID), "not Linux");
        String id = BootId.current();
        assertNotNull(id);
        assertEquals(new String(Files.readAllBytes(BootId.LINUX_BOOT_ID), "US-ASCII").trim(), id);
        assertEquals(id, BootId.current());
    }

    /**
     * Items 1 to 20 of term 7 written and persisted, the status saved with commit index 10 and no
     * trusted point (so recovery scans and fsyncs them all), then the store stops without closing.
     * Returns the position after the last item.
     */
    private long crashWithTwentyItems(Consumer<LogStoreConfig> tweak) {
        StoreHarness h = new StoreHarness(dir, tweak);
        try {
            h.open();
            h.append(items(1, 20, 7, 0, 0, 20));
            h.awaitPersisted(20);
            // (without syncForce the status claims no commit index ahead of the fsyncs)
            h.waitFor("items fsynced", () -> h.store.syncedIndexForTest() >= 20);
            h.call(() -> h.store.saveStatus(7, 0, 10));
            return h.on(() -> h.store.appender().nextPos());
        } finally {
            h.shutdown();
        }
    }

    /** Opens a store on the directory, then stops it without closing (a start that failed has nothing to close). */
    private void openOnce(Consumer<LogStoreConfig> tweak) {
        StoreHarness h = new StoreHarness(dir, tweak);
        try {
            h.open();
        } finally {
            h.shutdown();
        }
    }

    private Map<String, String> status() {
        Path p = dir.resolve(StatusFile.FILE_NAME);
        try {
            return StatusFile.decode(p, Files.readAllBytes(p));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
