package io.poyang.benchmark.chaos;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The two ends of a chaos run: when the clients stop ({@code clientsEndNanos}, shared with them)
 * and until when faults may start. Both move later so that the first round of faults (each kind
 * once) completes; only the clients' end moves for a recovery window after a fault, else each
 * window would make room for another fault, and that fault for another window, and the run would
 * not end. Times are System.nanoTime values. Used by the fault thread only (the clients read the
 * shared end).
 */
final class FaultClock {

    private final AtomicLong clientsEndNanos;
    private long faultsUntilNanos;

    FaultClock(AtomicLong clientsEndNanos) {
        this.clientsEndNanos = clientsEndNanos;
        this.faultsUntilNanos = clientsEndNanos.get();
    }

    /** Makes room for a fault of the first round that must still run; returns by how much the clients' end moved. */
    long stretchForFirstRound(long nowNanos, long needNanos, long gapNanos) {
        long atLeast = nowNanos + needNanos + gapNanos;
        if (faultsUntilNanos - atLeast < 0) {
            faultsUntilNanos = atLeast;
        }
        return stretchClients(atLeast);
    }

    /** True when a fault needing {@code needNanos} (its hold and a second) fits before faults must stop. */
    boolean faultFits(long nowNanos, long needNanos) {
        return faultsUntilNanos - nowNanos >= needNanos;
    }

    /** Keeps the clients going until {@code windowNanos} after a fault ended; returns by how much their end moved. */
    long stretchForRecovery(long nowNanos, long windowNanos) {
        return stretchClients(nowNanos + windowNanos);
    }

    private long stretchClients(long atLeast) {
        while (true) {
            long end = clientsEndNanos.get();
            if (end - atLeast >= 0) {
                return 0;
            }
            if (clientsEndNanos.compareAndSet(end, atLeast)) {
                return atLeast - end;
            }
        }
    }
}
