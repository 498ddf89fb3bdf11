package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** TTL expiry, driven only by the leader timestamps in the log. */
class TtlTest {

    private final KvLog log = new KvLog();
    private final KvStore store = log.store;
    private final TtlManager ttl = store.ttlManager();

    /** The leader proposes what is due at its clock; the proposals are applied as log entries. */
    private int expireDue() {
        List<KvReq> due = ttl.pollDue(log.clockMillis, 100);
        for (KvReq r : due) {
            assertEquals(KvCode.SUCCESS, log.apply(r).code(), r.toString());
        }
        return due.size();
    }

    @Test
    void aTempNodeExpiresWhenTheLeaderClockPassesItsDeadline() {
        ttl.onLeaderStart(log.clockMillis);
        log.apply(asA(KvReq.putTemp("t", b("1"), 1000)));
        assertEquals(log.clockMillis + 1000, ttl.nextDueMillis());
        log.advance(999);
        assertEquals(0, expireDue());
        assertTrue(store.nodeOf("t").exists());
        log.advance(1);
        assertEquals(1, expireDue());
        assertFalse(store.nodeOf("t").exists());
        assertEquals(0, ttl.trackedNodeCount());
        assertEquals(Long.MAX_VALUE, ttl.nextDueMillis());
    }

    @Test
    void onlyTheLeaderProposesAndEachExpiryOnceUntilTheRetryTime() {
        log.apply(asA(KvReq.putTemp("t", b("1"), 10)));
        log.advance(100);
        assertTrue(ttl.pollDue(log.clockMillis, 10).isEmpty(), "a follower proposes nothing");
        ttl.onLeaderStart(log.clockMillis - 100); // became leader before the deadline: no offset
        List<KvReq> first = ttl.pollDue(log.clockMillis, 10);
        assertEquals(1, first.size());
        assertEquals(KvOp.EXPIRE, first.get(0).op());
        assertEquals(1, first.get(0).expectIndex());
        assertTrue(ttl.pollDue(log.clockMillis + 10, 10).isEmpty(), "proposed once");
        assertEquals(1, ttl.pollDue(log.clockMillis + store.config().expireRetryMillis, 10).size(),
                "proposed again when the first proposal was not applied in time");
        ttl.onLeaderEnd();
        assertTrue(ttl.pollDue(log.clockMillis + 100_000, 10).isEmpty());
    }

    @Test
    void staleExpiriesAreRejected() {
        ttl.onLeaderStart(log.clockMillis);
        log.apply(asA(KvReq.putTemp("t", b("1"), 100)));
        log.advance(100);
        KvReq proposal = ttl.pollDue(log.clockMillis, 10).get(0);
        // the owner renews before the proposal is applied
        log.apply(asA(KvReq.updateTtl("t", 1000)));
        assertEquals(KvCode.STALE_EXPIRE, log.apply(proposal).code());
        assertTrue(store.nodeOf("t").exists());
        // removed and re-created: the old create index no longer matches
        log.advance(1000);
        KvReq again = ttl.pollDue(log.clockMillis, 10).get(0);
        log.apply(asA(KvReq.remove("t")));
        log.apply(asA(KvReq.putTemp("t", b("2"), 1)));
        log.advance(1);
        assertEquals(KvCode.STALE_EXPIRE, log.apply(again).code());
        assertEquals("2", store.nodeOf("t").valueAsString());
        // an expiry for a key that never was temp, or whose deadline has not passed
        log.apply(KvReq.put("p", b("1")));
        assertEquals(KvCode.STALE_EXPIRE, log.apply(KvReq.expire("p", store.nodeOf("p").createIndex())).code());
        log.apply(asA(KvReq.putTemp("u", b("1"), 5000)));
        assertEquals(KvCode.STALE_EXPIRE, log.apply(KvReq.expire("u", store.nodeOf("u").createIndex())).code());
        assertEquals(KvCode.STALE_EXPIRE, log.apply(KvReq.expire(null, 1)).code());
    }

