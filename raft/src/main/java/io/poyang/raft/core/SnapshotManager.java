package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.LogFile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A group's snapshots: taking them (every {@code snapshotEveryEntries} applied entries, every
 * {@code snapshotIntervalMillis}, or on demand), writing them with CRCs and the meta file last
 * ({@link SnapshotFiles}), keeping {@code snapshotsToKeep} of them, deleting the log below the
 * oldest kept one, loading the newest one that can be read at start (an older one when the log
 * continues it), and receiving one from the leader chunk by chunk.
 * The state machine is captured by the {@link ApplyManager} between two apply batches and written
 * out on an I/O thread while applying goes on. Dispatcher thread.
 */
final class SnapshotManager {

    private static final PoyangLog log = PoyangLogs.get(SnapshotManager.class);
    /** How often an operation on snapshot files looks again whether another one on the same names ended. */
    private static final long NAME_WAIT_MILLIS = 5;

    private final RaftGroup g;
    private final StateMachine sm;
    private final FileIo io;
    final Path dir;
    /** Complete snapshots, oldest first. */
    private final List<SnapshotFiles.Snapshot> snapshots = new ArrayList<>();
    /**
     * Snapshots off the list whose files wait for their readers to end ({@code deleteWhenUnread}):
     * pruned ones, older than every listed one, and received ones whose install failed
     * ({@link #dropUninstalled}), which may be newer than every listed one.
     */
    private final List<SnapshotFiles.Snapshot> unlisted = new ArrayList<>();
    /**
     * The damaged snapshots the start found (a meta file that fails its checks, a data file missing or
     * of another size): never listed, never loadable. Once a newer snapshot is listed none of them is
     * anything to fall back to, and {@link #pruneOld} deletes them like old snapshots; before, their
     * files stayed for good and every start warned about them again.
     */
    private final List<SnapshotFiles.Damaged> damaged = new ArrayList<>();
    /**
     * The base names ({@link SnapshotFiles#baseName}) whose files are being written, committed or
     * deleted on an I/O thread. A snapshot taken here and one received from the leader at the same
     * index and term have the same file names; so has a received copy of a snapshot whose deletion
     * runs. Only one operation per name runs at a time, and the next one decides after it ended.
     */
    private final Set<String> busyNames = new HashSet<>();
    private boolean taking;
    // On a full disk every attempt fails the same way, taking or receiving one (the leader sends
    // it again every few heartbeats): the first failure of a run is logged, then one per interval.
    private final WarningThrottle takeFailures = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));
    private final WarningThrottle receiveFailures = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));

    // a snapshot arriving from the leader
    private LogFile receiving;
    private long receivingIndex;
    private int receivingTerm;
    /** The term of the leader that started the transfer at offset 0. */
    private int receivingLeaderTerm;
    private long receivedBytes;
    /** The received file after its last chunk, until it is committed or dropped. */
    private LogFile receivedFile;

    SnapshotManager(RaftGroup g, StateMachine sm, Path dir) {
        this.g = g;
        this.sm = sm;
        this.io = g.config.logFileIo();
        this.dir = dir;
    }

    /** The file access of the group's snapshots: the log store's ({@link RaftConfig#logFileIo}). */
    FileIo io() {
        return io;
    }

    /** The newest complete snapshot, or null. */
    SnapshotFiles.Snapshot latest() {
        return snapshots.isEmpty() ? null : snapshots.get(snapshots.size() - 1);
    }

    /** A copy of the list of complete snapshots, oldest first (for tests). Dispatcher thread. */
    List<SnapshotFiles.Snapshot> listedForTests() {
        return new ArrayList<>(snapshots);
    }

    // ---------------------------------------------------------------- start

    /**
     * Set by {@link #abandonLoad}: the group was stopped while it starts, and the start's snapshot
     * read reads no more and is dropped. Any thread.
     */
    private volatile boolean loadAbandoned;
    /** The start's snapshot read, once submitted: failed at once by {@link #abandonLoad}. */
    private volatile FiberFuture<Object> loadFuture;

    /**
     * Finds the snapshots on disk and installs the newest one that can be read into the state
     * machine; returns its meta, or null when there is no snapshot. The log store is open.
     *
     * <p>A snapshot that cannot be read (a chunk fails its CRC, its data file is truncated or
     * missing, its meta file is damaged, the state machine's {@code readSnapshot} throws, the disk
     * gives an I/O error) is skipped with a warning, and the next older one is tried, if the log
     * continues it up to the newest snapshot on disk (see {@link #logContinues}): the older state
     * plus the log then replays to at least the state the skipped one held. An I/O error is handled
     * as damage: the older snapshot's own CRCs say whether the disk serves it correctly, and a disk
     * that keeps failing fails that read too. Skipping is safe for the state machine because
     * {@code readSnapshot} builds a new state object and must not touch the live state; an
     * {@code installSnapshot} that throws (the live state may be half replaced) fails the start
     * as before. When no snapshot can stand in, the start fails with {@link SnapshotUnreadableException}.
     * Skipped snapshots are taken off the list (never sent to a follower, never counted among the
     * kept ones) and their files are left as they are for the operator to inspect.
     * Ends early with a {@link io.poyang.common.StoppedException} after {@link #abandonLoad}.
     */
    FiberFrame<SnapshotMeta> init() {
        return new FiberFrame<SnapshotMeta>() {
            /** The newest index among the snapshots on disk, damaged or not. */
            private long newestOnDisk;
            /** Position in {@link #snapshots} of the snapshot being tried. */
            private int candidate;
            /** The snapshots passed over: "file: why". */
            private final List<String> skipped = new ArrayList<>();
            private final List<Path> unreadable = new ArrayList<>();
            /** The damaged snapshots older than the one loaded: harmless, but their files stay. */
            private final List<SnapshotFiles.Damaged> olderDamaged = new ArrayList<>();
            private Throwable firstFailure;

            @Override
            public FrameCallResult execute(Object input) {
                if (loadAbandoned) {
                    throw loadAbandonedError(dir);
                }
                return g.blocking("snapshot-scan", () -> SnapshotFiles.scan(io, dir)).await(this::afterScan);
            }

            private FrameCallResult afterScan(SnapshotFiles.Scan found) {
                snapshots.clear();
                snapshots.addAll(found.complete);
                SnapshotFiles.Snapshot newestComplete = latest();
                long newestCompleteIndex = newestComplete == null ? -1 : newestComplete.meta.lastIndex();
                newestOnDisk = newestCompleteIndex;
                for (Path f : found.foreign) {
                    log.warn("group {} on node {}: ignoring {} in the snapshot directory: it does not read as a snapshot's"
                            + " meta file and its name is not one (<index>-<term>.meta); move it out of {}",
                            g.state.groupId, g.state.selfId, f.getFileName(), dir);
                }
                SnapshotManager.this.damaged.clear();
                SnapshotManager.this.damaged.addAll(found.damaged);
                List<SnapshotFiles.Damaged> damaged = new ArrayList<>(found.damaged);
                damaged.sort((x, y) -> Long.compare(y.lastIndex, x.lastIndex));
                for (SnapshotFiles.Damaged d : damaged) {
                    newestOnDisk = Math.max(newestOnDisk, d.lastIndex);
                    if (d.lastIndex > newestCompleteIndex) {
                        skipped.add(d.metaFile.getFileName() + ": " + d.reason);
                        unreadable.add(d.metaFile);
                    } else {
                        olderDamaged.add(d);
                    }
                }
                if (newestComplete == null && damaged.isEmpty()) {
                    return Fiber.frameReturn(null);
                }
                candidate = snapshots.size() - 1;
                return tryCandidate();
            }

            private FrameCallResult tryCandidate() {
                for (; candidate >= 0; candidate--) {
                    SnapshotFiles.Snapshot s = snapshots.get(candidate);
                    if (s.meta.lastIndex() >= newestOnDisk) {
                        break;   // the newest snapshot: loaded as before, whatever the log holds
                    }
                    String gap = logContinues(s.meta, newestOnDisk);
                    if (gap == null) {
                        break;
                    }
                    skipped.add(s.data.getFileName() + ": it reads, but cannot stand in for the newer ones: " + gap);
                }
                if (candidate < 0) {
                    throw unloadable();
                }
                SnapshotFiles.Snapshot s = snapshots.get(candidate);
                if (loadAbandoned) {
                    throw loadAbandonedError(s.data);
                }
                return Fiber.call(Attempt.of(new ReadFrame(s, true)), this::afterRead);
            }

            private FrameCallResult afterRead(Attempt<Object> a) throws Throwable {
                SnapshotFiles.Snapshot s = snapshots.get(candidate);
                if (!a.ok()) {
                    if (a.error instanceof Error || g.stopRequested()) {
                        throw a.error;
                    }
                    if (firstFailure == null) {
                        firstFailure = a.error;
                    } else {
                        firstFailure.addSuppressed(a.error);
                    }
                    log.warn("group {} on node {}: cannot read the snapshot {} ({}); trying an older one",
                            g.state.groupId, g.state.selfId, s.data, a.error.toString());
                    skipped.add(s.data.getFileName() + ": " + a.error);
                    unreadable.add(s.data);
                    candidate--;
                    return tryCandidate();
                }
                if (g.stopRequested()) {
                    // the read ended just before the stop came (its completion was on its way, so
                    // abandonLoad's came too late): dropped like an abandoned one, never installed
                    throw loadAbandonedError(s.data);
                }
                install(s.meta, a.value);
                for (Iterator<SnapshotFiles.Damaged> it = olderDamaged.iterator(); it.hasNext(); ) {
                    SnapshotFiles.Damaged d = it.next();
                    if (d.lastIndex > s.meta.lastIndex()) {
                        // between the loaded one and a newer one that failed: skipped as well
                        skipped.add(d.metaFile.getFileName() + ": " + d.reason);
                        it.remove();
                    }
                }
                if (candidate < snapshots.size() - 1 || !skipped.isEmpty()) {
                    // not listed, a skipped snapshot is never sent to a follower nor counted among
                    // the kept ones; its files stay for the operator (see the README)
                    snapshots.subList(candidate + 1, snapshots.size()).clear();
                    log.warn("group {} on node {}: started from the older snapshot {} instead of the newer ones,"
                            + " which cannot be used: {}. The log holds every entry from it on, so nothing is lost."
                            + " The skipped snapshots' files are left in {} for inspection until a newer snapshot is"
                            + " written (after a restart they are tried again while they are the newest)", g.state.groupId,
                            g.state.selfId, s, String.join("; ", skipped), dir, firstFailure);
                }
                for (SnapshotFiles.Damaged d : olderDamaged) {
                    log.warn("group {} on node {}: the snapshot {} in {} is damaged and older than the one loaded;"
                            + " it is ignored, and its files are deleted when the next snapshot is written",
                            g.state.groupId, g.state.selfId, d, dir);
                }
                log.info("group {} on node {}: loaded {}", g.state.groupId, g.state.selfId, s);
                return Fiber.frameReturn(s.meta);
            }

            private SnapshotUnreadableException unloadable() {
                for (SnapshotFiles.Damaged d : olderDamaged) {
                    skipped.add(d.metaFile.getFileName() + ": " + d.reason);
                    unreadable.add(d.metaFile);
                }
                Path groupDir = dir.getParent();
                String message = "group " + g.state.groupId + " on node " + g.state.selfId + " cannot load a snapshot"
                        + " from " + dir + ": " + String.join("; ", skipped)
                        + "; no older snapshot is left to try"
                        + ". No file was changed or deleted. To rebuild this node's replica from the other members:"
                        + " take the node out of the group (prepare-change and commit-change without it), move "
                        + groupDir + " aside (keep it for analysis), start the node, and add it back (add-group,"
                        + " then prepare-change and commit-change with it); it catches up from the leader by a"
                        + " snapshot (docs/operations.md, \"Back up and restore\"). Do not just delete the directory"
                        + " of a voter. If no other member holds the group's data (a single-node group), restore the"
                        + " snapshot files from a backup instead";
                return new SnapshotUnreadableException(message, groupDir, new ArrayList<>(unreadable), firstFailure);
            }
        };
    }

    /**
     * Null when the log continues {@code older}: it holds the entry right after it, the entry at its
     * index has its term (or is the log's known previous entry), and it reaches {@code newestOnDisk},
     * so replaying it brings the state machine at least to where the newest snapshot was. Otherwise
     * what is missing. Without the last condition a node whose log was lost or reset would restart
     * with less than it had applied (a single-node group would lose committed writes).
     */
    private String logContinues(SnapshotMeta older, long newestOnDisk) {
        io.poyang.raft.store.LogStore store = g.store;
        long idx = older.lastIndex();
        long first = store.firstIndex();
        long last = store.lastIndex();
        if (first > idx + 1) {
            return "the log starts at index " + first + ", after its index " + idx
                    + " (it was compacted, or reset after a snapshot from the leader)";
        }
        if (last < newestOnDisk) {
            return "the log ends at index " + last + ", before the newest snapshot's index " + newestOnDisk;
        }
        if (store.termOf(idx) != older.lastTerm()) {
            return "the log's entry at its index " + idx + " has term " + store.termOf(idx) + ", not "
                    + older.lastTerm();
        }
        return null;
    }

    /**
     * Gives up the start's snapshot load (the group is stopped while it starts): {@link #init()}
     * fails at once with a {@link io.poyang.common.StoppedException} instead of waiting for the
     * state machine to read the whole snapshot (minutes for a large one); the read task's stream
     * refuses its next file read, so the task ends soon, closing the file, and what it read is
     * dropped, never installed. {@link RaftGroup#whenFilesReleased()} still waits for the task.
     * Any thread.
     */
    void abandonLoad() {
        loadAbandoned = true;
        FiberFuture<Object> f = loadFuture;
        if (f != null) {
            f.fireCompleteExceptionally(loadAbandonedError(dir));
        }
    }

    private io.poyang.common.StoppedException loadAbandonedError(Path what) {
        return new io.poyang.common.StoppedException("raft group " + g.state.groupId + " on node " + g.state.selfId
                + ": loading " + what + " was abandoned: the group was stopped while it started");
    }

    /** Reads a snapshot into a new state object ({@link StateMachine#readSnapshot}) on an I/O thread. */
    FiberFrame<Object> readSnapshot(SnapshotFiles.Snapshot s) {
        return new ReadFrame(s, false);
    }

    /** Reads {@code s} on an I/O thread; the start's read ({@code atStart}) can be abandoned. */
    private final class ReadFrame extends FiberFrame<Object> {
        private final SnapshotFiles.Snapshot s;
        private final boolean atStart;

        ReadFrame(SnapshotFiles.Snapshot s, boolean atStart) {
            this.s = s;
            this.atStart = atStart;
        }

        @Override
        public FrameCallResult execute(Object input) {
            s.readers++;
            java.util.function.BooleanSupplier abandoned = atStart ? () -> loadAbandoned : () -> false;
            FiberFuture<Object> f = g.fiberGroup.newFuture("snapshot-read");
            try {
                g.ioExecutor.execute(() -> read(f, abandoned));
            } catch (RuntimeException e) {
                f.fireCompleteExceptionally(e);   // refused: the pool is shut down
            }
            if (atStart) {
                loadFuture = f;
                if (loadAbandoned) {
                    // abandoned between the check before this frame and publishing the future: it may not have seen it
                    f.fireCompleteExceptionally(loadAbandonedError(s.data));
                }
            }
            return f.await(this::done);
        }

        /**
         * The I/O thread's part. An abandoned read completes nothing: its future failed already,
         * and the group's dispatcher may have stopped since. Its state, whole or half read, is
         * dropped here and never reaches the state machine.
         */
        private void read(FiberFuture<Object> f, java.util.function.BooleanSupplier abandoned) {
            Restored r;
            try (InputStream in = SnapshotFiles.open(io, s.data, abandoned)) {
                byte[] section = null;
                if (s.meta.format() == SnapshotMeta.FORMAT_WITH_RAFT_SECTION) {
                    section = SessionTable.readSection(new java.io.DataInputStream(in));
                }
                r = new Restored(section, sm.readSnapshot(s.meta, in));
            } catch (Throwable e) {
                if (!abandoned.getAsBoolean()) {
                    f.fireCompleteExceptionally(e);
                }
                return;
            }
            if (!abandoned.getAsBoolean()) {
                f.fireComplete(r);
            }
        }

        private FrameCallResult done(Object state) {
            return Fiber.frameReturn(state);
        }

        @Override
        protected FrameCallResult doFinally() {
            release(s);
            return Fiber.frameReturn();
        }
    }

    /** What {@link #readSnapshot} read: raft's section (the session table) and the state machine's state. */
    static final class Restored {
        final byte[] sessions;
        final Object state;

        Restored(byte[] sessions, Object state) {
            this.sessions = sessions;
            this.state = state;
        }
    }

    /** Installs what {@link #readSnapshot} read: the state machine's state and raft's session table. Dispatcher. */
    void install(SnapshotMeta meta, Object restored) throws IOException {
        Restored r = (Restored) restored;
        sm.installSnapshot(meta, r.state);
        g.sessions.restore(r.sessions);
    }

    // ---------------------------------------------------------------- taking

    /** Takes a snapshot soon, unless one is being taken. Dispatcher thread. */
    void requestSnapshot() {
        if (!taking && !g.state.stopping) {
            new Fiber("snapshot-" + g.state.groupId, g.fiberGroup, new TakeFrame(null), true).start();
        }
    }

    /** Takes a snapshot now (any thread); completes with what it covers (null: nothing applied yet). */
    CompletableFuture<SnapshotMeta> takeSnapshot() {
        CompletableFuture<SnapshotMeta> result = new CompletableFuture<>();
        if (!g.fiberGroup.fireFiber("snapshot-" + g.state.groupId, new TakeFrame(result))) {
            result.completeExceptionally(new io.poyang.common.StoppedException("raft group " + g.state.groupId
                    + " is stopping"));
        }
        return result;
    }

    private final class TakeFrame extends FiberFrame<Void> {
        private final CompletableFuture<SnapshotMeta> result;
        private ApplyManager.SnapshotCapture capture;
        private SnapshotFiles.Snapshot written;
        private boolean mine;
        /** The base name this frame holds in {@link #busyNames} while its files are written, or null. */
        private String writingName;

        private void freeName() {
            if (writingName != null) {
                busyNames.remove(writingName);
                writingName = null;
            }
        }

        TakeFrame(CompletableFuture<SnapshotMeta> result) {
            this.result = result;
        }

        @Override
        public FrameCallResult execute(Object input) {
            if (taking) {
                // One at a time: wait for the running one, then take a fresh one.
                return Fiber.sleep(10, v -> execute(null));
            }
            taking = true;
            mine = true;
            return g.applyManager.requestCapture().await(this::afterCapture);
        }

        private FrameCallResult afterCapture(ApplyManager.SnapshotCapture c) {
            capture = c;
            if (c == null) {
                SnapshotFiles.Snapshot last = latest();
                return finish(last == null ? null : last.meta);
            }
            return decide(null);
        }

        /** Writes the capture unless a snapshot as new is there; waits while its file names are busy. */
        private FrameCallResult decide(Void v) {
            SnapshotMeta meta = capture.meta;
            String name = SnapshotFiles.baseName(meta);
            if (busyNames.contains(name) || awaitsDeletion(name)) {
                // The same snapshot is being received from the leader, or its older copy deleted. Or
                // that copy waits for its readers to end before its files go (one received whose
                // install failed while a transfer to a follower read it): files written now under
                // its names would be the ones that deletion removes, under a listed snapshot.
                if (g.state.stopping) {
                    if (result != null) {
                        result.completeExceptionally(new io.poyang.common.StoppedException("raft group "
                                + g.state.groupId + " is stopping; the snapshot " + name + " was not written"));
                    }
                    return Fiber.frameReturn();
                }
                return Fiber.sleep(NAME_WAIT_MILLIS, this::decide);
            }
            SnapshotFiles.Snapshot last = latest();
            if (last != null && meta.lastIndex() <= last.meta.lastIndex()) {
                return finish(last.meta);
            }
            busyNames.add(name);
            writingName = name;
            return g.blocking("snapshot-write", () -> SnapshotFiles.write(io, dir, meta, capture.writer))
                    .await(this::afterWrite);
        }

        private FrameCallResult afterWrite(SnapshotFiles.Snapshot s) {
            freeName();
            written = s;
            long failed = takeFailures.endRun();
            if (failed > 0) {
                log.info("group {} on node {}: a snapshot was written again in {} after {} failed attempts",
                        g.state.groupId, g.state.selfId, dir, failed);
            }
            // a snapshot received from the leader while this one was written may be newer: keep the order
            addSnapshot(s);
            g.membership.onSnapshotWritten(s.meta.lastIndex());
            log.info("group {} on node {}: wrote {} ({} bytes)", g.state.groupId, g.state.selfId, s, s.dataBytes);
            pruneOld();
            long oldest = snapshots.get(0).meta.lastIndex();
            long below = Math.min(oldest + 1, g.store.commitIndex() + 1);
            if (below <= g.store.firstIndex()) {
                return finish(s.meta);
            }
            return Fiber.call(Attempt.of(g.store.deleteBelow(below)), this::afterDelete);
        }

        private FrameCallResult afterDelete(Attempt<Void> a) {
            if (!a.ok()) {
                log.warn("group {} on node {}: deleting the log below the oldest snapshot failed; segments it took out"
                        + " are deleted after the next status save that succeeds (or at the next start), later ones"
                        + " after the next snapshot", g.state.groupId, g.state.selfId, a.error);
            }
            g.publishProgress();
            return finish(written.meta);
        }

        private FrameCallResult finish(SnapshotMeta meta) {
            if (result != null) {
                result.complete(meta);
            }
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            Throwable error = ex;
            if (ex instanceof IOException) {
                // the file system's message (ENOSPC, EIO) names neither the file nor what to do
                error = new IOException("writing a snapshot to " + dir + " failed (" + ex + "); the older snapshots"
                        + " and the log they need are kept, and a snapshot is taken again at the next trigger"
                        + " (snapshotEvery). If the disk is full, free space on it", ex);
            }
            if (takeFailures.occurred(System.nanoTime())) {
                long skipped = takeFailures.notLoggedBefore();
                log.warn("group {} on node {}: taking a snapshot failed{}", g.state.groupId, g.state.selfId,
                        skipped > 0 ? " (" + skipped + " more failures since the last warning)" : "", error);
            }
            if (result != null) {
                result.completeExceptionally(error);
            }
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult doFinally() {
            freeName();
            if (mine) {
                taking = false;
                // the triggers that came while this one ran were dropped: when enough was applied
                // since its capture (or since a failed one's), the next one starts now, not only at
                // the next trigger, which an idle group may not give for a long time
                long every = g.config.snapshotEveryEntries();
                if (every > 0 && g.applyManager.appliedSinceSnapshot() >= every) {
                    requestSnapshot();
                }
            }
            if (capture != null) {
                try {
                    capture.writer.release();
                } catch (Throwable e) {
                    log.warn("group {}: releasing a snapshot capture failed", g.state.groupId, e);
                }
                capture = null;
            }
            return Fiber.frameReturn();
        }
    }

    /**
     * Adds a snapshot to the list, kept in index order, and returns the entry for it. One with the
     * index and term of a listed snapshot (received a second time) is the same snapshot in the same
     * files, renamed over the first: the listed entry stays, so that pruning never deletes files
     * another entry still stands for.
     */
    private SnapshotFiles.Snapshot listed(long lastIndex, int lastTerm) {
        for (SnapshotFiles.Snapshot s : snapshots) {
            if (s.meta.lastIndex() == lastIndex && s.meta.lastTerm() == lastTerm) {
                return s;
            }
        }
        return null;
    }

    /**
     * The listed snapshot of this index and term, or one off the list still waiting for its readers
     * (pruned, or received before and not installed), which is then listed again instead of being
     * deleted: a new copy would have its file names, and the pending deletion would remove the
     * copy's files. A received one is installed again from its own files, which passed their CRC
     * checks when they were committed and hold the same snapshot. Null if neither exists.
     */
    private SnapshotFiles.Snapshot relist(long lastIndex, int lastTerm) {
        SnapshotFiles.Snapshot s = listed(lastIndex, lastTerm);
        if (s != null) {
            return s;
        }
        for (Iterator<SnapshotFiles.Snapshot> it = unlisted.iterator(); it.hasNext(); ) {
            s = it.next();
            if (s.meta.lastIndex() == lastIndex && s.meta.lastTerm() == lastTerm) {
                it.remove();
                s.deleteWhenUnread = false;
                return addSnapshot(s);
            }
        }
        return null;
    }

    private SnapshotFiles.Snapshot addSnapshot(SnapshotFiles.Snapshot s) {
        SnapshotFiles.Snapshot listed = listed(s.meta.lastIndex(), s.meta.lastTerm());
        if (listed != null) {
            return listed;
        }
        snapshots.add(s);
        snapshots.sort((a, b) -> Long.compare(a.meta.lastIndex(), b.meta.lastIndex()));
        return s;
    }

    /**
     * Deletes the snapshots beyond {@code snapshotsToKeep}, oldest first (those being read go when
     * their readers end), and the damaged ones older than the newest listed snapshot.
     */
    private void pruneOld() {
        int excess = snapshots.size() - g.config.snapshotsToKeep();
        for (; excess > 0; excess--) {
            unlistAndDelete(snapshots.get(0));
        }
        pruneDamaged();
    }

    /**
     * Deletes the damaged snapshots found at start that are older than the newest listed one: a
     * start tries only the listed ones below the newest, so nothing would fall back to them, and
     * nothing reads them. One whose name a sound snapshot took since (written or received at the
     * same index and term, over its files) is forgotten instead: the files are that snapshot's now.
     */
    private void pruneDamaged() {
        SnapshotFiles.Snapshot newest = latest();
        if (newest == null) {
            return;
        }
        for (Iterator<SnapshotFiles.Damaged> it = damaged.iterator(); it.hasNext(); ) {
            SnapshotFiles.Damaged d = it.next();
            String name = d.baseName();
            if (hasFilesNamed(name)) {
                it.remove();
            } else if (d.lastIndex < newest.meta.lastIndex() && !busyNames.contains(name)) {
                it.remove();
                busyNames.add(name);
                g.blocking("snapshot-delete", () -> {
                    SnapshotFiles.delete(io, d);
                    return null;
                }).whenComplete((v, e) -> {
                    busyNames.remove(name);
                    if (e != null) {
                        log.warn("group {} on node {}: deleting the damaged snapshot {} in {} failed ({}); it is"
                                + " ignored, delete its files by hand", g.state.groupId, g.state.selfId, d, dir,
                                e.toString());
                    } else {
                        log.info("group {} on node {}: deleted the damaged snapshot {}: {} is newer",
                                g.state.groupId, g.state.selfId, d, newest);
                    }
                });
            }
        }
    }

    /** Whether a listed snapshot, or one waiting for its readers before its deletion, has the files of {@code name}. */
    private boolean hasFilesNamed(String name) {
        for (SnapshotFiles.Snapshot s : snapshots) {
            if (SnapshotFiles.baseName(s.meta).equals(name)) {
                return true;
            }
        }
        return awaitsDeletion(name);
    }

    /** Takes a listed snapshot off the list and deletes its files, at once or when its readers end. */
    private void unlistAndDelete(SnapshotFiles.Snapshot s) {
        snapshots.remove(s);
        if (s.readers > 0) {
            s.deleteWhenUnread = true;
            unlisted.add(s);
        } else {
            deleteLater(s);
        }
    }

    /** A reader of {@code s} (a transfer to a follower, an install) is done. */
    void release(SnapshotFiles.Snapshot s) {
        s.readers--;
        if (s.readers == 0 && s.deleteWhenUnread) {
            s.deleteWhenUnread = false;
            unlisted.remove(s);
            deleteLater(s);
        }
    }

    void acquire(SnapshotFiles.Snapshot s) {
        s.readers++;
    }

    /**
     * Whether a snapshot of this base name is off the list and waits for its readers to end
     * ({@link #unlisted}): its deletion, when it comes, removes the files of that name.
     */
    private boolean awaitsDeletion(String name) {
        for (SnapshotFiles.Snapshot s : unlisted) {
            if (SnapshotFiles.baseName(s.meta).equals(name)) {
                return true;
            }
        }
        return false;
    }

    private void deleteLater(SnapshotFiles.Snapshot s) {
        // No other operation holds the name: a listed or waiting snapshot's name is never written
        // to (a receive lists the waiting one again, see relist; a take waits, see awaitsDeletion),
        // and one being written is not listed yet.
        String name = SnapshotFiles.baseName(s.meta);
        busyNames.add(name);
        g.blocking("snapshot-delete", () -> {
            SnapshotFiles.delete(io, s);
            return null;
        }).whenComplete((v, e) -> {
            busyNames.remove(name);
            if (e != null) {
                log.warn("group {}: deleting {} failed; it is ignored and removed by hand", g.state.groupId, s, e);
            }
        });
    }

    // ---------------------------------------------------------------- receiving (follower)

    /**
     * Takes one chunk of a snapshot from the leader; on the last one, makes the file a complete
     * snapshot, has the apply manager install it, and resets the log to start after it (unless the
     * log already holds the snapshot's last entry). Returns the answer for the leader; never fails.
     */
    FiberFrame<InstallSnapshotResponse> receive(InstallSnapshotRequest req) {
        return new ReceiveFrame(req);
    }

    private final class ReceiveFrame extends FiberFrame<InstallSnapshotResponse> {
        private final InstallSnapshotRequest req;
        private SnapshotFiles.Snapshot snapshot;
        private boolean busy;
        /** Whether the listed {@link #snapshot} is being installed: a failure now means it was not. */
        private boolean installing;
        /**
         * The snapshot was listed already when it arrived (taken by this node, or received and
         * installed before): a failed install of it again does not make it bad, and it may be what
         * the log's start depends on, so it is not dropped.
         */
        private boolean wasListed;
        private boolean logReset;
        /** The base name held in {@link #busyNames} while the received file is committed, or null. */
        private String committingName;

        ReceiveFrame(InstallSnapshotRequest req) {
            this.req = req;
        }

        private InstallSnapshotResponse answer(boolean ok, long next) {
            return new InstallSnapshotResponse(g.state.currentTerm, ok, next);
        }

        private InstallSnapshotResponse refuse(String reason) {
            return new InstallSnapshotResponse(g.state.currentTerm, false, 0, reason);
        }

        @Override
        public FrameCallResult execute(Object input) {
            if (req.offset == 0) {
                LogFile old = receiving;
                receiving = null;
                Path tmp = dir.resolve(SnapshotFiles.RECEIVING);
                return g.blocking("snapshot-receive-open", () -> {
                    if (old != null) {
                        old.close();
                    }
                    java.nio.file.Files.createDirectories(dir);
                    LogFile f = io.open(tmp);
                    try {
                        f.setLength(0);
                    } catch (IOException | RuntimeException e) {
                        f.close();
                        throw e;
                    }
                    return f;
                }).await(this::afterOpen);
            }
            if (receiving == null || req.lastIndex != receivingIndex || req.lastTerm != receivingTerm
                    || req.offset != receivedBytes) {
                // Out of step (a restart of the transfer, or we restarted): start again from 0.
                return Fiber.frameReturn(refuse(receiving == null
                        ? "no transfer in progress here (this node restarted, or an earlier chunk failed); start at offset 0"
                        : "out of step: expected offset " + receivedBytes + " of snapshot " + receivingIndex + "-"
                        + receivingTerm + ", got offset " + req.offset + " of " + req.lastIndex + "-" + req.lastTerm));
            }
            return write();
        }

        private FrameCallResult afterOpen(LogFile f) {
            receiving = f;
            receivingIndex = req.lastIndex;
            receivingTerm = req.lastTerm;
            receivingLeaderTerm = req.term;
            receivedBytes = 0;
            return write();
        }

        private FrameCallResult write() {
            LogFile f = receiving;
            long at = req.offset;
            return g.blocking("snapshot-receive-write", () -> {
                f.writeFully(ByteBuffer.wrap(req.data, 0, req.dataLength), at);
                return null;
            }).await(this::afterWrite);
        }

        private FrameCallResult afterWrite(Object ignored) {
            receivedBytes += req.dataLength;
            if (!req.done) {
                return Fiber.frameReturn(answer(true, receivedBytes));
            }
            receivedFile = receiving;
            receiving = null;
            return commit(null);
        }

        /** Makes the received file a snapshot, or drops it for the same one on disk; waits while its names are busy. */
        private FrameCallResult commit(Void v) {
            LogFile f = receivedFile;
            Members config = req.config != null ? MembersCodec.fromBytes(req.config, 0, req.config.length)
                    : new Members(req.members);
            SnapshotMeta meta = MembershipManager.meta(req.lastIndex, req.lastTerm, config, req.format);
            String name = SnapshotFiles.baseName(meta);
            if (busyNames.contains(name)) {
                // this node writes the same snapshot itself, or deletes an older copy of it
                return Fiber.sleep(NAME_WAIT_MILLIS, this::commit);
            }
            wasListed = listed(req.lastIndex, req.lastTerm) != null;
            SnapshotFiles.Snapshot listed = relist(req.lastIndex, req.lastTerm);
            if (listed != null) {
                // Received a second time (the leader gave up waiting for the first answer): the files
                // on disk are this snapshot already. Renaming the copy over them would put a listed
                // snapshot's files at stake should the commit fail halfway.
                return g.blocking("snapshot-receive-drop", () -> {
                    f.close();
                    io.delete(f.path());
                    return listed;
                }).await(this::afterCommit);
            }
            busyNames.add(name);
            committingName = name;
            return g.blocking("snapshot-receive-commit", () -> SnapshotFiles.commitReceived(io, dir, meta, f))
                    .await(this::afterCommit);
        }

        private void freeName() {
            if (committingName != null) {
                busyNames.remove(committingName);
                committingName = null;
            }
        }

        private FrameCallResult afterCommit(SnapshotFiles.Snapshot received) {
            freeName();
            receivedFile = null;
            long failed = receiveFailures.endRun();
            if (failed > 0) {
                log.info("group {} on node {}: a snapshot from the leader was received in {} after {} failed attempts",
                        g.state.groupId, g.state.selfId, dir, failed);
            }
            // the same snapshot may arrive twice (the leader gave up waiting for the first answer)
            SnapshotFiles.Snapshot s = addSnapshot(received);
            snapshot = s;
            log.info("group {} on node {}: received {} from leader {}", g.state.groupId, g.state.selfId, s, req.leaderId);
            busy = true;
            g.state.logBusy = true;
            installing = true;
            return g.applyManager.requestInstall(s).await(this::afterInstall);
        }

        private FrameCallResult afterInstall(Boolean installed) {
            installing = false;
            long idx = snapshot.meta.lastIndex();
            int term = snapshot.meta.lastTerm();
            io.poyang.raft.store.LogStore store = g.store;
            boolean logHasIt = store.lastIndex() >= idx && idx >= store.firstIndex() - 1 && store.termOf(idx) == term;
            if (!installed || logHasIt) {
                return afterReset(null);
            }
            logReset = true;
            return Fiber.call(store.resetAfterSnapshot(idx, term), this::afterReset);
        }

        private FrameCallResult afterReset(Void v) {
            long idx = snapshot.meta.lastIndex();
            if (logReset) {
                // The old entries are gone from the log; so must they be from memory.
                g.tailCache.clear();
                g.followerAppender.onLogReset(idx);
                g.membership.onSnapshotReset(snapshot.meta);
            }
            g.commitManager.advanceTo(idx);
            g.publishProgress();
            pruneOld();
            return Fiber.frameReturn(answer(true, receivedBytes));
        }

        @Override
        protected FrameCallResult handle(Throwable ex) {
            if (receiveFailures.occurred(System.nanoTime())) {
                long skipped = receiveFailures.notLoggedBefore();
                log.warn("group {} on node {}: receiving a snapshot from leader {} into {} failed ({}); the leader"
                        + " sends it again later. If the disk is full, free space on it{}", g.state.groupId,
                        g.state.selfId, req.leaderId, dir, ex.toString(),
                        skipped > 0 ? " (" + skipped + " more failures since the last warning)" : "", ex);
            }
            freeName();
            if (installing && !g.state.stopping && !wasListed) {
                dropUninstalled(snapshot, ex);
            }
            LogFile f = receiving != null ? receiving : receivedFile;
            receiving = null;
            receivedFile = null;
            Path tmp = dir.resolve(SnapshotFiles.RECEIVING);
            // The partial file goes before the answer: it would hold its space until the next transfer
            // (or start), and a later delete could remove the file of the next transfer.
            FiberFuture<Object> discard = g.blocking("snapshot-receive-discard", () -> discardPartial(f, tmp));
            // an Attempt: this frame never fails, not even when the I/O executor is shut down (stopping)
            String reason = "receiving it into " + dir + " failed: " + ex;
            return Fiber.call(Attempt.of(discard, -1), a -> Fiber.frameReturn(refuse(reason)));
        }

        @Override
        protected FrameCallResult doFinally() {
            if (busy) {
                g.state.logBusy = false;
            }
            return Fiber.frameReturn();
        }
    }

    /**
     * A received snapshot was listed before it was installed, and the install failed (the state
     * machine could not read it, or refused it): it goes off the list and its files are deleted.
     * Listed, it would pass for a good snapshot: the newest one, so this node would skip taking its
     * own until it applied past its index (takeSnapshot answering with it), send it to followers as
     * their leader, count it among the {@code snapshotsToKeep} (pruning a good one for it), and load
     * it at the next start, where reading it fails again. Nothing needs it: the log is reset only
     * after an install that succeeded, so the older snapshot and the log still hold this node's
     * state, and the leader sends the snapshot again. The apply fiber read it and is done with it.
     */
    private void dropUninstalled(SnapshotFiles.Snapshot s, Throwable why) {
        if (!snapshots.contains(s)) {
            return;
        }
        log.warn("group {} on node {}: {} from the leader was not installed ({}); it is deleted, and the leader"
                + " sends it again", g.state.groupId, g.state.selfId, s, why.toString());
        unlistAndDelete(s);
    }

    /** Closes (when open) and deletes a partly received snapshot; I/O thread, never fails. */
    private Object discardPartial(LogFile f, Path tmp) {
        try {
            if (f != null) {
                f.close();
            }
            io.delete(tmp);
        } catch (IOException | RuntimeException e) {
            log.debug("removing the partly received snapshot {} failed", tmp, e);
        }
        return null;
    }

    /**
     * Whether a transfer that a leader of a term before {@code term} started is still open. That
     * leader is gone: the leader of {@code term} catches this node up by log, or starts its own
     * transfer at offset 0. Follower appender fiber.
     */
    boolean hasTransferOlderThan(int term) {
        return receiving != null && receivingLeaderTerm < term;
    }

    /**
     * Closes and deletes the partly received file of a transfer whose leader is gone (see
     * {@link #hasTransferOlderThan}). Without this the file would hold its handle and its space until
     * the next transfer or the group's stop. The follower appender awaits it before its next request,
     * so that a new transfer's first chunk cannot open the file while this deletes it. Never fails.
     */
    Attempt<Object> abandonTransfer(int term) {
        LogFile f = receiving;
        receiving = null;
        log.info("group {} on node {}: dropped the partly received snapshot {}-{} ({} bytes) of the leader of term {};"
                        + " the leader of term {} goes on", g.state.groupId, g.state.selfId, receivingIndex, receivingTerm,
                receivedBytes, receivingLeaderTerm, term);
        Path tmp = dir.resolve(SnapshotFiles.RECEIVING);
        return Attempt.of(g.blocking("snapshot-receive-abandon", () -> discardPartial(f, tmp)), -1);
    }

    /** Closes a transfer in progress (the group stops). */
    void close() {
        for (LogFile f : new LogFile[]{receiving, receivedFile}) {
            if (f != null) {
                try {
                    f.close();
                } catch (IOException e) {
                    log.debug("closing a received snapshot file failed", e);
                }
            }
        }
        receiving = null;
        receivedFile = null;
    }
}
