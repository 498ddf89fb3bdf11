package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbParser;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** Snapshots taken while writes go on restore to exactly the state of the log they cover. */
class SnapshotTest {

    /** Copies {@code source}'s state through encoded chunks, as a follower installing a snapshot would. */
    static KvStore restoreFrom(KvStore source, int chunkBytes) {
        source.config().snapshotChunkBytes = chunkBytes;
        KvStore target = new KvStore();
        try (KvSnapshot snap = source.openSnapshot()) {
            KvSnapshotRestorer r = target.beginRestore();
            KvSnapshotChunk c;
            do {
                c = PbParser.parse(EncodeContext.encodeToArray(snap.nextChunk()), new KvSnapshotChunk.Decoder());
                r.accept(c);
            } while (!c.isLast());
            r.finish(source.lastAppliedTerm());
        }
        return target;
    }

    /** A random write over a small key space, touching every kind of node and owner. */
    static KvReq randomWrite(Random rnd, int i) {
        String dir = "d" + rnd.nextInt(8);
        String key = dir + ".k" + rnd.nextInt(200);
        long client = 1 + rnd.nextInt(3);
        switch (rnd.nextInt(14)) {
            case 0:
                return KvReq.mkdir(dir);
            case 1:
                return KvReq.remove(key);
            case 2:
                return KvReq.batchPut(Arrays.asList(key, dir + ".k" + rnd.nextInt(200)),
                        Arrays.asList(b("b" + i), b("c" + i)));
            case 3:
                return KvReq.compareAndSet(key, b("v" + (i - 1)), b("v" + i));
            case 4:
                return KvReq.putTemp(key, b("t" + i), 50 + rnd.nextInt(500)).session(client, client);
            case 5:
                return KvReq.makeTempDir("t" + rnd.nextInt(4), 100 + rnd.nextInt(300)).session(client, client);
            case 6:
                return KvReq.put("t" + rnd.nextInt(4) + ".x", b("x" + i)).session(client, client);
            case 7:
                return KvReq.tryLock("lock" + rnd.nextInt(3), 50 + rnd.nextInt(300), rnd.nextInt(2) * 200L)
                        .session(client, client);
            case 8:
                return KvReq.unlock("lock" + rnd.nextInt(3)).session(client, client);
            case 9:
                return KvReq.put(key, b("v" + i)).session(client, client).seq(i, Math.max(1, i - 5));
            case 10:
                return KvReq.batchRemove(Arrays.asList(key, dir + ".k" + rnd.nextInt(200)));
            default:
                return KvReq.put(key, b("v" + i));
        }
    }

    @Test
    void aSnapshotTakenDuring10000WritesRestoresToTheReplayOfTheLog() {
        Random rnd = new Random(10_000);
        KvLog log = new KvLog();
        KvStore leader = log.store;
        leader.ttlManager().onLeaderStart(log.clockMillis);
        leader.config().snapshotChunkBytes = 2048; // many chunks, so writes interleave with the walk
        for (int i = 1; i <= 2000; i++) {
            log.apply(randomWrite(rnd, i));
            log.advance(rnd.nextInt(5));
        }
        // Open at index S, then alternate: a few writes (with expiries the leader proposes), one chunk.
        KvSnapshot snap = leader.openSnapshot();
        long s = snap.index();
        List<byte[]> chunks = new ArrayList<>();
        int written = 0;
        while (written < 10_000) {
            for (int j = 0; j < 7 && written < 10_000; j++, written++) {
                log.apply(randomWrite(rnd, 2000 + written));
                log.advance(rnd.nextInt(5));
                for (KvReq due : leader.ttlManager().pollDue(log.clockMillis, 5)) {
                    log.apply(due);
                }
            }
            if (!snap.isDone()) {
                chunks.add(EncodeContext.encodeToArray(snap.nextChunk()));
            }
        }
        while (!snap.isDone()) {
            chunks.add(EncodeContext.encodeToArray(snap.nextChunk()));
        }
        assertTrue(leader.tree.keptVersions() > 0, "older versions were kept while the snapshot was open");
        snap.close();
        assertEquals(0, leader.tree.keptVersions(), "and dropped when it closed");
        assertEquals(leader.nodeCount(), leader.tree.entryCount(), "tombstones are gone too");
        assertTrue(chunks.size() > 5, "the snapshot came in many chunks: " + chunks.size());

        // A replica that replays the log up to S equals the snapshot.
        KvStore atS = new KvStore();
        log.replayInto(atS, 0);
        KvStore replayToS = new KvStore();
        for (KvLog.Entry e : log.entries) {
            if (e.index <= s) {
                e.applyTo(replayToS);
            }
        }
        KvStore restored = new KvStore();
        KvSnapshotRestorer r = restored.beginRestore();
        for (byte[] c : chunks) {
            r.accept(PbParser.parse(c, new KvSnapshotChunk.Decoder()));
        }
        r.finish(log.term);
        assertEquals(replayToS.describeState(), restored.describeState(), "the snapshot is the state at its index");

        // Restored, then replaying the rest of the log, equals the leader and a full replay.
        log.replayInto(restored, s);
        assertEquals(leader.describeState(), restored.describeState());
        assertEquals(atS.describeState(), leader.describeState());
        assertTrue(leader.nodeCount() > 100, "the state is not trivial: " + leader.nodeCount());
    }

