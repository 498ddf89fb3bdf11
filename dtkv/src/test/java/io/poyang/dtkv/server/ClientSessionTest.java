package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** Exactly-once writes through client sessions. */
class ClientSessionTest {

    private final KvLog log = new KvLog();
    private final KvStore store = log.store;

    private static KvReq s(KvReq r, long seq, long ackedBelow) {
        return r.session(7, 8).seq(seq, ackedBelow);
    }

    @Test
    void aRetryGetsTheFirstAnswerAndIsNotAppliedAgain() {
        KvResp first = log.apply(s(KvReq.put("a", b("1")), 1, 1));
        log.apply(KvReq.put("a", b("other")));
        KvResp retry = log.apply(s(KvReq.put("a", b("1")), 1, 1));
        assertSame(first, retry);
        assertEquals("other", store.nodeOf("a").valueAsString());
        // failures are answers too
        KvResp fail = log.apply(s(KvReq.remove("nope"), 2, 1));
        assertEquals(KvCode.NOT_FOUND, fail.code());
        log.apply(KvReq.put("nope", b("x")));
        assertSame(fail, log.apply(s(KvReq.remove("nope"), 2, 1)));
        assertTrue(store.nodeOf("nope").exists());
    }

    @Test
    void requestsMayArriveOutOfOrderWithinTheWindow() {
        log.apply(s(KvReq.put("c", b("3")), 3, 1));
        log.apply(s(KvReq.put("a", b("1")), 1, 1));
        log.apply(s(KvReq.put("b", b("2")), 2, 1));
        assertEquals(3, store.nodeCount());
        KvResp retry = log.apply(s(KvReq.put("b", b("x")), 2, 1));
        assertSame(store.sessions.get(7, 8).resultOf(2), retry, "the retry gets the recorded answer");
        assertEquals("2", store.nodeOf("b").valueAsString());
    }

