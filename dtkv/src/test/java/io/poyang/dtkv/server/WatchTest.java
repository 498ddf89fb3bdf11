package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.KvWatchReq;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** Watches: what fires, coalescing for slow watchers, and re-sync after a reconnect or failover. */
class WatchTest {

    private final KvLog log = new KvLog();
    private final KvStore store = log.store;
    private final WatchManager watches = store.watchManager();

    private static KvWatchReq add(String key, long known) {
        return new KvWatchReq(0, false, false, Collections.singletonList(key), new long[]{known});
    }

    /** Delivers everything ready for the watcher (acknowledging each push) and returns the events. */
    private List<KvWatchEvent> drain(long watcher) {
        List<KvWatchEvent> out = new ArrayList<>();
        assertTrue(watches.takeReady().contains(watcher) || watches.pendingCount(watcher) == 0);
        KvWatchNotify n;
        while ((n = watches.nextNotify(watcher)) != null) {
            assertEquals(store.lastAppliedIndex(), n.raftIndex());
            out.addAll(n.events());
            watches.onNotifyDone(watcher, true);
        }
        return out;
    }

    @Test
    void aKeyWatchGetsTheCurrentStateThenEachChange() {
        log.apply(KvReq.put("k", b("1")));
        assertEquals(KvCode.SUCCESS, watches.watch(1, add("k", 0)).code());
        List<KvWatchEvent> first = drain(1);
        assertEquals(1, first.size());
        assertEquals("1", first.get(0).node().valueAsString());
        log.apply(KvReq.put("other", b("x")));
        assertTrue(watches.takeReady().isEmpty(), "an unrelated key does not fire");
        log.apply(KvReq.put("k", b("2")));
        assertEquals("2", drain(1).get(0).node().valueAsString());
        log.apply(KvReq.remove("k"));
        KvWatchEvent removed = drain(1).get(0);
        assertEquals("k", removed.watchKey());
        assertFalse(removed.node().exists());
        log.apply(KvReq.put("k", b("3")));
        assertEquals("3", drain(1).get(0).node().valueAsString(), "a watch on a removed key sees it come back");
    }

    @Test
    void aDirectoryWatchCoversItsWholeSubtreeAndResyncsFirst() {
        log.apply(KvReq.mkdir("cfg"));
        log.apply(KvReq.put("cfg.a", b("1")));
        watches.watch(1, add("cfg", 0));
        List<KvWatchEvent> first = drain(1);
        assertEquals(1, first.size());
        assertTrue(first.get(0).isResync());
        assertEquals(Arrays.asList("cfg.a"), KvStoreOperationsTest.keys(first.get(0).subtree()));
        log.apply(KvReq.mkdir("cfg.db"));
        log.apply(KvReq.put("cfg.db.url", b("jdbc")));
        log.apply(KvReq.put("elsewhere", b("x")));
        List<KvWatchEvent> events = drain(1);
        assertEquals(Arrays.asList("cfg.db", "cfg.db.url"), keysOf(events));
        assertEquals("cfg", events.get(1).watchKey());
    }

    @Test
    void theRootWatchSeesEverythingAndTtlRefreshesDoNotFire() {
        watches.watch(1, add("", 0));
        assertTrue(drain(1).get(0).isResync());
        log.apply(asA(KvReq.putTemp("t", b("1"), 1000)));
        assertEquals(Arrays.asList("t"), keysOf(drain(1)));
        log.apply(asA(KvReq.updateTtl("t", 5000)));
        assertEquals(0, watches.pendingCount(1));
    }

    @Test
    void aSlowWatcherCoalescesToTheLatestStateAndNeverBlocksWrites() {
        log.apply(KvReq.mkdir("d"));
        watches.watch(1, add("d", log.index));
        drain(1);
        log.apply(KvReq.put("d.k", b("0")));
        watches.takeReady();
        KvWatchNotify inFlight = watches.nextNotify(1); // pushed, never acknowledged yet
        assertNotNull(inFlight);
        for (int i = 1; i <= 100_000; i++) {
            log.apply(KvReq.put("d.k" + (i % 10), b("v" + i)));
        }
        assertEquals(10, watches.pendingCount(1), "100,000 writes to 10 keys leave 10 pending keys");
        assertNull(watches.nextNotify(1), "one notification in flight at a time");
        watches.onNotifyDone(1, true);
        List<KvWatchEvent> events = drain(1);
        assertEquals(10, events.size());
        Map<String, String> latest = new HashMap<>();
        for (KvWatchEvent e : events) {
            latest.put(e.node().key(), e.node().valueAsString());
        }
        assertEquals("v100000", latest.get("d.k0"));
        assertEquals("v99999", latest.get("d.k9"));
    }

