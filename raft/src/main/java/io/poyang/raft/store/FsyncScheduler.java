package io.poyang.raft.store;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * <p><b>Chained on the I/O thread</b> (without a gate): the next fsync does not wait for the
 * dispatcher to hear that the previous one returned and to hand a new one to the executor (two
 * thread hand-offs, each a wake-up that waits for a free core on a busy machine, per fsync). While
 * an fsync runs, the dispatcher publishes the next one as an {@link FsyncRequest} (the segments
 * written since, and the index that write prefix reaches) in {@link #next}; the I/O thread takes it
 * as soon as its fsync returns and goes on, so fsyncs follow each other back to back on one thread.
 * A request not yet taken is widened in place by later write completions (one request per fsync,
 * never a queue of them). Each request's own future reports its completion to the dispatcher, which
 * advances the synced index. {@link #chainRunning} hands the role of running the chain between the
 * dispatcher (which starts a chain when none runs) and the I/O thread (which ends it when nothing
 * is published), so a published request is always taken by exactly one runner.
 *
 * <p>An fsync failure is not retried: on Linux the kernel may have dropped the dirty pages it
 * failed to write and cleared the error, so a second fsync could "succeed" without the data. The
 * store is marked failed instead. Dispatcher thread, except {@link #run()} and {@link #runChain}.
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

    /** The chain (no gate): the next fsync, published by the dispatcher, taken by the I/O thread. */
    private final AtomicReference<FsyncRequest> next = new AtomicReference<>();
    /** True while some thread runs the chain (or is about to): only that thread takes from {@link #next}. */
    private final AtomicBoolean chainRunning = new AtomicBoolean();
    /** Chain requests published or running and not yet reported back. Dispatcher thread. */
    private int chainOutstanding;

    FsyncScheduler(LogStore store) {
        this.store = store;
        this.gate = store.config().fsyncGate();
    }

    void init(long syncedIndex) {
        this.syncedIndex = syncedIndex;
    }

    boolean isRunning() {
        return running || chainOutstanding > 0;
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
        if (gate == null) {
            kickChain();
            return;
        }
        if (running || dirty.isEmpty() || store.isFailed() || waitingForGate) {
            return;
        }
        if (!gate.tryAcquire(this)) {
            waitingForGate = true;
            return;
        }
        running = true;
        coveredIndex = store.appender().writtenIndex();
        syncing.clear();
        for (LogSegment s : dirty) {
            s.dirty = false;
            s.ioPending++;
            syncing.add(s);
        }
        dirty.clear();
        future = store.group().newFuture("log-fsync");
        future.whenComplete(this);
        store.logIoStarting();
        try {
            store.ioExecutor().execute(this);
        } catch (RuntimeException e) {
            store.logIoEnded();
            if (gate != null) {
                gate.release();
            }
            future.completeExceptionally(e);
        }
    }

    /**
     * Publishes an fsync of everything written so far that no fsync started before covers: widens
     * the request not yet taken, or publishes a new one; starts a chain on the I/O executor when
     * none runs. Dispatcher thread.
     */
    private void kickChain() {
        if (dirty.isEmpty() || store.isFailed()) {
            return;
        }
        FsyncRequest r = next.getAndSet(null);
        if (r == null) {
            r = new FsyncRequest(store.group().newFuture("log-fsync"));
            r.future.whenComplete(r);
            chainOutstanding++;
        }
        // r is ours alone now (taken back from, or not yet put in, next): no runner can see it
        for (int i = 0, n = dirty.size(); i < n; i++) {
            LogSegment s = dirty.get(i);
            s.dirty = false;
            if (!r.segments.contains(s)) {
                s.ioPending++;
                r.segments.add(s);
            }
        }
        dirty.clear();
        r.coveredIndex = store.appender().writtenIndex();
        next.set(r);
        if (chainRunning.compareAndSet(false, true)) {
            FsyncRequest first = next.getAndSet(null);
            if (first == null) {
                chainRunning.set(false);   // cannot happen: only the holder of chainRunning takes
                return;
            }
            // the whole chain is one log I/O task: it ends when runChain returns
            store.logIoStarting();
            try {
                store.ioExecutor().execute(() -> runChain(first));
            } catch (RuntimeException e) {
                store.logIoEnded();
                chainRunning.set(false);
                first.future.completeExceptionally(e);
            }
        }
    }

    /** I/O thread: the chain is one log I/O task to a failed store's close, from its first fsync to its last. */
    private void runChain(FsyncRequest first) {
        try {
            runChainRequests(first);
        } finally {
            store.logIoEnded();
        }
    }

    /**
     * I/O thread: fsyncs the request, reports it, and goes on with the next one published meanwhile,
     * until none is; then gives the chain back. Stops at the first failure (the store fails).
     */
    private void runChainRequests(FsyncRequest first) {
        FsyncRequest r = first;
        while (r != null) {
            try {
                long start = System.nanoTime();
                for (int i = 0; i < r.segments.size(); i++) {
                    r.segments.get(i).file.force(false);
                }
                // published to the dispatcher by the future's completion below
                r.fsyncNanos = System.nanoTime() - start;
            } catch (Throwable e) {
                // the failure reaches the dispatcher before any chain started after this one can report
                // a success there (one that would cover what this fsync lost); a request published
                // meanwhile is left in next, for the dispatcher to drop when it hears (dropPublished)
                r.future.fireCompleteExceptionally(e);
                chainRunning.set(false);
                return;
            }
            r.future.fireComplete(null);
            r = next.getAndSet(null);
            if (r == null) {
                chainRunning.set(false);
                // published between our look and giving the chain back: the dispatcher saw it running
                if (next.get() != null && chainRunning.compareAndSet(false, true)) {
                    r = next.getAndSet(null);
                    if (r == null) {
                        chainRunning.set(false);
                    }
                }
            }
        }
    }

    /** A chained fsync returned. Dispatcher thread. */
    private void chainDone(FsyncRequest r, Throwable error) {
        chainOutstanding--;
        for (int i = 0; i < r.segments.size(); i++) {
            r.segments.get(i).ioPending--;
        }
        if (error != null) {
            store.onFsyncFailed(syncedIndex);
            store.fail(new LogStoreFailedException(store.name() + ": fsync of " + r.segments + " in "
                    + store.config().dir().resolve("log") + " failed (" + error + "); writes up to index " + r.coveredIndex
                    + " may be lost. The store refuses further appends: check the disk (space, kernel log), then "
                    + store.afterFsyncFailure(syncedIndex), error));
            dropPublished();
            return;
        }
        if (store.isFailed()) {
            // an earlier fsync failed: the pages it covered may be gone, and a later fsync that
            // returned well does not bring them back, so nothing more is reported persisted
            store.checkIdle();
            return;
        }
        fsyncCount++;
        latency.record(r.fsyncNanos);
        if (r.coveredIndex > syncedIndex) {
            syncedIndex = r.coveredIndex;
            store.onSynced(r.coveredIndex);
        }
        kick();
        store.checkIdle();
    }

    /**
     * A chained fsync failed: the request published while it ran is taken back and dropped. The
     * runner gave the chain up without taking it, and a failed store publishes nothing more, so
     * nothing else would ever take it; left there, its segments kept an fsync due for good (a
     * deletion waiting for their I/O to end waited forever) and {@link #isRunning()} stayed true.
     * Syncing it is no use: nothing is reported persisted after a failed fsync. A request a chain
     * the dispatcher started before it heard of the failure took is that chain's to report. Its
     * future is never completed; nothing waits on it but its own callback. Dispatcher thread.
     */
    private void dropPublished() {
        FsyncRequest r = next.getAndSet(null);
        if (r == null) {
            return;
        }
        chainOutstanding--;
        for (int i = 0; i < r.segments.size(); i++) {
            r.segments.get(i).ioPending--;
        }
        store.checkIdle();
    }

    /**
     * One fsync of the chain: the segments to sync and the write prefix they complete. It is its
     * future's callback (a failed future passes no value, so the callback must know its request).
     */
    private final class FsyncRequest implements BiConsumer<Void, Throwable> {
        final FiberFuture<Void> future;
        final List<LogSegment> segments = new ArrayList<>(2);
        long coveredIndex;
        /** How long the fsync took: written on the I/O thread before the completion, read on the dispatcher after. */
        long fsyncNanos;

        FsyncRequest(FiberFuture<Void> future) {
            this.future = future;
        }

        @Override
        public void accept(Void ignored, Throwable error) {
            chainDone(this, error);
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
            store.logIoEnded();
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
        for (int i = 0; i < syncing.size(); i++) {
            syncing.get(i).ioPending--;
        }
        if (error != null) {
            store.onFsyncFailed(syncedIndex);
            store.fail(new LogStoreFailedException(store.name() + ": fsync of " + syncing + " in "
                    + store.config().dir().resolve("log") + " failed (" + error + "); writes up to index " + coveredIndex
                    + " may be lost. The store refuses further appends: check the disk (space, kernel log), then "
                    + store.afterFsyncFailure(syncedIndex), error));
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
