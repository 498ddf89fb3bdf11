package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/** Distributed locks: grants, queueing in order, fencing tokens, leases. */
class LockTest {

    private final KvLog log = new KvLog();
    private final KvStore store = log.store;
    private final List<KvLockEvent> events = new ArrayList<>();

    @BeforeEach
    void listen() {
        store.setListener(events::add);
    }

    private static KvReq as(int client, KvReq r) {
        return r.session(client, client * 100L);
    }

    @Test
    void aFreeLockIsGrantedWithTheIndexAsFencingToken() {
        KvResp r = log.apply(as(1, KvReq.tryLock("l", 1000, 0)));
        assertEquals(KvCode.SUCCESS, r.code());
        assertEquals(KvResp.LOCK_GRANTED, r.lockState());
        assertEquals(log.index, r.fencingToken());
        assertEquals(log.clockMillis + 1000, r.leaseExpireAtMillis());
        // the holder asking again renews, same token
        log.advance(500);
        KvResp again = log.apply(as(1, KvReq.tryLock("l", 1000, 0)));
        assertEquals(KvResp.LOCK_GRANTED, again.lockState());
        assertEquals(r.fencingToken(), again.fencingToken());
        assertEquals(log.clockMillis + 1000, again.leaseExpireAtMillis());
        assertTrue(events.isEmpty(), "a direct grant is the answer itself, not a push");
    }

    @Test
    void othersAreRefusedOrQueuedInOrderAndGrantedOnUnlockWithHigherTokens() {
        long t1 = log.apply(as(1, KvReq.tryLock("l", 10_000, 0))).fencingToken();
        assertEquals(KvResp.LOCK_NOT_ACQUIRED, log.apply(as(2, KvReq.tryLock("l", 10_000, 0))).lockState());
        for (int c = 2; c <= 5; c++) {
            assertEquals(KvResp.LOCK_QUEUED, log.apply(as(c, KvReq.tryLock("l", 10_000, 60_000))).lockState());
        }
        long last = t1;
        for (int c = 1; c <= 4; c++) {
            assertEquals(KvCode.SUCCESS, log.apply(as(c, KvReq.unlock("l"))).code());
            KvLockEvent e = events.get(events.size() - 1);
            assertEquals(KvLockEvent.GRANTED, e.type());
            assertEquals(c + 1, e.clientUuidMost(), "waiters are granted in the order they queued");
            assertEquals(log.index, e.fencingToken());
            assertTrue(e.fencingToken() > last, "fencing tokens only grow");
            last = e.fencingToken();
        }
        assertEquals(KvCode.SUCCESS, log.apply(as(5, KvReq.unlock("l"))).code());
        assertEquals(0, store.locks.size(), "a free lock nobody waits for is forgotten");
    }

    @Test
    void unlockAndUpdateLeaseByOthersFail() {
        assertEquals(KvCode.LOCK_NOT_HELD, log.apply(as(1, KvReq.unlock("l"))).code());
        assertEquals(KvCode.LOCK_NOT_HELD, log.apply(as(1, KvReq.updateLease("l", 100))).code());
        log.apply(as(1, KvReq.tryLock("l", 1000, 0)));
        assertEquals(KvCode.LOCK_NOT_HELD, log.apply(as(2, KvReq.unlock("l"))).code());
        assertEquals(KvCode.LOCK_NOT_HELD, log.apply(as(2, KvReq.updateLease("l", 100))).code());
        assertEquals(KvCode.INVALID_REQUEST, log.apply(KvReq.tryLock("l", 1000, 0)).code());
        assertEquals(KvCode.INVALID_KEY, log.apply(as(1, KvReq.tryLock("l.", 1000, 0))).code());
        assertEquals(KvCode.INVALID_TTL, log.apply(as(1, KvReq.tryLock("m", 0, 0))).code());
        assertEquals(KvCode.INVALID_TTL, log.apply(as(1, KvReq.tryLock("m", 10, -1))).code());
        assertEquals(KvCode.INVALID_TTL, log.apply(as(1, KvReq.updateLease("l", 0))).code());
    }

