package io.poyang.net;

import io.poyang.common.FlowControlException;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Bounds the requests (and their bytes) a node has sent and not yet seen answered. Callers on any
 * thread acquire; the I/O worker releases when a request completes. The common path is two
 * uncontended atomic adds each way; the lock is only touched when someone waits for room.
 */
final class PendingLimiter {

    private final String owner;
    private final int maxRequests;
    private final long maxBytes;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    /** Callers blocked for room; written under the lock, read by releasers without it. */
    private volatile int waiters;

    PendingLimiter(String owner, int maxRequests, long maxBytes) {
        this.owner = owner;
        this.maxRequests = maxRequests;
        this.maxBytes = maxBytes;
    }

    /**
     * Takes room for one request of {@code size} bytes, waiting until the deadline when asked to.
     * {@code onIoThread}: the caller asked to wait but is an I/O thread of this node, which must
     * not (the failure says so).
     */
    void acquire(int size, boolean block, long deadlineNanos, boolean onIoThread) {
        if (tryAcquire(size)) {
            return;
        }
        if (!block) {
            FlowControlException e = full(size);
            if (onIoThread) {
                throw new FlowControlException(e.getMessage() + ". Not waited for, although the call asked to:"
                        + " this is an I/O thread of " + owner + ", and only its I/O threads free room (they read"
                        + " the answers); send from another thread to wait");
            }
            throw e;
        }
        lock.lock();
        waiters++;
        try {
            while (!tryAcquire(size)) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw full(size);
                }
                room.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NetException(owner + ": interrupted while waiting for room among the pending requests", e);
        } finally {
            waiters--;
            lock.unlock();
        }
    }

    private boolean tryAcquire(int size) {
        if (requests.incrementAndGet() > maxRequests) {
            requests.decrementAndGet();
            return false;
        }
        long after = bytes.addAndGet(size);
        // A single request larger than the byte limit may still go when nothing else is pending.
        if (after > maxBytes && after != size) {
            bytes.addAndGet(-size);
            requests.decrementAndGet();
            return false;
        }
        return true;
    }

    void release(int size) {
        bytes.addAndGet(-size);
        requests.decrementAndGet();
        if (waiters > 0) {
            lock.lock();
            try {
                room.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private FlowControlException full(int size) {
        return new FlowControlException(owner + ": too many pending requests (" + requests.get() + " of max "
                + maxRequests + ", " + bytes.get() + " of max " + maxBytes + " bytes; this one needs " + size
                + "); wait for responses, slow down, or raise maxPendingRequests/maxPendingBytes");
    }

    int pendingRequests() {
        return requests.get();
    }

    long pendingBytes() {
        return bytes.get();
    }
}
