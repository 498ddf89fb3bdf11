package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.KvWatchReq;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.asB;
import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** Each code of the table in docs/dtkv.md comes from the state machine in a situation that shows what it means. */
class EveryErrorCodeTest {

    @Test
    void everyCodeIsProducedWithAMessage() {
        KvLog log = new KvLog();
        KvStore s = log.store;
        Map<KvCode, KvResp> seen = new EnumMap<>(KvCode.class);
        log.apply(KvReq.mkdir("d"));
        log.apply(KvReq.put("d.v", b("1")));
        log.apply(asA(KvReq.putTemp("t", b("1"), 1000)));
        log.apply(asA(KvReq.tryLock("l", 1000, 0)));

        record(seen, log.apply(KvReq.put("ok", b("1"))));
        record(seen, log.apply(KvReq.remove("nope")));                                   // NOT_FOUND
        record(seen, log.apply(KvReq.put("a..b", b("1"))));                              // INVALID_KEY
        char[] longKey = new char[KvKeys.MAX_KEY_BYTES + 1];
        Arrays.fill(longKey, 'x');
        record(seen, log.apply(KvReq.put(new String(longKey), b("1"))));                 // KEY_TOO_LONG
        record(seen, log.apply(KvReq.put("big", new byte[KvKeys.MAX_VALUE_BYTES + 1]))); // VALUE_TOO_LARGE
        record(seen, log.apply(KvReq.put("x.y", b("1"))));                               // PARENT_NOT_FOUND
        record(seen, log.apply(KvReq.put("d.v.z", b("1"))));                             // PARENT_NOT_DIR
        record(seen, log.apply(KvReq.put("d", b("1"))));                                 // IS_A_DIR
        record(seen, log.apply(KvReq.mkdir("d.v")));                                     // NOT_A_DIR
        record(seen, log.apply(KvReq.remove("d")));                                      // DIR_NOT_EMPTY
        record(seen, log.apply(KvReq.compareAndSet("d.v", b("0"), b("2"))));             // CAS_MISMATCH
        record(seen, log.apply(asA(KvReq.updateTtl("d.v", 1000))));                      // NOT_TEMP
        record(seen, log.apply(asB(KvReq.put("t", b("2")))));                            // NOT_OWNER
        record(seen, log.apply(asA(KvReq.putTemp("u", b("1"), 0))));                     // INVALID_TTL
        record(seen, log.apply(asB(KvReq.unlock("l"))));                                 // LOCK_NOT_HELD
        log.advance(1000);
        record(seen, log.apply(asA(KvReq.updateLease("l", 1000))));                      // LEASE_EXPIRED
        record(seen, log.apply(KvReq.batchPut(Arrays.asList("a"), Collections.<byte[]>emptyList()))); // INVALID_REQUEST
        record(seen, log.apply(KvReq.expire("d.v", 2)));                                 // STALE_EXPIRE
        record(seen, log.apply(KvReq.put("s", b("1")).session(5, 5).seq(9, 8)));         // SESSION_EXPIRED
        log.apply(KvReq.put("s", b("1")).session(6, 6).seq(1, 1));
        log.apply(KvReq.put("s", b("1")).session(6, 6).seq(2, 2));
        record(seen, log.apply(KvReq.put("s", b("1")).session(6, 6).seq(1, 1)));         // SEQ_ALREADY_ACKED
        record(seen, log.apply(KvReq.put("s", b("1")).session(6, 6).seq(1_000_000, 2))); // SESSION_WINDOW_FULL
        record(seen, log.apply(KvReq.batchRemove(Collections.nCopies(KvKeys.MAX_BATCH_KEYS + 1, "k")))); // BATCH_TOO_LARGE
        log.apply(KvReq.mkdir("big"));
        for (int i = 0; i < 3; i++) {
            log.apply(KvReq.put("big.v" + i, new byte[3 << 20]));
        }
        record(seen, s.list("big"));                                                    // ANSWER_TOO_LARGE
        KvConfig oneWatch = new KvConfig();
        oneWatch.maxWatchesPerConnection = 1;
        record(seen, new KvStore(oneWatch).watchManager().watch(1, new KvWatchReq(0, false, false,
                Arrays.asList("a", "b"), new long[2])));                                 // TOO_MANY_WATCHES

        Set<KvCode> missing = EnumSet.allOf(KvCode.class);
        missing.removeAll(seen.keySet());
        assertTrue(missing.isEmpty(), "codes no situation produced: " + missing);
        for (Map.Entry<KvCode, KvResp> e : seen.entrySet()) {
            if (e.getKey() != KvCode.SUCCESS) {
                assertNotNull(e.getValue().message(), e.getKey().name());
                assertFalse(e.getValue().message().isEmpty(), e.getKey().name());
            }
        }
        // reads and watches use the same codes
        assertEquals(KvCode.NOT_FOUND, s.list("nope").code());
        assertEquals(KvCode.INVALID_KEY, s.watchManager().watch(1, new KvWatchReq(0, false, false,
                Collections.singletonList(".x"), new long[1])).code());
    }

    private static void record(Map<KvCode, KvResp> seen, KvResp r) {
        assertFalse(seen.containsKey(r.code()) && r.code() != KvCode.SUCCESS, "two situations gave " + r.code());
        seen.put(r.code(), r);
    }
}
