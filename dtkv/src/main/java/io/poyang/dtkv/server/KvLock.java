package io.poyang.dtkv.server;

import java.util.ArrayDeque;

/**
 * One distributed lock: its holder (if any) with the fencing token of the grant and the lease
 * deadline (the heap deadline, in log-clock milliseconds), and the clients waiting, in order.
 */
final class KvLock extends DeadlineHeap.Item {

    final String key;
    boolean held;
    long holderMost;
    long holderLeast;
    long fencingToken;
    long leaseMillis;
    long leaseExpireAtMillis;
    final ArrayDeque<LockWaiter> waiters = new ArrayDeque<>(2);

    KvLock(String key) {
        this.key = key;
    }

    boolean heldBy(long most, long least) {
        return held && holderMost == most && holderLeast == least;
    }

    LockWaiter waiter(long most, long least) {
        for (LockWaiter w : waiters) {
            if (w.most == most && w.least == least) {
                return w;
            }
        }
        return null;
    }

    /** A client waiting for the lock: the lease it asked for and until when it waits (log clock). */
    static final class LockWaiter {
        final long most;
        final long least;
        long leaseMillis;
        long waitUntilMillis;

        LockWaiter(long most, long least, long leaseMillis, long waitUntilMillis) {
            this.most = most;
            this.least = least;
            this.leaseMillis = leaseMillis;
            this.waitUntilMillis = waitUntilMillis;
        }
    }
}
