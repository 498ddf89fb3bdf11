package io.poyang.raft.store;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the fsyncs in flight on one disk across the logs that share it (the raft groups of one
 * server). Each log still keeps one fsync in flight and starts the next as soon as the previous
 * returns — nothing is timed — but when several logs are busy they take turns on the disk, so each
 * fsync covers more writes instead of the node issuing one fsync per busy log: with many groups the
 * disk and the kernel do the same work per second as with one (fewer flush requests, fewer thread
 * switches), and throughput does not fall as groups are added.
 *
 * <p>A permit is held from the start of an fsync until it returns; it is released on the I/O thread
 * (so a stopped dispatcher cannot keep it). When a permit comes back the longest-waiting log is woken
 * to try again; a log that no longer needs it (or whose group is stopping) passes the wake on.
 * Thread-safe; one instance per disk, passed to every {@link LogStoreConfig} of it.
 */
public final class FsyncGate {

    private final int permits;
    private final AtomicInteger available;
    private final ConcurrentLinkedQueue<FsyncScheduler> waiting = new ConcurrentLinkedQueue<>();

    /** @param permits fsyncs allowed in flight at once on the disk (1 for one disk is usually best) */
    public FsyncGate(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("an fsync gate needs at least one permit: " + permits);
        }
        this.permits = permits;
        this.available = new AtomicInteger(permits);
    }

    public int permits() {
        return permits;
    }

    /** Takes a permit, or queues {@code s} to be woken ({@link FsyncScheduler#gateOpened()}) when one is free. */
    boolean tryAcquire(FsyncScheduler s) {
        if (acquire()) {
            return true;
        }
        waiting.add(s);
        // A permit released between the failed attempt and the queueing would wake nobody: look again.
        if (acquire()) {
            waiting.remove(s);
            return true;
        }
        return false;
    }

    private boolean acquire() {
        int a;
        while ((a = available.get()) > 0) {
            if (available.compareAndSet(a, a - 1)) {
                return true;
            }
        }
        return false;
    }

    /** Gives a permit back and wakes the longest-waiting log. Any thread. */
    void release() {
        available.incrementAndGet();
        wakeOne();
    }

    /** A woken log did not take the free permit: wake the next one. Any thread. */
    void passOn() {
        if (available.get() > 0) {
            wakeOne();
        }
    }

    private void wakeOne() {
        FsyncScheduler s;
        while ((s = waiting.poll()) != null) {
            if (s.gateOpened()) {
                return;
            }
            // its group is shutting down: the next one
        }
    }

    /** Permits free now (for tests). */
    int available() {
        return available.get();
    }

    /** Logs waiting for a permit (for tests). */
    int waitingCount() {
        return waiting.size();
    }
}