    @Test
    void largeValuesAreSpreadOverSeveralNotifications() {
        log.apply(KvReq.mkdir("d"));
        watches.watch(1, add("d", log.index));
        drain(1);
        byte[] mib = new byte[1 << 20];
        for (int i = 0; i < 5; i++) {
            log.apply(KvReq.put("d.big" + i, mib));
        }
        watches.takeReady();
        int notifies = 0;
        int events = 0;
        KvWatchNotify n;
        while ((n = watches.nextNotify(1)) != null) {
            assertTrue(n.encodedSize() < (3 << 20), "a notification stays well under a frame: " + n.encodedSize());
            notifies++;
            events += n.events().size();
            watches.onNotifyDone(1, true);
        }
        assertEquals(5, events);
        assertTrue(notifies >= 2, "split over " + notifies);
    }

    @Test
    void anUndeliveredNotificationIsSentAgainWithTheLatestState() {
        log.apply(KvReq.put("k", b("1")));
        watches.watch(1, add("k", log.index));
        log.apply(KvReq.put("k", b("2")));
        watches.takeReady();
        assertEquals("2", watches.nextNotify(1).events().get(0).node().valueAsString());
        log.apply(KvReq.put("k", b("3")));
        watches.onNotifyDone(1, false);
        List<KvWatchEvent> again = drain(1);
        assertEquals(1, again.size());
        assertEquals("3", again.get(0).node().valueAsString());
    }

    @Test
    void reRegisteringWithKnownIndexesSendsOnlyWhatTheClientMissed() {
        log.apply(KvReq.put("a", b("1")));
        log.apply(KvReq.put("b", b("1")));
        long seen = log.index;
        log.apply(KvReq.put("b", b("2")));
        log.apply(KvReq.remove("a"));
        log.apply(KvReq.put("c", b("1")));
        // the client saw a and b at 'seen', c never; it reconnects and sends everything
        KvWatchReq sync = new KvWatchReq(0, false, true, Arrays.asList("a", "b", "c", "untouched"),
                new long[]{seen, seen, 0, 0});
        log.apply(KvReq.put("untouched", b("u")));
        KvWatchReq upToDate = new KvWatchReq(0, false, false, Collections.singletonList("untouched"),
                new long[]{log.index});
        watches.watch(7, upToDate);
        assertEquals(0, watches.pendingCount(7), "a key the client has at its latest index is not re-sent");
        watches.watch(7, sync);
        List<KvWatchEvent> events = drain(7);
        Map<String, KvNode> byKey = new HashMap<>();
        for (KvWatchEvent e : events) {
            byKey.put(e.node().key(), e.node());
        }
        assertFalse(byKey.get("a").exists());
        assertEquals("2", byKey.get("b").valueAsString());
        assertEquals("1", byKey.get("c").valueAsString());
        assertEquals("u", byKey.get("untouched").valueAsString(), "known index 0: the client has nothing");
    }