    @Test
    void theLeaderApplyingRequestObjectsAndAFollowerApplyingTheirBytesAgree() {
        // On the leader the log body is the KvReq object itself; followers decode it from bytes.
        Random rnd = new Random(3);
        KvStore leader = new KvStore();
        KvStore follower = new KvStore();
        long clock = 1_000_000;
        for (long index = 1; index <= 5000; index++) {
            KvReq original = randomWrite(rnd, (int) index);
            if (index % 50 == 0) {
                original = KvReq.put(rnd.nextBoolean() ? "" : null, null); // defaults: null vs empty
            }
            byte[] body = EncodeContext.encodeToArray(original);
            KvResp a = leader.apply(index, 1, clock, original);
            KvResp b = follower.apply(index, 1, clock, PbParser.parse(body, new KvReq.Decoder()));
            assertEquals(a, b, "answers differ at " + index + " for " + original);
            clock += rnd.nextInt(20);
        }
        assertEquals(leader.describeState(), follower.describeState());
    }

    @Test
    void theSnapshotSeesTheStateAtItsIndexDespiteLaterWrites() {
        KvLog log = new KvLog();
        KvStore store = log.store;
        log.apply(KvReq.mkdir("d"));
        log.apply(KvReq.put("d.a", b("1")));
        log.apply(KvReq.put("d.b", b("1")));
        KvSnapshot snap = store.openSnapshot();
        log.apply(KvReq.put("d.a", b("2")));       // updated
        log.apply(KvReq.remove("d.b"));             // removed
        log.apply(KvReq.put("d.b", b("3")));       // re-created on the same entry
        log.apply(KvReq.put("d.c", b("new")));     // created after
        log.apply(KvReq.put("d.a", b("4")));       // a version no snapshot sees
        KvSnapshot second = store.openSnapshot();
        log.apply(KvReq.put("d.a", b("5")));
        KvSnapshotChunk c = snap.nextChunk();
        assertTrue(c.isLast());
        assertEquals(Arrays.asList("d", "d.a", "d.b"), KvStoreOperationsTest.keys(c.nodes()));
        assertEquals("1", c.nodes().get(1).valueAsString());
        assertEquals("1", c.nodes().get(2).valueAsString());
        assertEquals(3, c.nodes().get(2).createIndex());
        KvSnapshotChunk c2 = second.nextChunk();
        assertEquals("4", c2.nodes().get(1).valueAsString());
        assertEquals("3", c2.nodes().get(2).valueAsString());
        assertEquals(4, c2.nodes().size());
        snap.close();
        assertTrue(store.tree.keptVersions() > 0, "the second snapshot still holds versions");
        second.close();
        second.close(); // idempotent
        assertEquals(0, store.tree.keptVersions());
        assertEquals("5", store.nodeOf("d.a").valueAsString());
        assertThrows(IllegalStateException.class, snap::nextChunk);
    }

    @Test
    void aKeyMadeAndRemovedWhileASnapshotIsOpenIsDroppedAtOnceWhileOneTheSnapshotSeesWaitsForItToClose() {
        KvLog log = new KvLog();
        KvStore store = log.store;
        log.apply(KvReq.mkdir("d"));
        log.apply(KvReq.put("d.old", b("seen")));
        KvSnapshot snap = store.openSnapshot();
        // a long snapshot under churn of keys it never saw: none of them needs to be kept
        for (int i = 0; i < 1000; i++) {
            String k = "d.tmp" + i;
            assertEquals(KvCode.SUCCESS, log.apply(KvReq.put(k, b("1"))).code());
            assertEquals(KvCode.SUCCESS, log.apply(KvReq.put(k, b("2"))).code());
            assertEquals(KvCode.SUCCESS, log.apply(KvReq.remove(k)).code());
            assertNull(store.tree.lookup(k), "no open snapshot can see " + k + ": it leaves the index at once");
        }
        log.apply(KvReq.remove("d.old"));
        assertNotNull(store.tree.lookup("d.old"), "the snapshot sees d.old: its entry stays while the snapshot is open");
        assertEquals(1, store.nodeCount());
        assertEquals(2, store.tree.entryCount(), "d and d.old's tombstone, nothing of the 1000 keys made since");
        KvSnapshotChunk c = snap.nextChunk();
        assertTrue(c.isLast());
        assertEquals(Arrays.asList("d", "d.old"), KvStoreOperationsTest.keys(c.nodes()));
        assertEquals("seen", c.nodes().get(1).valueAsString());
        snap.close();
        assertNull(store.tree.lookup("d.old"), "dropped once no open snapshot needs it");
        assertEquals(store.nodeCount(), store.tree.entryCount());
    }

