package io.poyang.raft.store;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Keeps exactly one fsync in flight while there is anything to sync: when one returns, the next
 * starts at once and covers every write that completed (in order) since the previous one started.
 * Under load an fsync therefore covers many batches, and the number of items per fsync grows by
 * itself; under light load an item is synced alone, with no added delay. Nothing is timed.
 *
 * <p>With an {@link FsyncGate} (shared by the logs on one disk) an fsync also needs one of the
 * gate's permits; a log that finds none waits, collecting more writes, until one comes back.
 *
 * <p>An fsync failure is not retried: on Linux the kernel may have dropped the dirty pages it
 * failed to write and cleared the error, so a second fsync could "succeed" without the data. The
 * store is marked failed instead. Dispatcher thread, except {@link #run()}.
 */
final class FsyncScheduler implements Runnable, BiConsumer<Void, Throwable> {

    private final LogStore store;
    /** Segments written since the last fsync started. */
    private final List<LogSegment> dirty = new ArrayList<>();
    /** Segments the running fsync covers; reused, so nothing is allocated per fsync. */
    private final List<LogSegment> syncing = new ArrayList<>();
    private boolean running;
    private long coveredIndex;
    private long syncedIndex;
    private long fsyncCount;
    /** Duration of the fsync just run: written on the I/O thread, read on the dispatcher after its completion. */
    private long lastFsyncNanos;
    /** fsync durations; written on the dispatcher only, read racily for metrics. */
    final io.poyang.common.DurationHistogram latency = new io.poyang.common.DurationHistogram();
    private FiberFuture<Void> future;
    private final FsyncGate gate;
    /** Queued at the gate; {@link #gateOpened} wakes it. */
    private boolean waitingForGate;

    FsyncScheduler(LogStore store) {
        this.store = store;
        this.gate = store.config().fsyncGate();
    }

    void init(long syncedIndex) {
        this.syncedIndex = syncedIndex;
    }

    boolean isRunning() {
        return running;
    }

    boolean hasDirty() {
        return !dirty.isEmpty();
    }

    long fsyncCount() {
        return fsyncCount;
    }

    long syncedIndex() {
        return syncedIndex;
    }

    /** A write joined the completed prefix. */
    void markDirty(LogSegment s) {
        if (!s.dirty) {
            s.dirty = true;
            dirty.add(s);
        }
    }

    /** Starts an fsync unless one runs, nothing is dirty, or the gate has no permit free. */
    void kick() {
        if (running || dirty.isEmpty() || store.isFailed() || waitingForGate) {
            return;
        }
        if (gate != null && !gate.tryAcquire(this)) {
            waitingForGate = true;
            return;
        }
        running = true;
        coveredIndex = store.appender().writtenIndex();
        syncing.clear();
        for (LogSegment s : dirty) {
            s.dirty = false;
            syncing.add(s);
        }
        dirty.clear();
        future = store.group().newFuture("log-fsync");
        future.whenComplete(this);
        try {
            store.ioExecutor().execute(this);
        } catch (RuntimeException e) {
            if (gate != null) {
                gate.release();
            }
            future.completeExceptionally(e);
        }
    }

    /**
     * A gate permit came back (any thread): try again on the dispatcher. False when the group no
     * longer runs fibers, so the gate wakes another log.
     */
    boolean gateOpened() {
        return store.group().fireFiber(store.name() + "-fsync-gate", new GateRetry());
    }

    private final class GateRetry extends FiberFrame<Void> {
        @Override
        public FrameCallResult execute(Object input) {
            waitingForGate = false;
            kick();
            if (!running && !waitingForGate) {
                // nothing to sync any more (or the store failed): the permit is for someone else
                gate.passOn();
                store.checkIdle();
            }
            return Fiber.frameReturn();
        }
    }

    /** I/O thread: fdatasync each segment (the files are preallocated, so their size never changes). */
    @Override
    public void run() {
        Throwable failure = null;
        long start = System.nanoTime();
        try {
            for (int i = 0; i < syncing.size(); i++) {
                syncing.get(i).file.force(false);
            }
            lastFsyncNanos = System.nanoTime() - start;
        } catch (Throwable e) {
            failure = e;
        } finally {
            if (gate != null) {
                gate.release();
            }
        }
        if (failure != null) {
            future.fireCompleteExceptionally(failure);
        } else {
            future.fireComplete(null);
        }
    }

    /** Dispatcher thread. */
    @Override
    public void accept(Void ignored, Throwable error) {
        running = false;
        if (error != null) {
            store.fail(new LogStoreFailedException(store.name() + ": fsync of " + syncing
                    + " failed; writes up to index " + coveredIndex + " may be lost. The store refuses further"
                    + " appends: restart the node (recovery keeps what is really on disk) after checking the disk", error));
            return;
        }
        fsyncCount++;
        latency.record(lastFsyncNanos);
        if (coveredIndex > syncedIndex) {
            syncedIndex = coveredIndex;
            store.onSynced(coveredIndex);
        }
        kick();
        store.checkIdle();
    }
}
