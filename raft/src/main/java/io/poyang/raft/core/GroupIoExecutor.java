package io.poyang.raft.core;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's shared log I/O pool as one group uses it: every file operation of the group (log
 * writes, fsyncs, index flushes, status saves, snapshot files) goes through here, and this counts
 * those still queued or running. A group's fibers can end while such a task still runs (a failed
 * store's close waits for its writes in flight only so long, a segment being preallocated finishes
 * on its own); {@link #whenIdle()} tells when the last one ended, so a group restarted or added again
 * on the same directory never meets its predecessor's writes.
 *
 * <p>The pool belongs to the server: shutting it down through this view is refused.
 */
final class GroupIoExecutor extends AbstractExecutorService {

    private final ExecutorService pool;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Set once by {@link #whenIdle()}; completed by whoever sees the count at 0 after that. */
    private volatile CompletableFuture<Void> idle;

    GroupIoExecutor(ExecutorService pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        inFlight.incrementAndGet();
        try {
            pool.execute(() -> {
                try {
                    task.run();
                } finally {
                    ended();
                }
            });
        } catch (RuntimeException | Error e) {
            ended();   // refused (the pool is shut down): it will never run
            throw e;
        }
    }

    private void ended() {
        if (inFlight.decrementAndGet() == 0) {
            CompletableFuture<Void> f = idle;
            if (f != null) {
                f.complete(null);
            }
        }
    }

    /** Tasks queued or running now. */
    int inFlight() {
        return inFlight.get();
    }

    /**
     * Completes once no task of this group is queued or running. Call it when the group submits no
     * more (its fibers ended): a task still running may queue a follow-up, which is counted before
     * its parent ends, so the count cannot touch 0 while work remains.
     */
    CompletableFuture<Void> whenIdle() {
        CompletableFuture<Void> f = idle;
        if (f == null) {
            synchronized (this) {
                f = idle;
                if (f == null) {
                    f = new CompletableFuture<>();
                    idle = f;
                }
            }
        }
        if (inFlight.get() == 0) {
            f.complete(null);
        }
        return f;
    }

    @Override
    public void shutdown() {
        throw new UnsupportedOperationException("the log I/O pool belongs to the raft server, not to one group");
    }

    @Override
    public List<Runnable> shutdownNow() {
        throw new UnsupportedOperationException("the log I/O pool belongs to the raft server, not to one group");
    }

    @Override
    public boolean isShutdown() {
        return pool.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return pool.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return pool.awaitTermination(timeout, unit);
    }
}
