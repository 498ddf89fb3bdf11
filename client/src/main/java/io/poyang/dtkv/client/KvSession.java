package io.poyang.dtkv.client;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client's side of exactly-once writes for one group: every write gets the next seq, and
 * {@code ackedBelow} — the lowest seq still waiting for its final outcome — tells the server which
 * recorded answers it may forget. Lock-free: seqs come from one atomic counter, outcomes mark a
 * ring slot, and whoever completes the lowest outstanding seq moves {@code ackedBelow} past every
 * completed one (the slot is cleared by the thread that wins it, so each advance happens once).
 */
final class KvSession {

    /** At most this many writes of a session outstanding; below the server's window (65,536). */
    static final int WINDOW = 32_768;
    private static final int MASK = WINDOW - 1;

    private final AtomicLong nextSeq = new AtomicLong(1);
    private final AtomicIntegerArray done = new AtomicIntegerArray(WINDOW);
    private volatile long ackedBelow = 1;

    /** The next seq, or 0 when {@link #WINDOW} writes are outstanding (the caller fails the write). */
    long next() {
        while (true) {
            long s = nextSeq.get();
            if (s - ackedBelow >= WINDOW) {
                return 0;
            }
            if (nextSeq.compareAndSet(s, s + 1)) {
                return s;
            }
        }
    }

    long ackedBelow() {
        return ackedBelow;
    }

    /** {@code seq} has its final outcome (answered, failed, or given up): it will not be sent again. */
    void complete(long seq) {
        done.set((int) (seq & MASK), 1);
        while (true) {
            long low = ackedBelow;
            if (low >= nextSeq.get() || !done.compareAndSet((int) (low & MASK), 1, 0)) {
                return;
            }
            ackedBelow = low + 1;
        }
    }
}
