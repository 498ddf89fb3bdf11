package io.poyang.raft.server;

import io.poyang.raft.store.FaultyFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code snapshotEvery(entries, ...)}: a trigger that comes while a snapshot is being taken is
 * dropped, so the snapshot after it must start when that one ends if enough was applied since its
 * capture. It used to wait for the next trigger, which an idle group never gives.
 */
class SnapshotTriggerTest {

    @TempDir
    Path dir;

    @Test
    void entriesAppliedWhileASnapshotIsTakenTriggerTheNextOneWhenItEnds() throws Exception {
        Path snapDir = dir.resolve("node-1").resolve("group-1").resolve("snapshot").toAbsolutePath();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean holdFirst = new AtomicBoolean(true);
        FaultyFileIo io = new FaultyFileIo();
        io.hook = new FaultyFileIo.Hook() {
            @Override
            public void beforeWrite(Path file, long position, int length) throws IOException {
                if (file.toAbsolutePath().startsWith(snapDir) && holdFirst.compareAndSet(true, false)) {
                    held.countDown();
                    try {
                        if (!release.await(30, TimeUnit.SECONDS)) {
                            throw new IOException("the test never released the snapshot write");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException(e);
                    }
                }
            }
        };
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io).snapshotEvery(100, 0)).start()) {
            c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            assertTrue(held.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "no snapshot started at 100 entries");
            // 200 more while the first is held: their triggers find one running
            for (long v = 101; v <= 300; v++) {
                c.write(1, v);
            }
            release.countDown();
            // nothing is written from here: only the end of the first can start the second
            RaftCluster.waitFor("a snapshot covering the entries applied while the first was taken", 10,
                    () -> newestSnapshotIndex(snapDir) >= 300);
        }
    }

    /** The last index of the newest snapshot in {@code d} (from its meta file's name), or 0. */
    private static long newestSnapshotIndex(Path d) {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".meta"))
                    .mapToLong(n -> Long.parseLong(n.substring(0, n.indexOf('-')))).max().orElse(0);
        } catch (IOException e) {
            return 0;
        }
    }
}