    @Test
    void aSnapshotWhoseCursorSitsOnAKeyMadeAfterItOpenedEndsCorrectlyWhenThatKeyIsDropped() {
        KvLog log = new KvLog();
        KvStore store = log.store;
        store.config().snapshotChunkBytes = 1; // one node per chunk, so the cursor stops on each entry
        log.apply(KvReq.mkdir("d"));
        log.apply(KvReq.put("d.a", b("a")));
        try (KvSnapshot snap = store.openSnapshot()) {
            log.apply(KvReq.put("d.x", b("made after the snapshot")));
            log.apply(KvReq.put("d.y", b("made after the snapshot")));
            List<String> keys = new ArrayList<>(KvStoreOperationsTest.keys(snap.nextChunk().nodes()));
            keys.addAll(KvStoreOperationsTest.keys(snap.nextChunk().nodes())); // the cursor is on d.x now
            log.apply(KvReq.remove("d.x"));
            assertNull(store.tree.lookup("d.x"));
            log.apply(KvReq.remove("d.a"));
            log.apply(KvReq.put("d.z", b("made after the snapshot")));
            KvSnapshotChunk last = snap.nextChunk();
            assertTrue(last.isLast(), "nothing after d.x on the list is visible to the snapshot");
            keys.addAll(KvStoreOperationsTest.keys(last.nodes()));
            assertEquals(Arrays.asList("d", "d.a"), keys);
        }
        assertEquals(store.nodeCount(), store.tree.entryCount());
        assertEquals(Arrays.asList("d.y", "d.z"), KvStoreOperationsTest.keys(store.list("d").nodes()));
    }