    @Test
    void aClientFailingOverToAnotherReplicaEndsWithTheLatestValueOfEveryWatchedKey() {
        // Node 1 serves the client; node 2 lags behind, then catches up after the client moved to it.
        Random rnd = new Random(42);
        KvStore node2 = new KvStore();
        String[] keys = {"w.a", "w.b", "w.c", "w.d"};
        log.apply(KvReq.mkdir("w"));
        Map<String, Long> clientIndex = new HashMap<>();
        Map<String, String> clientValue = new HashMap<>();
        watches.watch(1, new KvWatchReq(0, false, true, Arrays.asList(keys), new long[keys.length]));
        for (int i = 0; i < 500; i++) {
            String k = keys[rnd.nextInt(keys.length)];
            log.apply(rnd.nextInt(5) == 0 ? KvReq.remove(k) : KvReq.put(k, b("v" + i)));
            if (i % 7 == 0) {
                clientReceives(store, 1, drainNotifies(store, 1), clientIndex, clientValue);
            }
        }
        // node 1 dies with changes undelivered; node 2 has applied only up to some earlier index
        long lag = log.index - 40;
        for (KvLog.Entry e : log.entries) {
            if (e.index <= lag) {
                e.applyTo(node2);
            }
        }
        long[] known = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            known[i] = clientIndex.getOrDefault(keys[i], 0L);
        }
        node2.watchManager().watch(1, new KvWatchReq(0, false, true, Arrays.asList(keys), known));
        clientReceives(node2, 1, drainNotifies(node2, 1), clientIndex, clientValue);
        // node 2 catches up (the client ignores states older than what it has)
        for (KvLog.Entry e : log.entries) {
            if (e.index > lag) {
                e.applyTo(node2);
                if (e.index % 5 == 0) {
                    clientReceives(node2, 1, drainNotifies(node2, 1), clientIndex, clientValue);
                }
            }
        }
        clientReceives(node2, 1, drainNotifies(node2, 1), clientIndex, clientValue);
        for (String k : keys) {
            KvNode truth = store.nodeOf(k);
            assertEquals(truth.exists() ? truth.valueAsString() : null, clientValue.get(k), k);
        }
    }

    private static List<KvWatchNotify> drainNotifies(KvStore s, long watcher) {
        List<KvWatchNotify> out = new ArrayList<>();
        s.watchManager().takeReady();
        KvWatchNotify n;
        while ((n = s.watchManager().nextNotify(watcher)) != null) {
            out.add(n);
            s.watchManager().onNotifyDone(watcher, true);
        }
        return out;
    }

    /** Notifications of about 4 KB; directory d holds {@code keys} values of 1000 bytes, d.k0 on. */
    private static KvLog smallNotifiesAndADirectoryOf(int keys) {
        KvConfig config = new KvConfig();
        config.maxNotifyBytes = 4096;
        KvLog big = new KvLog(new KvStore(config));
        big.apply(KvReq.mkdir("d"));
        for (int i = 0; i < keys; i++) {
            big.apply(KvReq.put("d.k" + i, new byte[1000]));
        }
        return big;
    }

    @Test
    void aDirectoryTooLargeForOneNotificationGoesInPartsThatTogetherHoldIt() {
        KvLog big = smallNotifiesAndADirectoryOf(40);
        KvConfig config = big.store.config();
        WatchManager wm = big.store.watchManager();
        byte[] value = new byte[1000];
        wm.watch(1, add("d", 0));
        wm.takeReady();
        KvWatchNotify first = wm.nextNotify(1);
        KvWatchEvent head = first.events().get(0);
        assertTrue(head.isResync() && head.hasMore() && !head.isContinued(), "a first part, more to come: " + head);
        assertTrue(head.node().isDir(), "the first part carries the directory's own state");
        assertTrue(first.encodedSize() < config.maxNotifyBytes + 2 * value.length, "bytes: " + first.encodedSize());
        wm.onNotifyDone(1, true);
        Set<String> inParts = new HashSet<>(KvStoreOperationsTest.keys(head.subtree()));
        // between parts: a key already sent changes, one not yet sent goes, a new one comes
        big.apply(KvReq.put("d.k0", b("changed")));
        big.apply(KvReq.remove("d.k39"));
        big.apply(KvReq.put("d.new", b("n")));
        Map<String, String> changes = new HashMap<>();
        int parts = 1;
        boolean ended = false;
        KvWatchNotify n;
        while ((n = wm.nextNotify(1)) != null) {
            assertTrue(n.encodedSize() < config.maxNotifyBytes + 2 * value.length, "bytes: " + n.encodedSize());
            for (KvWatchEvent e : n.events()) {
                if (e.isResync()) {
                    assertFalse(ended, "no part after the last one");
                    assertEquals("d", e.watchKey());
                    assertTrue(e.isContinued(), "a later part says so: " + e);
                    inParts.addAll(KvStoreOperationsTest.keys(e.subtree()));
                    parts++;
                    ended = !e.hasMore();
                } else {
                    changes.put(e.node().key(), e.node().exists() ? e.node().valueAsString() : null);
                }
            }
            wm.onNotifyDone(1, true);
        }
        assertTrue(ended, "the last part came");
        assertTrue(parts >= 5, "40 KB in parts of about 4 KB: " + parts);
        for (int i = 0; i < 39; i++) {
            assertTrue(inParts.contains("d.k" + i), "d.k" + i + " is in a part");
        }
        assertFalse(inParts.contains("d.k39"), "removed before its part was read");
        assertEquals("changed", changes.get("d.k0"));
        assertTrue(changes.containsKey("d.k39") && changes.get("d.k39") == null, "its removal comes as a change");
        assertEquals("n", changes.get("d.new"));
        assertEquals(0, wm.pendingCount(1));
    }

    @Test
    void aPartOfADirectoryResyncThatWasNotDeliveredStartsTheResyncOver() {
        KvLog big = smallNotifiesAndADirectoryOf(20);
        WatchManager wm = big.store.watchManager();
        wm.watch(1, add("d", 0));
        wm.takeReady();
        wm.nextNotify(1);
        wm.onNotifyDone(1, true);
        KvWatchEvent second = wm.nextNotify(1).events().get(0);
        assertTrue(second.isResync() && second.node() == null, "a later part");
        wm.onNotifyDone(1, false);
        KvWatchEvent again = wm.nextNotify(1).events().get(0);
        assertTrue(again.isResync() && again.hasMore() && again.node() != null, "the first part again: " + again);
        assertEquals("d.k0", again.subtree().get(0).key());
    }

    /** What a client does: keep, per key, the state with the highest index seen. */
    private static void clientReceives(KvStore from, long watcher, List<KvWatchNotify> notifies,
                                       Map<String, Long> index, Map<String, String> value) {
        for (KvWatchNotify n : notifies) {
            for (KvWatchEvent e : n.events()) {
                String k = e.node().key();
                if (n.raftIndex() >= index.getOrDefault(k, 0L)) {
                    index.put(k, n.raftIndex());
                    value.put(k, e.node().exists() ? e.node().valueAsString() : null);
                }
            }
        }
    }

    @Test
    void removingWatchesAndWatchersUnlinksEverything() {
        log.apply(KvReq.put("k", b("1")));
        watches.watch(1, add("k", 0));
        watches.watch(2, add("k", 0));
        assertEquals(1, watches.watchedKeyCount());
        assertEquals(2, watches.watcherCount());
        watches.watch(1, new KvWatchReq(0, true, false, Collections.singletonList("k"), new long[1]));
        assertEquals(1, watches.watcherCount());
        watches.removeWatcher(2);
        assertEquals(0, watches.watchedKeyCount());
        assertNull(store.tree.lookup("k").watched);
        log.apply(KvReq.put("k", b("2")));
        assertTrue(watches.takeReady().isEmpty());
        assertEquals(KvCode.INVALID_KEY, watches.watch(3, add("bad..key", 0)).code());
        assertEquals(0, watches.watcherCount());
    }

    private static KvWatchReq register(boolean syncAll, String... keys) {
        return new KvWatchReq(0, false, syncAll, Arrays.asList(keys), new long[keys.length]);
    }

    @Test
    void oneConnectionsWatchesOfAGroupAreCappedAndARefusalChangesNothing() {
        KvConfig config = new KvConfig();
        config.maxWatchesPerConnection = 3;
        KvLog capped = new KvLog(new KvStore(config));
        WatchManager m = capped.store.watchManager();
        assertEquals(KvCode.SUCCESS, m.watch(1, register(false, "a", "b")).code());
        assertEquals(KvCode.SUCCESS, m.watch(1, register(false, "a", "b", "c")).code(), "a and b again: 3 in all");
        KvResp over = m.watch(1, register(false, "d"));
        assertEquals(KvCode.TOO_MANY_WATCHES, over.code());
        assertTrue(over.message().contains("would watch 4 keys and directories") && over.message().contains("limit of 3"),
                over.message());
        assertEquals(3, m.watchedKeyCount());
        // a refused new connection leaves no watcher behind; another connection has room of its own
        assertEquals(KvCode.TOO_MANY_WATCHES, m.watch(2, register(false, "1", "2", "3", "4")).code());
        assertEquals(1, m.watcherCount());
        assertEquals(KvCode.SUCCESS, m.watch(2, register(false, "d", "e", "f")).code());
        // a full re-sync replaces the watches: three other keys fit, four do not and keep the three
        assertEquals(KvCode.SUCCESS, m.watch(1, register(true, "x", "y", "z")).code());
        assertEquals(KvCode.TOO_MANY_WATCHES, m.watch(1, register(true, "p", "q", "r", "s")).code());
        while (m.nextNotify(1) != null) {
            m.onNotifyDone(1, true);   // the current state of x, y and z
        }
        capped.apply(KvReq.put("a", b("1")));
        capped.apply(KvReq.put("p", b("1")));
        capped.apply(KvReq.put("x", b("1")));
        m.takeReady();
        List<String> changed = new ArrayList<>();
        KvWatchNotify n;
        while ((n = m.nextNotify(1)) != null) {
            for (KvWatchEvent e : n.events()) {
                changed.add(e.watchKey());
            }
            m.onNotifyDone(1, true);
        }
        assertEquals(Collections.singletonList("x"), changed);
        // removing always goes through, and makes room
        assertEquals(KvCode.SUCCESS, m.watch(1, new KvWatchReq(0, true, false, Collections.singletonList("y"),
                new long[1])).code());
        assertEquals(KvCode.SUCCESS, m.watch(1, register(false, "d")).code());
    }

    @Test
    void watchesSurviveASnapshotInstallAndResendWhatTheyWatch() {
        log.apply(KvReq.put("k", b("1")));
        watches.watch(1, add("k", log.index));
        KvLog other = new KvLog();
        other.apply(KvReq.put("k", b("from-snapshot")));
        KvSnapshot snap = other.store.openSnapshot();
        KvSnapshotRestorer r = store.beginRestore();
        r.accept(snap.nextChunk());
        r.finish(other.term);
        snap.close();
        List<KvWatchEvent> events = drain(1);
        assertEquals("from-snapshot", events.get(0).node().valueAsString());
        store.apply(store.lastAppliedIndex() + 1, other.term, log.clockMillis, KvReq.put("k", b("after")));
        assertEquals("after", drain(1).get(0).node().valueAsString(), "the new entry is linked to the watch");
    }

    @Test
    void aChangeStaysPendingWhenItsNearestWatchGoesButADirectoryWatchAboveStillCoversIt() {
        log.apply(KvReq.mkdir("cfg"));
        log.apply(KvReq.put("cfg.a", b("1")));
        log.apply(KvReq.put("cfg.b", b("1")));
        // one client, two handles: one on the directory, one on a key in it (one watcher per connection)
        watches.watch(1, add("cfg", 0));
        watches.watch(1, add("cfg.a", 0));
        drain(1);
        KvWatchReq dropKey = new KvWatchReq(0, true, false, Collections.singletonList("cfg.a"), new long[1]);

        // pending when the key's own watch goes
        log.apply(KvReq.put("cfg.a", b("2")));
        watches.watch(1, dropKey);
        List<KvWatchEvent> events = drain(1);
        assertEquals(1, events.size(), "the directory watch still covers cfg.a");
        assertEquals("cfg", events.get(0).watchKey());
        assertEquals("2", events.get(0).node().valueAsString());

        // in flight, not delivered, when the key's own watch goes
        watches.watch(1, add("cfg.a", log.index));
        log.apply(KvReq.put("cfg.a", b("3")));
        watches.takeReady();
        assertEquals("cfg.a", watches.nextNotify(1).events().get(0).watchKey());
        watches.watch(1, dropKey);
        watches.onNotifyDone(1, false);
        events = drain(1);
        assertEquals(1, events.size(), "an undelivered change the directory watch covers is sent again");
        assertEquals("cfg", events.get(0).watchKey());
        assertEquals("3", events.get(0).node().valueAsString());
    }

    @Test
    void aFullResyncThatDropsSeveralWatchesReroutesTheirPendingChangesOrDropsThem() {
        log.apply(KvReq.mkdir("cfg"));
        log.apply(KvReq.put("cfg.a", b("1")));
        log.apply(KvReq.put("cfg.b", b("1")));
        log.apply(KvReq.put("other", b("1")));
        for (String k : new String[]{"cfg", "cfg.a", "cfg.b", "other"}) {
            watches.watch(1, add(k, 0));
        }
        drain(1);
        log.apply(KvReq.put("cfg.a", b("2")));
        log.apply(KvReq.put("cfg.b", b("2")));
        log.apply(KvReq.put("other", b("2")));
        // the client now watches only the directory: a full re-sync with that one key
        watches.watch(1, new KvWatchReq(0, false, true, Collections.singletonList("cfg"), new long[]{log.index}));
        assertEquals(1, watches.watchedKeyCount());
        List<KvWatchEvent> events = drain(1);
        List<String> keys = keysOf(events);
        assertTrue(keys.contains("cfg.a") && keys.contains("cfg.b") && !keys.contains("other"), "the directory watch"
                + " carries its keys' changes; the change of 'other', watched no more, is dropped: " + events);
        for (KvWatchEvent e : events) {
            assertEquals("cfg", e.watchKey());
            if (!e.node().isDir()) {
                assertEquals("2", e.node().valueAsString());
            }
        }
    }

    private static List<String> keysOf(List<KvWatchEvent> events) {
        List<String> out = new ArrayList<>();
        for (KvWatchEvent e : events) {
            out.add(e.node().key());
        }
        return out;
    }
}
