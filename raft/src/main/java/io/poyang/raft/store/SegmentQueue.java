package io.poyang.raft.store;

import io.poyang.fiber.FiberFuture;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The segments of one log in position order: the live ones (holding items, the last being the one
 * appended to) and the spare ones, preallocated ahead so that rolling to a new segment never waits
 * for a file to be created. As soon as the spare is taken, the next one is prepared on the I/O
 * executor. Dispatcher thread only.
 */
final class SegmentQueue {

    private static final PoyangLog log = PoyangLogs.get(SegmentQueue.class);
    private static final int ZERO_CHUNK_BYTES = 1 << 20;

    private final LogStore store;
    private final Path logDir;
    private final long segmentBytes;
    private final boolean zeroFill;
    private final List<LogSegment> live = new ArrayList<>();
    private final ArrayDeque<LogSegment> spares = new ArrayDeque<>();
    /** A preallocation runs, or a retry of a failed one is scheduled: no other may start meanwhile. */
    private boolean allocating;
    /** The preallocation task running now, or null (none, or its outcome was handled). */
    private Allocation inFlight;
    private int allocationFailures;
    private final WarningThrottle allocationWarnings = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));
    /** Appends wait for the spare being prepared (the current segment is full). */
    private boolean appendsWaiting;
    /** Runs when a spare becomes ready (the appender may be waiting for one). */
    private Runnable onSpareReady;
    /**
     * Closed files of segments that compaction freed, still under their old names (below the log's
     * first index, so a start before they are reused deletes them), waiting to become spares. Added
     * to and taken from on I/O threads.
     */
    private final ConcurrentLinkedQueue<Path> recycled = new ConcurrentLinkedQueue<>();
    /** Files in {@link #recycled}, bounded by {@link LogStoreConfig#recycledSegments()}. */
    private final AtomicInteger recycledCount = new AtomicInteger();
    /**
     * Set by the close's {@link #deleteRecycledBlocking}: from then on no file is kept (a segment
     * whose reader leaves after the close would otherwise wait in {@link #recycled} for good, on
     * disk until the next start). Any thread.
     */
    private volatile boolean recyclingClosed;

    SegmentQueue(LogStore store, Path logDir, long segmentBytes, boolean zeroFill) {
        this.store = store;
        this.logDir = logDir;
        this.segmentBytes = segmentBytes;
        this.zeroFill = zeroFill;
    }

    void setOnSpareReady(Runnable r) {
        this.onSpareReady = r;
    }

    /** Used by recovery: the segments found on disk, split into live and spare. */
    void init(List<LogSegment> liveSegments, List<LogSegment> spareSegments) {
        live.clear();
        live.addAll(liveSegments);
        spares.clear();
        spares.addAll(spareSegments);
    }

    List<LogSegment> live() {
        return live;
    }

    LogSegment current() {
        return live.isEmpty() ? null : live.get(live.size() - 1);
    }

    LogSegment first() {
        return live.isEmpty() ? null : live.get(0);
    }

    /** The live segment holding {@code pos}, or null. */
    LogSegment find(long pos) {
        int lo = 0;
        int hi = live.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            LogSegment s = live.get(mid);
            if (pos < s.startPos) {
                hi = mid - 1;
            } else if (pos >= s.endPos()) {
                lo = mid + 1;
            } else {
                return s;
            }
        }
        return null;
    }

    /** The live segment after {@code s}, or null. */
    LogSegment next(LogSegment s) {
        int i = live.indexOf(s);
        return i >= 0 && i + 1 < live.size() ? live.get(i + 1) : null;
    }

    boolean hasSpare() {
        return !spares.isEmpty();
    }

    /** Makes the first spare the current segment and prepares the next spare. */
    LogSegment roll() {
        LogSegment s = spares.poll();
        if (s == null) {
            throw new IllegalStateException("no spare segment to roll to");
        }
        live.add(s);
        appendsWaiting = false;
        prepareSpare();
        return s;
    }

    /**
     * The appender found the current segment full and waits for a spare: prepares one unless it is
     * on its way. From now on a preallocation that keeps failing fails the store (see below).
     */
    void needSpare() {
        appendsWaiting = true;
        prepareSpare();
    }

    /** Starts preallocating a spare unless one is ready or on its way (also while a retry waits out its back-off). */
    void prepareSpare() {
        if (allocating || !spares.isEmpty() || store.isClosed() || store.isFailed()) {
            return;
        }
        allocating = true;
        LogSegment last = current();
        long start = last == null ? 0 : last.endPos();
        Allocation a = new Allocation();
        inFlight = a;
        FiberFuture<LogSegment> f = store.group().newFuture("segment-alloc");
        try {
            store.ioExecutor().execute(() -> a.run(start, f));
        } catch (RuntimeException e) {
            f.fireCompleteExceptionally(e);   // refused: the pool is shut down
        }
        f.whenComplete((segment, error) -> {
            if (inFlight == a) {
                inFlight = null;
            }
            if (error != null) {
                if (store.isClosed()) {
                    // failed before the close, answered after it: nothing to retry or report for a
                    // closed store (its file, if any, was closed by the task)
                    allocating = false;
                    return;
                }
                onAllocationFailed(start, error);
                return;
            }
            allocating = false;
            allocationFailures = 0;
            appendsWaiting = false;
            if (allocationWarnings.inRun()) {
                log.info("{}: preallocating log segments works again after {} failed attempts", store.name(),
                        allocationWarnings.endRun());
            }
            if (store.isClosed()) {
                return;   // the store's close took the file from the hand-over and closed it
            }
            if (current() != null && current().endPos() != segment.startPos) {
                closeQuietly(segment);  // the log moved on meanwhile; the file stays as a spare on disk
                return;
            }
            spares.add(segment);
            if (onSpareReady != null) {
                onSpareReady.run();
            }
        });
    }

    /**
     * A preallocation failed (typically ENOSPC). While nothing waits for the spare it is retried with
     * back-off for as long as it takes (the disk may get space back). Once appends wait for it, the
     * store gives up after the write retry limit, as for a failing write: a log that can take no
     * more items must fail its group (a leader then steps down) rather than leave writers hanging
     * and make a close wait forever.
     */
    private void onAllocationFailed(long start, Throwable error) {
        allocationFailures++;
        int limit = store.config().writeRetryLimit();
        Path file = logDir.resolve(LogSegment.fileName(start));
        if (appendsWaiting && allocationFailures > limit) {
            allocating = false;
            store.fail(new LogStoreFailedException(store.name() + ": creating the log segment " + file + " ("
                    + store.config().segmentBytes() + " bytes) failed " + allocationFailures + " times and appends"
                    + " wait for it; giving up. Free space on the disk of " + logDir + " (or fix the I/O error: "
                    + error + ") and restart the group or its node", error));
            return;
        }
        long delay = store.backoffMillis(allocationFailures);
        // while nothing waits for the spare this retries as long as the disk stays full: warn at
        // once, then every 10 s with a count, not at every attempt (one a second per group)
        if (allocationWarnings.occurred(System.nanoTime())) {
            log.warn("{}: preallocating the log segment {} failed (attempt {}{}{}); retrying in {} ms: {}",
                    store.name(), file, allocationFailures,
                    appendsWaiting ? " of " + (limit + 1) + ", appends wait for it" : "",
                    allocationWarnings.isFirstOfRun() ? "" : "; " + (allocationWarnings.notLoggedBefore() + 1)
                            + " failed attempts since the last warning", delay, error.toString());
        }
        // 'allocating' stays set until the retry runs: appends arriving meanwhile must not start
        // allocations of their own (each failure would start yet another retry loop)
        store.runLater(delay, () -> {
            allocating = false;
            prepareSpare();
        });
    }

    /**
     * One preallocation and who owns its file: the task while it runs, then whoever the hand-over
     * decides. The task's completion reaches the dispatcher only if it still runs: a group removed
     * or a node stopped meanwhile drops it, and the file would stay open for good. So the store's
     * close ({@link #takeAllForClose}) abandons the task, which then closes the file itself, or, if
     * the task handed the file over first, closes it with the others. Atomic, as the task runs on a
     * log I/O thread and the close on the dispatcher.
     */
    private final class Allocation {
        private static final int RUNNING = 0;
        private static final int HANDED_OVER = 1;
        private static final int ABANDONED = 2;
        private final java.util.concurrent.atomic.AtomicInteger owner = new java.util.concurrent.atomic.AtomicInteger();
        /** Set by the task before it hands over. */
        private volatile LogSegment segment;

        /**
         * The task: completes {@code done} with the new segment or the error, or not at all when the
         * store closed meanwhile (nothing waits then, and the dispatcher may have stopped): it
         * closes the file instead, which stays on disk as a spare for the next start.
         */
        void run(long startPos, FiberFuture<LogSegment> done) {
            LogSegment s;
            try {
                s = allocateBlocking(startPos);
            } catch (Throwable e) {
                if (owner.get() != ABANDONED) {
                    done.fireCompleteExceptionally(e);
                }
                return;
            }
            segment = s;
            if (owner.compareAndSet(RUNNING, HANDED_OVER)) {
                done.fireComplete(s);
            } else {
                closeQuietly(s);
            }
        }

        /** Dispatcher thread, at the close: the segment the close must close, or null (the task will, or made none). */
        LogSegment abandon() {
            return owner.compareAndSet(RUNNING, ABANDONED) ? null : segment;
        }
    }

    /**
     * A segment's file that compaction freed, closed: kept to become a spare when it has the
     * configured size, fewer than {@link LogStoreConfig#recycledSegments()} wait and the close has
     * not deleted the kept files yet; else the caller deletes it (false). Any thread.
     */
    boolean offerRecycled(Path file, long sizeBytes) {
        if (sizeBytes != segmentBytes || recyclingClosed) {
            return false;
        }
        int max = store.config().recycledSegments();
        for (int n = recycledCount.get(); n < max; n = recycledCount.get()) {
            if (recycledCount.compareAndSet(n, n + 1)) {
                recycled.add(file);
                // The close may have drained the queue between the check above and the add: then
                // the file is taken back and the caller deletes it (if it is gone already, the
                // close's drain took it and deleted it).
                if (recyclingClosed && recycled.remove(file)) {
                    recycledCount.decrementAndGet();
                    return false;
                }
                return true;
            }
        }
        return false;
    }

    /**
     * At the close: deletes the files waiting to be recycled (left under their old names, a start
     * without the status file would take them for segments of the log), and keeps none from now on
     * (see {@link #offerRecycled}). I/O thread.
     */
    void deleteRecycledBlocking() throws IOException {
        recyclingClosed = true;
        boolean any = false;
        IOException first = null;
        for (Path p; (p = recycled.poll()) != null; ) {
            recycledCount.decrementAndGet();
            any = true;
            try {
                store.fileIo().delete(p);
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (any) {
            store.fileIo().syncDirectory(logDir);
        }
        if (first != null) {
            throw first;
        }
    }

    /** Files waiting to be recycled (for tests). */
    int recycledWaiting() {
        return recycledCount.get();
    }

    /**
     * Renames a file kept for recycling to {@code p}, the next segment's name. False when none waits
     * or the rename failed (the file is then deleted, or left for the next start to delete: its old
     * name lies below the first index). I/O thread.
     */
    private boolean takeRecycled(Path p) {
        Path old = recycled.poll();
        if (old == null) {
            return false;
        }
        recycledCount.decrementAndGet();
        try {
            store.fileIo().atomicMove(old, p);
            return true;
        } catch (IOException e) {
            log.warn("{}: recycling the log segment file {} as {} failed ({}); making a new one instead",
                    store.name(), old, p, e.toString());
            try {
                store.fileIo().delete(old);
            } catch (IOException ignored) {
                // below the first index: the next start deletes it
            }
            return false;
        }
    }

    /**
     * Makes the segment at {@code startPos}, synced with its directory: from a file kept for
     * recycling when one waits (its first header zeroed, so a spare never written is a clean end to
     * recovery and none of its old items is read as the segment's first), else a new file (sparse,
     * or zero-filled with {@code zeroFill}). A recycled file left under its new name by a failure
     * here is opened again by the retry, which zeroes its first header as for any file it finds
     * there, or a start zeroes it, as for any spare.
     */
    private LogSegment allocateBlocking(long startPos) throws IOException {
        Path p = logDir.resolve(LogSegment.fileName(startPos));
        boolean recycledFile = takeRecycled(p);
        LogFile f = store.fileIo().open(p);
        try {
            if (recycledFile) {
                if (f.size() != segmentBytes) {
                    f.setLength(segmentBytes);
                }
                f.writeFully(ByteBuffer.allocate(LogItemCodec.HEADER_BYTES), 0);
            } else if (zeroFill) {
                ByteBuffer zeros = ByteBuffer.allocateDirect(ZERO_CHUNK_BYTES);
                for (long pos = 0; pos < segmentBytes; pos += ZERO_CHUNK_BYTES) {
                    zeros.clear();
                    zeros.limit((int) Math.min(ZERO_CHUNK_BYTES, segmentBytes - pos));
                    f.writeFully(zeros, pos);
                }
            } else {
                if (f.size() > 0) {
                    // A file already under this name: typically a recycled one renamed here by an
                    // attempt that failed before it zeroed the old first header. A spare's first
                    // header must be zero, or a start whose scan moves on into the spare (the segment
                    // before it full) reads the old item there as a torn tail.
                    f.writeFully(ByteBuffer.allocate(LogItemCodec.HEADER_BYTES), 0);
                }
                f.setLength(segmentBytes);
            }
            f.force(true);
            store.fileIo().syncDirectory(logDir);
        } catch (IOException | RuntimeException e) {
            try {
                f.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new LogSegment(startPos, segmentBytes, f);
    }

    /** After a truncation to {@code pos}: live segments after the one holding it become spares again. */
    void truncateAfter(LogSegment keep) {
        int i = live.indexOf(keep);
        List<LogSegment> back = new ArrayList<>(live.subList(i + 1, live.size()));
        live.subList(i + 1, live.size()).clear();
        for (int k = back.size() - 1; k >= 0; k--) {
            LogSegment s = back.get(k);
            s.firstIndex = -1;
            s.dirty = false;
            spares.addFirst(s);
        }
    }

    /** Removes and returns the live segments before {@code keepFrom}. */
    List<LogSegment> removeBefore(LogSegment keepFrom) {
        int i = live.indexOf(keepFrom);
        List<LogSegment> removed = new ArrayList<>(live.subList(0, i));
        live.subList(0, i).clear();
        return removed;
    }

    /**
     * For the store's close: every open segment, live and spare, and the one a preallocation in
     * flight just made (its completion may never be delivered); a preallocation still running is
     * abandoned and closes its file itself. Dispatcher thread, once the store is marked closed.
     */
    List<LogSegment> takeAllForClose() {
        List<LogSegment> all = new ArrayList<>(live);
        all.addAll(spares);
        Allocation a = inFlight;
        inFlight = null;
        if (a != null) {
            LogSegment made = a.abandon();
            if (made != null) {
                all.add(made);
            }
        }
        return all;
    }

    static void closeQuietly(LogSegment s) {
        try {
            s.file.close();
        } catch (IOException e) {
            log.warn("closing {} failed", s, e);
        }
    }
}