    @Test
    void aWaiterLeavesTheQueueByUnlockOrByAskingWithoutWait() {
        log.apply(as(1, KvReq.tryLock("l", 1000, 0)));
        log.apply(as(2, KvReq.tryLock("l", 1000, 5000)));
        log.apply(as(3, KvReq.tryLock("l", 1000, 5000)));
        assertEquals(KvCode.SUCCESS, log.apply(as(2, KvReq.unlock("l"))).code());
        assertEquals(KvResp.LOCK_NOT_ACQUIRED, log.apply(as(3, KvReq.tryLock("l", 1000, 0))).lockState());
        log.apply(as(1, KvReq.unlock("l")));
        assertTrue(events.isEmpty(), "nobody was left waiting");
        assertEquals(0, store.locks.size());
    }

    @Test
    void updateLeaseExtendsAndALateRenewalFindsTheLockLost() {
        long token = log.apply(as(1, KvReq.tryLock("l", 1000, 0))).fencingToken();
        log.advance(900);
        KvResp r = log.apply(as(1, KvReq.updateLease("l", 1000)));
        assertEquals(KvResp.LOCK_GRANTED, r.lockState());
        assertEquals(token, r.fencingToken());
        assertEquals(log.clockMillis + 1000, r.leaseExpireAtMillis());
        log.advance(1000);
        assertEquals(KvCode.LEASE_EXPIRED, log.apply(as(1, KvReq.updateLease("l", 1000))).code());
        assertEquals(KvLockEvent.LOST, events.get(0).type());
        assertEquals(0, store.locks.size());
    }

    @Test
    void leaseExpiryIsProposedByTheLeaderAndGrantsTheNextWaiter() {
        TtlManager ttl = store.ttlManager();
        ttl.onLeaderStart(log.clockMillis);
        long t1 = log.apply(as(1, KvReq.tryLock("l", 1000, 0))).fencingToken();
        log.apply(as(2, KvReq.tryLock("l", 2000, 10_000)));
        log.advance(999);
        assertTrue(ttl.pollDue(log.clockMillis, 10).isEmpty());
        log.advance(1);
        List<KvReq> due = ttl.pollDue(log.clockMillis, 10);
        assertEquals(1, due.size());
        assertEquals(KvOp.EXPIRE_LOCK, due.get(0).op());
        assertEquals(KvCode.SUCCESS, log.apply(due.get(0)).code());
        assertEquals(2, events.size());
        assertEquals(KvLockEvent.LOST, events.get(0).type());
        assertEquals(1, events.get(0).clientUuidMost());
        KvLockEvent granted = events.get(1);
        assertEquals(KvLockEvent.GRANTED, granted.type());
        assertEquals(2, granted.clientUuidMost());
        assertTrue(granted.fencingToken() > t1);
        assertEquals(log.clockMillis + 2000, granted.leaseExpireAtMillis(), "the waiter's lease starts at its grant");
        // the same proposal applied twice (a retry) is stale
        assertEquals(KvCode.STALE_EXPIRE, log.apply(due.get(0)).code());
    }

    @Test
    void anyLockOperationSeesARunOutLeaseEvenBeforeTheExpiryEntry() {
        log.apply(as(1, KvReq.tryLock("l", 1000, 0)));
        log.apply(as(2, KvReq.tryLock("l", 1000, 60_000)));
        log.apply(as(3, KvReq.tryLock("l", 1000, 60_000)));
        log.advance(1000);
        // client 4 comes after the lease ran out: the queue head (2) gets it, 4 does not jump the queue
        assertEquals(KvResp.LOCK_NOT_ACQUIRED, log.apply(as(4, KvReq.tryLock("l", 1000, 0))).lockState());
        assertEquals(2, events.get(1).clientUuidMost());
        assertTrue(store.locks.get("l").heldBy(2, 200));
    }