    @Test
    void theRecordedAnswersOfTempWritesDoNotHoldTheirValues() {
        byte[] big = new byte[1 << 20];
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.putTemp("t", big, 10_000), 1, 1)).code());
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.updateTtl("t", 20_000), 2, 1)).code());
        for (long seq = 1; seq <= 2; seq++) {
            KvResp recorded = store.sessions.get(7, 8).resultOf(seq);
            byte[] v = recorded.node().value();
            assertTrue(v == null || v.length == 0, "the session keeps a " + (v == null ? 0 : v.length)
                    + "-byte value in the answer to seq " + seq);
            assertEquals(KvCode.SUCCESS, recorded.code());
        }
        assertEquals(big.length, store.nodeOf("t").value().length, "the value itself is stored");
    }

    @Test
    void acknowledgedSeqsAreRefusedAndForgotten() {
        log.apply(s(KvReq.put("a", b("1")), 1, 1));
        log.apply(s(KvReq.put("b", b("2")), 2, 2)); // the client got the answer to 1
        assertEquals(KvCode.SEQ_ALREADY_ACKED, log.apply(s(KvReq.put("a", b("x")), 1, 1)).code());
        assertEquals("1", store.nodeOf("a").valueAsString());
        assertEquals(1, store.sessions.get(7, 8).resultCount());
    }

    @Test
    void theWindowGrowsToItsLimit() {
        store.config().sessionWindowMax = 64;
        for (int seq = 1; seq <= 64; seq++) {
            assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("k" + seq, b("v")), seq, 1)).code());
        }
        assertEquals(KvCode.SESSION_WINDOW_FULL, log.apply(s(KvReq.put("k65", b("v")), 65, 1)).code());
        assertFalse(store.nodeOf("k65").exists());
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("k65", b("v")), 65, 60)).code());
        assertSame(store.sessions.get(7, 8).resultOf(61), log.apply(s(KvReq.put("k61", b("v")), 61, 60)));
    }

    @Test
    void anIdleSessionIsForgottenAndAWriteWithEarlierSeqsStillOpenIsRefused() {
        log.apply(s(KvReq.put("a", b("1")), 1, 1));
        log.apply(s(KvReq.put("b", b("1")), 2, 2));
        log.advance(store.config().sessionIdleMillis + 1);
        // seq 3 is still open on the client (acked_below 3) while it sends seq 4: refused, not applied
        KvResp r = log.apply(s(KvReq.put("c", b("1")), 4, 3));
        assertEquals(KvCode.SESSION_EXPIRED, r.code());
        assertFalse(store.nodeOf("c").exists());
        assertEquals(0, store.sessions.size(), "the sweep dropped it");
    }

    @Test
    void aLeaderChangeGapDoesNotCountAsIdleTime() {
        KvResp first = log.apply(s(KvReq.put("a", b("1")), 1, 1));
        // the next leader's clock reads two session timeouts later (an outage, or its clock runs ahead)
        log.advance(2 * store.config().sessionIdleMillis);
        log.newLeaderNoOp();
        KvResp retry = log.apply(s(KvReq.put("a", b("1")), 1, 1));
        assertSame(first, retry, "the session survived the gap: the retry gets its first answer");
        // within a term the clock counts as idle time as before
        log.advance(store.config().sessionIdleMillis + 1);
        log.apply(KvReq.put("other", b("x")));
        assertEquals(0, store.sessions.size(), "idle for the timeout within a term: forgotten");
    }

    @Test
    void aClientIdleLongerThanTheSessionTimeoutWritesAgainUnderTheSameId() {
        log.apply(s(KvReq.put("a", b("1")), 1, 1));
        log.apply(s(KvReq.put("b", b("1")), 2, 2));
        log.advance(store.config().sessionIdleMillis + 1);
        // nothing open below seq 3: the session starts again at 3
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("c", b("1")), 3, 3)).code());
        assertEquals("1", store.nodeOf("c").valueAsString());
        assertEquals(3, store.sessions.get(7, 8).ackedBelow);
        // and is exactly-once again: a retry of 3 is answered from the record, a later seq is served
        log.apply(KvReq.put("c", b("other")));
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("c", b("1")), 3, 3)).code());
        assertEquals("other", store.nodeOf("c").valueAsString());
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("d", b("1")), 4, 3)).code());
        // a late copy of a write from before the gap (seq 2) is refused, not applied
        assertEquals(KvCode.SEQ_ALREADY_ACKED, log.apply(s(KvReq.put("b", b("late")), 2, 2)).code());
        assertEquals("1", store.nodeOf("b").valueAsString());
    }

    @Test
    void malformedSessionFieldsAreInvalid() {
        assertEquals(KvCode.INVALID_REQUEST, log.apply(KvReq.put("a", b("1")).seq(1, 1)).code());
        assertEquals(KvCode.INVALID_REQUEST, log.apply(s(KvReq.put("a", b("1")), 3, 4)).code());
        assertEquals(KvCode.INVALID_REQUEST, log.apply(s(KvReq.put("a", b("1")), -1, 0)).code());
    }

    @Test
    void sessionsSurviveASnapshotAndAnswerRetriesAfterRestore() {
        KvResp first = log.apply(s(KvReq.put("a", b("1")), 1, 1));
        KvStore restored = SnapshotTest.restoreFrom(store, 64);
        KvLog.Entry retry = new KvLog.Entry(log.index + 1, log.term, log.clockMillis, io.poyang.codec.EncodeContext
                .encodeToArray(s(KvReq.put("a", b("2")), 1, 1)));
        KvResp again = retry.applyTo(restored);
        assertEquals(first, again);
        assertEquals("1", restored.nodeOf("a").valueAsString());
    }

    @Test
    void aWindowLimitThatIsNotAPowerOfTwoHoldsAndEveryReplicaAgreesAfterARestore() {
        store.config().sessionWindowMax = 100;
        for (int seq = 1; seq <= 100; seq++) {
            assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("k" + seq, b("v")), seq, 1)).code());
        }
        // the client had every answer: nothing is open, the ring kept the size it grew to (128)
        assertEquals(KvCode.SUCCESS, log.apply(s(KvReq.put("k101", b("v")), 101, 101)).code());
        KvStore restored = SnapshotTest.restoreFrom(store, 64);
        restored.config().sessionWindowMax = 100;
        long from = log.index;
        // 110 open seqs: over the limit of 100, on the replica that ran the burst and on the restored one
        KvResp r = log.apply(s(KvReq.put("k210", b("v")), 210, 101));
        log.replayInto(restored, from);
        assertEquals(KvCode.SESSION_WINDOW_FULL, r.code());
        assertEquals(store.describeState(), restored.describeState());
    }
}
