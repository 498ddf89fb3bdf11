package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.asB;
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
        log.advance(99);
        KvReq proposal = ttl.pollDue(log.clockMillis + 1, 10).get(0); // the leader's clock reads 1 ms on
        // the owner renews (1 ms before the deadline) before the proposal is applied
        log.apply(asA(KvReq.updateTtl("t", 1000)));
        assertEquals(KvCode.STALE_EXPIRE, log.apply(proposal).code());
        assertTrue(store.nodeOf("t").exists());
        // removed and re-created: the old create index no longer matches
        log.advance(1000);
        KvReq again = ttl.pollDue(log.clockMillis, 10).get(0);
        log.apply(asA(KvReq.remove("t")));
        log.apply(asA(KvReq.putTemp("t", b("2"), 1000)));
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
        log.apply(asA(KvReq.putTemp("t", b("1"), 10_000)));
        long t = log.clockMillis;
        KvStore otherReplica = new KvStore();
        // 4 s later the old leader dies; its last entry was at T. The new leader's clock runs 3 s
        // ahead of the old one's, so it reads T + 7 s when it takes over.
        long takeOverLocal = t + 4000 + 3000;
        ttl.onLeaderStart(takeOverLocal);
        assertEquals(7000, ttl.leaderOffsetMillis(), "until its first entry is applied it expires 7 s later");
        assertTrue(ttl.pollDue(takeOverLocal + 9_999, 10).isEmpty());
        // Its first entry moves every deadline by the gap, on every replica, and the offset goes.
        log.clockMillis = takeOverLocal;
        log.newLeaderNoOp();
        assertEquals(0, ttl.leaderOffsetMillis());
        assertEquals(takeOverLocal + 10_000, store.nodeOf("t").expireAtMillis());
        assertEquals(takeOverLocal + 10_000, ttl.nextDueMillis());
        log.replayInto(otherReplica, 0);
        assertEquals(store.describeState(), otherReplica.describeState());
        // Nothing is due before 10 s have passed in the new leader's own time since it took over.
        log.advance(9_999);
        log.apply(KvReq.put("other", b("x")));
        assertTrue(store.nodeOf("t").exists(), "an entry 9.999 s into the new term leaves it");
        assertTrue(ttl.pollDue(log.clockMillis, 10).isEmpty());
        log.advance(1);
        List<KvReq> due = ttl.pollDue(log.clockMillis, 10);
        assertEquals(1, due.size());
        assertEquals(KvCode.SUCCESS, log.apply(due.get(0)).code(), "the proposal removes its own node");
        assertFalse(store.nodeOf("t").exists());
    }

    @Test
    void aTempNodePastItsDeadlineIsGoneForTheNextWriteBeforeTheExpiryEntry() {
        ttl.onLeaderStart(log.clockMillis);
        log.apply(asA(KvReq.putTemp("t", b("a"), 1000)));
        log.apply(asA(KvReq.putTemp("u", b("a"), 1000)));
        log.apply(KvReq.mkdir("svc"));
        log.apply(asA(KvReq.makeTempDir("svc.members", 1000)));
        log.apply(asA(KvReq.putTemp("svc.members.m1", b("a"), 60_000)));
        List<KvReq> proposals = ttl.pollDue(log.clockMillis + 1000, 10);
        assertEquals(3, proposals.size(), "t, u and svc.members are proposed once due");
        log.advance(999);
        assertEquals(KvCode.NOT_OWNER, log.apply(asB(KvReq.put("t", b("b")))).code(), "1 ms before: still A's");
        log.advance(1);
        // At the deadline the owner can no longer renew it, and anyone may write the key.
        KvResp renewal = log.apply(asA(KvReq.updateTtl("u", 1000)));
        assertEquals(KvCode.NOT_FOUND, renewal.code());
        assertEquals(KvCode.SUCCESS, log.apply(asB(KvReq.put("t", b("b")))).code());
        KvNode t = store.nodeOf("t");
        assertEquals("b", t.valueAsString());
        assertFalse(t.isTemp(), "a new, permanent node");
        assertFalse(store.nodeOf("svc.members").exists(), "the temp directory went too");
        assertFalse(store.nodeOf("svc.members.m1").exists(), "with its longer-lived child");
        assertEquals(0, ttl.trackedNodeCount());
        for (KvReq p : proposals) {
            assertEquals(KvCode.STALE_EXPIRE, log.apply(p).code(), "the leader's late proposal changes nothing");
        }
        assertEquals("b", store.nodeOf("t").valueAsString());
    }

    @Test
    void anEntryWithoutARequestPastADeadlineRemovesTheTempNodeOnEveryReplica() {
        log.apply(asA(KvReq.putTemp("t", b("a"), 1000)));
        log.advance(1000);
        log.entryWithoutRequest(); // a membership change, say, in the same term
        assertFalse(store.nodeOf("t").exists());
        KvStore replica = new KvStore();
        log.replayInto(replica, 0);
        assertFalse(replica.nodeOf("t").exists());
        assertEquals(store.describeState(), replica.describeState());
    }

    @Test
    void deadlinesMoveTheSameOnAReplicaRestoredFromASnapshotBeforeTheTermChange() {
        log.apply(asA(KvReq.putTemp("a", b("1"), 5000)));
        log.apply(asA(KvReq.tryLock("l", 5000, 0)));
        KvStore restored = SnapshotTest.restoreFrom(store, 64);
        long snapshotIndex = log.index;
        assertEquals(1, restored.lastAppliedTerm());
        log.advance(3000);
        log.newLeaderNoOp();
        log.advance(4000);
        log.apply(KvReq.put("b", b("1")));
        log.replayInto(restored, snapshotIndex);
        assertTrue(store.nodeOf("a").exists(), "7 s after its write, but only 4 s into the new term");
        assertEquals(store.describeState(), restored.describeState());
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
            r.finish(log.term);
        }
        assertEquals(2, restored.ttlManager().trackedNodeCount());
        restored.ttlManager().onLeaderStart(log.clockMillis);
        assertEquals(log.clockMillis + 500, restored.ttlManager().nextDueMillis());
        assertEquals(2, restored.ttlManager().pollDue(log.clockMillis + 700, 10).size());
    }
}
