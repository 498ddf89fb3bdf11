package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCallResult;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.store.FileIo;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * Test access to a group's snapshot files from other packages: hands a follower a whole snapshot
 * as if its leader sent it in one chunk, re-cuts a data file into other chunks, checks that every
 * meta file on disk names a data file of its size, and lists the group's fibers.
 */
public final class SnapshotProbe {

    private SnapshotProbe() {
    }

    /**
     * The lastIndex of each snapshot {@code g} lists as complete, oldest first (read on its
     * dispatcher).
     */
    public static CompletableFuture<List<Long>> listedIndexes(RaftGroup g) {
        CompletableFuture<List<Long>> result = new CompletableFuture<>();
        boolean started = g.fiberGroup.fireFiber("test-listed-snapshots", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                List<Long> out = new ArrayList<>();
                SnapshotFiles.Snapshot latest = g.snapshotManager.latest();
                for (SnapshotFiles.Snapshot s : g.snapshotManager.listedForTests()) {
                    out.add(s.meta.lastIndex());
                }
                if (latest != null && !out.contains(latest.meta.lastIndex())) {
                    throw new IllegalStateException("latest() is not listed");
                }
                result.complete(out);
                return Fiber.frameReturn();
            }
        });
        if (!started) {
            result.completeExceptionally(new IllegalStateException("group " + g.state.groupId + " is stopping"));
        }
        return result;
    }

    /**
     * Counts a reader on the listed snapshot of {@code lastIndex} of {@code g}, as a transfer of it
     * to a follower does: its files are not deleted until {@link #endReader}. Completes with the
     * snapshot, to hand to {@link #endReader}; fails when no snapshot of that index is listed.
     */
    public static CompletableFuture<Object> holdReader(RaftGroup g, long lastIndex) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        boolean started = g.fiberGroup.fireFiber("test-hold-snapshot-reader", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                for (SnapshotFiles.Snapshot s : g.snapshotManager.listedForTests()) {
                    if (s.meta.lastIndex() == lastIndex) {
                        g.snapshotManager.acquire(s);
                        result.complete(s);
                        return Fiber.frameReturn();
                    }
                }
                result.completeExceptionally(new IllegalStateException("no snapshot of index " + lastIndex + " is listed"));
                return Fiber.frameReturn();
            }
        });
        if (!started) {
            result.completeExceptionally(new IllegalStateException("group " + g.state.groupId + " is stopping"));
        }
        return result;
    }

    /** Ends a reader {@link #holdReader} counted (on the dispatcher, as a transfer's end does). */
    public static CompletableFuture<Void> endReader(RaftGroup g, Object snapshot) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        boolean started = g.fiberGroup.fireFiber("test-end-snapshot-reader", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                g.snapshotManager.release((SnapshotFiles.Snapshot) snapshot);
                result.complete(null);
                return Fiber.frameReturn();
            }
        });
        if (!started) {
            result.completeExceptionally(new IllegalStateException("group " + g.state.groupId + " is stopping"));
        }
        return result;
    }

    /** The fibers of {@code g} as they are now (a fiber that has ended is not among them). */
    public static CompletableFuture<io.poyang.fiber.FiberGroupSnapshot> fibers(RaftGroup g) {
        return g.fiberGroup.snapshot();
    }

    /**
     * Gives {@code g} (a follower) the data file {@code dataFile} as the snapshot {@code meta}, in
     * one INSTALL_SNAPSHOT chunk of its current term from its current leader; completes with the
     * answer's success flag.
     */
    public static CompletableFuture<Boolean> receiveWhole(RaftGroup g, SnapshotMeta meta, byte[] dataFile) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        boolean started = g.fiberGroup.fireFiber("test-receive-snapshot", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                InstallSnapshotRequest req = new InstallSnapshotRequest(g.state.groupId, g.state.currentTerm,
                        g.state.leaderId, meta.lastIndex(), meta.lastTerm(), meta.members(), 0, dataFile.length,
                        dataFile, dataFile.length, true, null, meta.format());
                return Fiber.call(g.snapshotManager.receive(req), this::answered);
            }

            private FrameCallResult answered(InstallSnapshotResponse resp) {
                result.complete(resp.success);
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                result.completeExceptionally(ex);
                return Fiber.frameReturn();
            }
        });
        if (!started) {
            result.completeExceptionally(new IllegalStateException("group " + g.state.groupId + " is stopping"));
        }
        return result;
    }

    /** The data file of the newest snapshot in {@code snapshotDir}, re-cut into chunks of {@code chunkBytes}. */
    public static byte[] rechunkedNewest(Path snapshotDir, int chunkBytes) throws IOException {
        List<SnapshotFiles.Snapshot> found = SnapshotFiles.scan(FileIo.DEFAULT, snapshotDir).complete;
        if (found.isEmpty()) {
            throw new IOException("no snapshot in " + snapshotDir);
        }
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        try (InputStream in = SnapshotFiles.open(FileIo.DEFAULT, found.get(found.size() - 1).data)) {
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) >= 0) {
                content.write(buf, 0, n);
            }
        }
        byte[] state = content.toByteArray();
        ByteBuffer out = ByteBuffer.allocate(state.length + 8 * (state.length / chunkBytes + 2));
        CRC32C crc = new CRC32C();
        int chunks = 0;
        for (int at = 0; at < state.length; at += chunkBytes) {
            int len = Math.min(chunkBytes, state.length - at);
            crc.reset();
            crc.update(state, at, len);
            out.putInt(len).putInt((int) crc.getValue()).put(state, at, len);
            chunks++;
        }
        out.putInt(0).putInt(chunks);
        byte[] file = new byte[out.position()];
        System.arraycopy(out.array(), 0, file, 0, file.length);
        return file;
    }

    /**
     * The meta files in {@code snapshotDir} whose data file is missing or of another size than the
     * meta file records: a node would refuse to start on them. Read-only.
     */
    public static List<String> mismatchedMetaFiles(Path snapshotDir) throws IOException {
        List<String> bad = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(snapshotDir, "*" + SnapshotFiles.META_SUFFIX)) {
            for (Path meta : ds) {
                String n = meta.getFileName().toString();
                Path data = snapshotDir.resolve(n.substring(0, n.length() - SnapshotFiles.META_SUFFIX.length())
                        + SnapshotFiles.DATA_SUFFIX);
                Map<String, String> m = SnapshotFiles.readMeta(FileIo.DEFAULT, meta);
                long recorded = Long.parseLong(m.get("dataBytes"));
                long actual = Files.exists(data) ? Files.size(data) : -1;
                if (actual != recorded) {
                    bad.add(n + " records " + recorded + " bytes, " + data.getFileName() + " has " + actual);
                }
            }
        }
        return bad;
    }

    /** The file tasks of {@code g} queued or running on the log I/O pool now (a snapshot read, say). */
    public static int ioTasksInFlight(RaftGroup g) {
        return g.ioExecutor.inFlight();
    }
}
