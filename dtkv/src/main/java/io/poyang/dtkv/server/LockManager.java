package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;

import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * Distributed locks, kept beside the tree (a lock name is a key by the tree's rules, but lives in
 * its own namespace: it needs no parent directory and does not collide with a node).
 *
 * <p>Rules (every time is the log clock, so all replicas agree):
 * <ul>
 *   <li>tryLock on a free lock grants it: fencing token = the entry's raft index, lease deadline =
 *   clock + lease. By the holder: renews the lease, same token. Held by another: with wait 0,
 *   LOCK_NOT_ACQUIRED; else the caller joins the queue (or updates its place's lease and wait).</li>
 *   <li>A lease whose deadline is at or before the clock counts as run out for every operation on
 *   the lock, even before the leader's EXPIRE_LOCK arrives: the holder loses it (a LOST event) and
 *   the first waiter still within its wait time is granted it (a GRANTED event, token = this
 *   entry's index). Waiters past their wait time are dropped when met.</li>
 *   <li>unlock by the holder releases and grants the next waiter; by a waiter leaves the queue;
 *   by anyone else, LOCK_NOT_HELD. updateLease by the holder renews; after the lease ran out,
 *   LEASE_EXPIRED; by anyone else, LOCK_NOT_HELD.</li>
 * </ul>
 */
final class LockManager {

    private final LinkedHashMap<String, KvLock> locks = new LinkedHashMap<>();
    private final DeadlineHeap<KvLock> leases;
    private final int groupId;
    private KvListener listener = KvListener.NONE;

    LockManager(DeadlineHeap<KvLock> leases, int groupId) {
        this.leases = leases;
        this.groupId = groupId;
    }

    void setListener(KvListener listener) {
        this.listener = listener;
    }

    KvLock get(String key) {
        return locks.get(key);
    }

    Collection<KvLock> all() {
        return locks.values();
    }

    int size() {
        return locks.size();
    }

    void clear() {
        locks.clear();
    }

    /**
     * Moves every lease deadline and every waiter's wait deadline later by {@code gapMillis}: a new
     * term started that much later than the log clock (see KvStore#advanceClock). The lease heap is
     * the caller's to shift.
     */
    void shiftDeadlines(long gapMillis) {
        for (KvLock lock : locks.values()) {
            if (lock.held) {
                lock.leaseExpireAtMillis += gapMillis;
            }
            for (KvLock.LockWaiter w : lock.waiters) {
                w.waitUntilMillis += gapMillis;
            }
        }
    }

    /** Restores a lock from a snapshot. */
    void restore(KvLock lock) {
        locks.put(lock.key, lock);
        if (lock.held) {
            leases.set(lock, lock.leaseExpireAtMillis);
        }
    }

    KvResp tryLock(long index, long clock, KvReq req) {
        String key = req.key();
        KvResp bad = checkCommon(index, key, req);
        if (bad != null) {
            return bad;
        }
        KvCode c = KvKeys.checkTtl(req.ttlMillis());
        if (c == KvCode.SUCCESS) {
            c = KvKeys.checkWait(req.waitMillis());
        }
        if (c != KvCode.SUCCESS) {
            return KvResp.fail(c, index, "lease must be 1 ms to " + KvKeys.MAX_TTL_MILLIS + " ms and wait 0 to "
                    + KvKeys.MAX_WAIT_MILLIS + " ms; got lease " + req.ttlMillis() + ", wait " + req.waitMillis());
        }
        long most = req.clientUuidMost();
        long least = req.clientUuidLeast();
        KvLock lock = locks.get(key);
        if (lock == null) {
            lock = new KvLock(key);
            locks.put(key, lock);
        } else {
            expireIfRunOut(lock, index, clock);
        }
        if (!lock.held) {
            grant(lock, most, least, req.ttlMillis(), index, clock, false);
            return granted(lock, index);
        }
        if (lock.heldBy(most, least)) {
            lock.leaseMillis = req.ttlMillis();
            lock.leaseExpireAtMillis = clock + req.ttlMillis();
            leases.set(lock, lock.leaseExpireAtMillis);
            return granted(lock, index);
        }
        pruneWaiters(lock, clock);
        KvLock.LockWaiter w = lock.waiter(most, least);
        if (req.waitMillis() == 0) {
            if (w != null) {
                lock.waiters.remove(w);
            }
            return KvResp.success(index).lock(KvResp.LOCK_NOT_ACQUIRED, 0, 0);
        }
        if (w == null) {
            lock.waiters.addLast(new KvLock.LockWaiter(most, least, req.ttlMillis(), clock + req.waitMillis()));
        } else {
            w.leaseMillis = req.ttlMillis();
            w.waitUntilMillis = clock + req.waitMillis();
        }
        return KvResp.success(index).lock(KvResp.LOCK_QUEUED, 0, 0);
    }

    KvResp unlock(long index, long clock, KvReq req) {
        String key = req.key();
        KvResp bad = checkCommon(index, key, req);
        if (bad != null) {
            return bad;
        }
        long most = req.clientUuidMost();
        long least = req.clientUuidLeast();
        KvLock lock = locks.get(key);
        if (lock == null) {
            return notHeld(index, key);
        }
        // A waiter leaves the queue before a run-out lease is handled, so it is never granted the
        // lock it is giving up on.
        KvLock.LockWaiter w = lock.waiter(most, least);
        if (w != null) {
            lock.waiters.remove(w);
        }
        expireIfRunOut(lock, index, clock);
        KvResp r;
        if (w != null) {
            r = KvResp.success(index);
        } else if (lock.heldBy(most, least)) {
            release(lock);
            grantNext(lock, index, clock);
            r = KvResp.success(index);
        } else {
            r = notHeld(index, key);
        }
        dropIfUnused(lock);
        return r;
    }

    KvResp updateLease(long index, long clock, KvReq req) {
        String key = req.key();
        KvResp bad = checkCommon(index, key, req);
        if (bad != null) {
            return bad;
        }
        if (KvKeys.checkTtl(req.ttlMillis()) != KvCode.SUCCESS) {
            return KvResp.fail(KvCode.INVALID_TTL, index, "lease must be 1 ms to " + KvKeys.MAX_TTL_MILLIS
                    + " ms; got " + req.ttlMillis());
        }
        long most = req.clientUuidMost();
        long least = req.clientUuidLeast();
        KvLock lock = locks.get(key);
        if (lock == null) {
            return notHeld(index, key);
        }
        boolean wasHolder = lock.heldBy(most, least);
        expireIfRunOut(lock, index, clock);
        if (lock.heldBy(most, least)) {
            lock.leaseMillis = req.ttlMillis();
            lock.leaseExpireAtMillis = clock + req.ttlMillis();
            leases.set(lock, lock.leaseExpireAtMillis);
            return granted(lock, index);
        }
        dropIfUnused(lock);
        if (wasHolder) {
            return KvResp.fail(KvCode.LEASE_EXPIRED, index, "the lease of lock '" + key
                    + "' ran out before this renewal; the lock was released; tryLock again (renew earlier)");
        }
        return notHeld(index, key);
    }

    /** The leader's EXPIRE_LOCK: ends the lease if the same grant still holds it and its deadline passed. */
    KvResp expireLock(long index, long clock, KvReq req) {
        String key = req.key();
        KvLock lock = key == null ? null : locks.get(key);
        if (lock == null || !lock.held || lock.fencingToken != req.expectIndex() || lock.leaseExpireAtMillis > clock) {
            return KvResp.fail(KvCode.STALE_EXPIRE, index, "lock '" + key + "' was released, re-granted or renewed"
                    + " since the expiry was proposed");
        }
        expireIfRunOut(lock, index, clock);
        dropIfUnused(lock);
        return KvResp.success(index);
    }

    private KvResp checkCommon(long index, String key, KvReq req) {
        KvCode c = KvKeys.check(key);
        if (c != KvCode.SUCCESS) {
            return KvResp.fail(c, index, KvKeys.explain(c, key));
        }
        if (req.clientUuidMost() == 0 && req.clientUuidLeast() == 0) {
            return KvResp.fail(KvCode.INVALID_REQUEST, index, "lock operations need the client id"
                    + " (client_uuid_most/least): it names the holder");
        }
        return null;
    }

    private static KvResp notHeld(long index, String key) {
        return KvResp.fail(KvCode.LOCK_NOT_HELD, index, "this client neither holds nor waits for lock '" + key
                + "' (its lease may have run out)");
    }

    private static KvResp granted(KvLock lock, long index) {
        return KvResp.success(index).lock(KvResp.LOCK_GRANTED, lock.fencingToken, lock.leaseExpireAtMillis);
    }

    private void expireIfRunOut(KvLock lock, long index, long clock) {
        if (lock.held && lock.leaseExpireAtMillis <= clock) {
            long most = lock.holderMost;
            long least = lock.holderLeast;
            long token = lock.fencingToken;
            release(lock);
            listener.onLockEvent(new KvLockEvent(groupId, lock.key, KvLockEvent.LOST, token, 0, most, least));
            grantNext(lock, index, clock);
        }
    }

    private void release(KvLock lock) {
        lock.held = false;
        lock.holderMost = 0;
        lock.holderLeast = 0;
        leases.remove(lock);
    }

    private void grantNext(KvLock lock, long index, long clock) {
        pruneWaiters(lock, clock);
        KvLock.LockWaiter w = lock.waiters.pollFirst();
        if (w != null) {
            grant(lock, w.most, w.least, w.leaseMillis, index, clock, true);
        }
    }

    private void grant(KvLock lock, long most, long least, long leaseMillis, long index, long clock, boolean push) {
        lock.held = true;
        lock.holderMost = most;
        lock.holderLeast = least;
        lock.fencingToken = index;
        lock.leaseMillis = leaseMillis;
        lock.leaseExpireAtMillis = clock + leaseMillis;
        leases.set(lock, lock.leaseExpireAtMillis);
        if (push) {
            listener.onLockEvent(new KvLockEvent(groupId, lock.key, KvLockEvent.GRANTED, index,
                    lock.leaseExpireAtMillis, most, least));
        }
    }

    private static void pruneWaiters(KvLock lock, long clock) {
        for (Iterator<KvLock.LockWaiter> it = lock.waiters.iterator(); it.hasNext(); ) {
            if (it.next().waitUntilMillis <= clock) {
                it.remove();
            }
        }
    }

    private void dropIfUnused(KvLock lock) {
        if (!lock.held && lock.waiters.isEmpty()) {
            locks.remove(lock.key);
            leases.remove(lock);
        }
    }
}