    @Test
    void aPutOverwritesTheVersionInPlaceOnlyWhileNoSnapshotIsOpen() {
        KvLog log = new KvLog();
        KvStore store = log.store;
        log.apply(KvReq.put("a", b("1")));
        long created = log.index;
        KvVersion first = store.tree.lookup("a").latest;
        log.apply(KvReq.put("a", b("2")));
        assertSame(first, store.tree.lookup("a").latest, "no snapshot open: the version is overwritten");
        assertEquals("2", new String(first.value, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(created, first.createIndex);
        assertEquals(log.index, first.updateIndex);
        assertEquals(log.index, first.modIndex);

        KvSnapshot snap = store.openSnapshot();
        log.apply(KvReq.put("a", b("3")));
        KvVersion during = store.tree.lookup("a").latest;
        assertNotSame(first, during, "a snapshot is open: a new version is installed");
        assertEquals("2", new String(first.value, java.nio.charset.StandardCharsets.UTF_8),
                "the version the snapshot reads is left as it was");
        assertEquals(created, during.createIndex);
        assertEquals("2", snap.nextChunk().nodes().get(0).valueAsString());
        snap.close();

        log.apply(KvReq.put("a", b("4")));
        assertSame(during, store.tree.lookup("a").latest, "closed again: back to overwriting");
        assertEquals("4", store.nodeOf("a").valueAsString());
        assertEquals(0, store.tree.keptVersions());
    }

    @Test
    void withoutSnapshotsNoVersionIsKept() {
        KvLog log = new KvLog();
        for (int i = 0; i < 1000; i++) {
            log.apply(KvReq.put("k" + (i % 10), b("v" + i)));
            if (i % 3 == 0) {
                log.apply(KvReq.remove("k" + (i % 10)));
            }
        }
        assertEquals(0, log.store.tree.keptVersions());
        assertEquals(log.store.nodeCount(), log.store.tree.entryCount());
    }

    @Test
    void badSnapshotsAreRefused() {
        KvStore store = new KvStore();
        KvSnapshotRestorer r = store.beginRestore();
        KvSnapshotChunk orphan = new KvSnapshotChunk(5, 1, Arrays.asList(io.poyang.dtkv.KvNode.of("a.b", b("1"),
                false, 1, 1)), null, null, true);
        assertThrows(IllegalStateException.class, () -> r.accept(orphan));
        KvSnapshotRestorer r2 = store.beginRestore();
        r2.accept(new KvSnapshotChunk(5, 1, null, null, null, false));
        assertThrows(IllegalStateException.class, () -> r2.finish(1));
        assertThrows(IllegalStateException.class, () -> r2.accept(new KvSnapshotChunk(6, 1, null, null, null, true)));
        KvStore open = new KvStore();
        try (KvSnapshot s = open.openSnapshot()) {
            assertThrows(IllegalStateException.class, open::beginRestore);
        }
    }

    @Test
    void locksAndSessionsAreInTheSnapshot() {
        KvLog log = new KvLog();
        log.apply(KvReq.tryLock("l", 1000, 0).session(1, 1));
        log.apply(KvReq.tryLock("l", 1000, 5000).session(2, 2));
        log.apply(KvReq.put("a", b("1")).session(3, 3).seq(1, 1));
        for (int c = 10; c < 300; c++) {
            log.apply(KvReq.tryLock("many" + c, 1000, 0).session(c, c));
            log.apply(KvReq.put("a", b("1")).session(c, c).seq(1, 1));
        }
        KvStore restored = restoreFrom(log.store, 256); // locks and sessions span many chunks
        assertEquals(log.store.describeState(), restored.describeState());
        assertEquals(291, restored.ttlManager().trackedLeaseCount(), "every held lock has its lease deadline");
        // the waiter is granted on the restored replica just as on the original
        KvResp r = restored.apply(log.index + 1, log.term, log.clockMillis, KvReq.unlock("l").session(1, 1));
        assertEquals(KvCode.SUCCESS, r.code());
        assertTrue(restored.locks.get("l").heldBy(2, 2));
    }

    @Test
    void aSessionWithManyLargeAnswersComesInChunksOfAboutTheBudgetAndIsRestoredWhole() {
        KvLog log = new KvLog();
        String parent = "p".repeat(4_000);   // never created: each put fails PARENT_NOT_FOUND naming both keys
        for (long seq = 1; seq <= 2_000; seq++) {
            KvResp r = log.apply(KvReq.put(parent + ".k" + seq, b("v")).session(7, 7).seq(seq, 1));
            assertEquals(KvCode.PARENT_NOT_FOUND, r.code());
        }
        int budget = 1 << 20;
        log.store.config().snapshotChunkBytes = budget;
        KvStore restored = new KvStore();
        int largest = 0;
        int chunks = 0;
        try (KvSnapshot snap = log.store.openSnapshot()) {
            KvSnapshotRestorer r = restored.beginRestore();
            KvSnapshotChunk c;
            do {
                byte[] bytes = EncodeContext.encodeToArray(snap.nextChunk());
                largest = Math.max(largest, bytes.length);
                chunks++;
                c = PbParser.parse(bytes, new KvSnapshotChunk.Decoder());
                r.accept(c);
            } while (!c.isLast());
            r.finish(log.store.lastAppliedTerm());
        }
        // the session's answers hold some 16 MB; one answer is about 8 KB
        assertTrue(largest <= budget + (64 << 10), "a chunk of " + largest + " bytes for a budget of " + budget);
        assertTrue(chunks >= 10, chunks + " chunks");
        assertEquals(log.store.describeState(), restored.describeState(), "every answer of the session is restored");
        // a repeat of an early and of a late seq gets the recorded answer on both replicas
        long index = log.index;
        for (long seq : new long[]{1, 2_000}) {
            KvReq again = KvReq.put(parent + ".k" + seq, b("v")).session(7, 7).seq(seq, 1);
            index++;
            KvResp original = log.store.apply(index, log.term, log.clockMillis, again);
            KvResp copy = restored.apply(index, log.term, log.clockMillis, again);
            assertEquals(original, copy);
            assertEquals(KvCode.PARENT_NOT_FOUND, copy.code());
        }
    }

    @Test
    void settingsThatWouldFailEveryApplyOrNeverEndASnapshotAreRefused() {
        KvConfig sweep = new KvConfig();
        sweep.sessionSweepIntervalMillis = 0;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DtKvService().stateMachine(1, sweep));
        assertTrue(e.getMessage().contains("sessionSweepIntervalMillis"), e.getMessage());
        KvConfig chunk = new KvConfig();
        chunk.snapshotChunkBytes = 0;
        e = assertThrows(IllegalArgumentException.class, () -> new DtKvService().stateMachine(1, chunk));
        assertTrue(e.getMessage().contains("snapshotChunkBytes"), e.getMessage());
        new KvConfig().validate();   // the defaults pass
    }
}