    @Test
    void aLeaderChangeDoesNotShortenALeaseOrAWait() {
        long token = log.apply(as(1, KvReq.tryLock("l", 1000, 0))).fencingToken();
        log.apply(as(2, KvReq.tryLock("l", 1000, 2000)));
        // The old leader falls silent; the new one takes over 3 s after the last entry, by its clock.
        log.advance(3000);
        log.newLeaderNoOp();
        log.advance(500);
        KvResp renewal = log.apply(as(1, KvReq.updateLease("l", 1000)));
        assertEquals(KvCode.SUCCESS, renewal.code(), "0.5 s into the new term, the 1 s lease still holds");
        assertEquals(token, renewal.fencingToken());
        assertTrue(events.isEmpty(), "nothing was lost");
        log.apply(as(1, KvReq.unlock("l")));
        assertEquals(1, events.size(), "the waiter's 2 s wait also started again: it is granted");
        assertEquals(KvLockEvent.GRANTED, events.get(0).type());
        assertEquals(2, events.get(0).clientUuidMost());
    }

    @Test
    void waitersPastTheirWaitTimeAreSkipped() {
        log.apply(as(1, KvReq.tryLock("l", 10_000, 0)));
        log.apply(as(2, KvReq.tryLock("l", 1000, 100)));
        log.apply(as(3, KvReq.tryLock("l", 1000, 60_000)));
        log.advance(100);
        log.apply(as(1, KvReq.unlock("l")));
        assertEquals(1, events.size());
        assertEquals(3, events.get(0).clientUuidMost(), "client 2 stopped waiting at its wait time");
    }

    @Test
    void tenContendersNeverHoldTogetherAndTokensGrow() {
        for (long seed = 1; seed <= Long.getLong("lockSeeds", 5); seed++) {
            contenders(seed);
            events.clear();
        }
    }

    private void contenders(long seed) {
        // 10 clients try, renew, unlock or let their leases run out at random. Each client believes it
        // holds the lock from a grant (answer or push) until it unlocks, is told LOST or LEASE_EXPIRED,
        // or its lease deadline passes. At no index may two clients believe it with live leases.
        java.util.Random rnd = new java.util.Random(seed);
        KvLog log = new KvLog();
        KvStore store = log.store;
        store.setListener(events::add);
        TtlManager ttl = store.ttlManager();
        ttl.onLeaderStart(log.clockMillis);
        java.util.Map<Integer, long[]> believed = new java.util.HashMap<>(); // client -> {token, leaseEnd}
        long lastToken = 0;
        int grants = 0;
        int handled = 0;
        for (int step = 0; step < 5000; step++) {
            int c = 1 + rnd.nextInt(10);
            int action = rnd.nextInt(4);
            KvReq r = action == 0 ? KvReq.unlock("l") : action == 1 ? KvReq.updateLease("l", 300)
                    : KvReq.tryLock("l", 100 + rnd.nextInt(400), rnd.nextInt(3) * 500L);
            KvResp resp = log.apply(as(c, r));
            if (resp.lockState() == KvResp.LOCK_GRANTED) {
                believed.put(c, new long[]{resp.fencingToken(), resp.leaseExpireAtMillis()});
            } else if (action == 0 && resp.code() == KvCode.SUCCESS || resp.code() == KvCode.LEASE_EXPIRED
                    || resp.code() == KvCode.LOCK_NOT_HELD) {
                believed.remove(c);
            }
            log.advance(rnd.nextInt(60));
            for (KvReq due : ttl.pollDue(log.clockMillis, 10)) {
                log.apply(due);
            }
            for (; handled < events.size(); handled++) {
                KvLockEvent e = events.get(handled);
                int client = (int) e.clientUuidMost();
                long[] b = believed.get(client);
                if (e.type() == KvLockEvent.GRANTED) {
                    grants++;
                    if (b == null || b[0] < e.fencingToken()) {
                        believed.put(client, new long[]{e.fencingToken(), e.leaseExpireAtMillis()});
                    }
                } else if (b != null && b[0] == e.fencingToken()) {
                    believed.remove(client); // a LOST names the grant it ends
                }
            }
            long now = store.logClockMillis();
            int live = 0;
            for (long[] b : believed.values()) {
                if (b[1] > now) {
                    live++;
                    assertTrue(b[0] >= lastToken, "the live holder has the newest token");
                    lastToken = b[0];
                }
            }
            assertTrue(live <= 1, "two clients hold the lock at index " + log.index + ": " + believed.keySet());
        }
        assertTrue(grants > 50, "the lock went to waiters often: " + grants);
    }
}