    @Test
    void updateTtlMovesTheDeadlineWithoutChangingTheValueOrUpdateIndex() {
        ttl.onLeaderStart(log.clockMillis);
        log.apply(asA(KvReq.putTemp("t", b("1"), 100)));
        long updateIndex = store.nodeOf("t").updateIndex();
        log.advance(90);
        KvResp r = log.apply(asA(KvReq.updateTtl("t", 100)));
        assertEquals(log.clockMillis + 100, r.node().expireAtMillis());
        assertEquals(updateIndex, r.node().updateIndex());
        log.advance(99);
        assertEquals(0, expireDue());
        log.advance(1);
        assertEquals(1, expireDue());
    }

    @Test
    void aTempDirectoryExpiresWithEverythingUnderItInOneEntry() {
        ttl.onLeaderStart(log.clockMillis);
        log.apply(KvReq.mkdir("svc"));
        log.apply(asA(KvReq.makeTempDir("svc.app", 1000)));
        log.apply(asA(KvReq.mkdir("svc.app.nodes")));
        for (int i = 0; i < 50; i++) {
            log.apply(asA(KvReq.put("svc.app.nodes.n" + i, b("addr" + i))));
        }
        log.apply(asA(KvReq.putTemp("svc.app.leader", b("n1"), 60_000)));
        assertEquals(54, store.nodeCount());
        log.advance(1000);
        long before = log.index;
        List<KvReq> due = ttl.pollDue(log.clockMillis, 10);
        assertEquals(1, due.size(), "only the directory is due; its longer-lived child goes with it");
        assertEquals(KvCode.SUCCESS, log.apply(due.get(0)).code());
        assertEquals(before + 1, log.index);
        assertEquals(1, store.nodeCount(), "only svc is left");
        assertEquals(0, ttl.trackedNodeCount(), "the child's deadline went with it");
        assertTrue(store.list("svc").nodes().isEmpty());
    }

    @Test
    void aLeaderChangeNeverShortensATtl() {
        // The old leader writes a temp node with 10 s to live at its clock T.
        KvStore follower = new KvStore();
        log.apply(asA(KvReq.putTemp("t", b("1"), 10_000)));
        log.advance(4000); // 4 s later the old leader dies; its last entry was at T
        log.replayInto(follower, 0);
        TtlManager newLeader = follower.ttlManager();
        // The new leader's clock runs 3 s ahead of the old one's and it took over 4 s after the last entry.
        long newLeaderClockSkewMillis = 3000;
        long takeOverLocal = log.clockMillis + newLeaderClockSkewMillis;
        newLeader.onLeaderStart(takeOverLocal);
        assertEquals(7000, newLeader.leaderOffsetMillis());
        // Nothing is due before 10 s have passed in the new leader's own time since it took over.
        assertTrue(newLeader.pollDue(takeOverLocal + 9_999, 10).isEmpty());
        List<KvReq> due = newLeader.pollDue(takeOverLocal + 10_000, 10);
        assertEquals(1, due.size());
        // The proposal passes the apply-time check on every replica.
        assertEquals(KvCode.SUCCESS, follower.apply(log.index + 1, takeOverLocal + 10_000, due.get(0)).code());
        assertFalse(follower.nodeOf("t").exists());
    }

    @Test
    void aNewLeaderWithASlowClockExpiresLaterNotSooner() {
        log.apply(asA(KvReq.putTemp("t", b("1"), 10_000)));
        long deadline = log.clockMillis + 10_000;
        ttl.onLeaderStart(log.clockMillis - 5000); // its clock is 5 s behind
        assertEquals(0, ttl.leaderOffsetMillis());
        assertTrue(ttl.pollDue(deadline - 1, 10).isEmpty());
        assertEquals(1, ttl.pollDue(deadline, 10).size());
    }

    @Test
    void deadlinesSurviveASnapshotRestore() {
        log.apply(asA(KvReq.putTemp("a", b("1"), 500)));
        log.apply(asA(KvReq.makeTempDir("d", 700)));
        KvStore restored = new KvStore();
        try (KvSnapshot s = store.openSnapshot()) {
            KvSnapshotRestorer r = restored.beginRestore();
            KvSnapshotChunk c;
            do {
                c = s.nextChunk();
                r.accept(c);
            } while (!c.isLast());
            r.finish();
        }
        assertEquals(2, restored.ttlManager().trackedNodeCount());
        restored.ttlManager().onLeaderStart(log.clockMillis);
        assertEquals(log.clockMillis + 500, restored.ttlManager().nextDueMillis());
        assertEquals(2, restored.ttlManager().pollDue(log.clockMillis + 700, 10).size());
    }
}
