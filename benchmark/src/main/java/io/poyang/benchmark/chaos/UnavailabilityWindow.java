package io.poyang.benchmark.chaos;

import java.util.List;

/**
 * How long the cluster could not acknowledge writes after a fault: from the fault to the completion of
 * the first write (put, CAS or remove) invoked after it that was acknowledged. Writes invoked before the
 * fault do not count: one that completes just after the kill says nothing about the new leader.
 */
final class UnavailabilityWindow {

    private UnavailabilityWindow() {
    }

    /** Nanoseconds from {@code faultNanos} to that completion; -1 when no such write exists. */
    static long afterNanos(List<Operation> history, long faultNanos) {
        long first = Long.MAX_VALUE;
        for (Operation op : history) {
            if (op.kind() != OpKind.GET && op.status() == OpStatus.OK && op.invokeNanos() >= faultNanos) {
                first = Math.min(first, op.completeNanos());
            }
        }
        return first == Long.MAX_VALUE ? -1 : first - faultNanos;
    }
}
