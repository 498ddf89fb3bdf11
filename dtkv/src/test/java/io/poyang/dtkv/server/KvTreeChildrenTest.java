package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/**
 * The tree's sorted children of a directory and the seek a list page starts with
 * ({@link KvTree#childrenAfter}): which children come after a cursor, at the edges.
 */
class KvTreeChildrenTest {

    private final KvLog log = new KvLog();
    private final KvStore store = log.store;

    private void ok(KvReq r) {
        KvResp resp = log.apply(r);
        assertEquals(KvCode.SUCCESS, resp.code(), () -> r + " -> " + resp);
    }

    private List<String> after(String dir, String startAfter) {
        List<String> out = new ArrayList<>();
        for (Iterator<KvEntry> it = KvTree.childrenAfter(store.tree.live(dir), startAfter); it.hasNext(); ) {
            out.add(it.next().key);
        }
        return out;
    }

    private List<String> sorted(String dir) {
        List<String> out = new ArrayList<>();
        for (KvEntry e : KvTree.sortedChildren(store.tree.live(dir))) {
            out.add(e.key);
        }
        return out;
    }

    @Test
    void childrenAfterACursorAreThoseWhoseKeySortsAfterItInUtf16Order() {
        ok(KvReq.mkdir("d"));
        // made out of order; 'B' (0x42) sorts before 'a' (0x61), "d.a" before "d.a0" before "d.ab"
        for (String k : Arrays.asList("d.ab", "d.B", "d.a0", "d.c", "d.a")) {
            ok(KvReq.put(k, b(k)));
        }
        ok(KvReq.mkdir("d.a1"));
        ok(KvReq.put("d.a1.x", b("grandchild"))); // not a child of d
        List<String> all = Arrays.asList("d.B", "d.a", "d.a0", "d.a1", "d.ab", "d.c");
        assertEquals(all, sorted("d"));
        assertEquals(all, after("d", null), "no cursor: from the first");
        assertEquals(all, after("d", "d"), "the directory's own key sorts before its children");
        assertEquals(all, after("d", "d.A"), "a cursor before every child");
        assertEquals(all.subList(2, 6), after("d", "d.a"), "a cursor on a child excludes it");
        assertEquals(all.subList(3, 6), after("d", "d.a0"));
        assertEquals(all.subList(4, 6), after("d", "d.a1.x"), "a cursor between two children, not one of them");
        assertEquals(Collections.singletonList("d.c"), after("d", "d.ab"));
        assertEquals(Collections.emptyList(), after("d", "d.c"), "a cursor on the last child");
        assertEquals(Collections.emptyList(), after("d", "e"), "a cursor past every child");
        assertEquals(6, store.tree.live("d").childCount());
    }

    @Test
    void aDirectoryWithNoChildrenHasNoneAfterAnyCursorAndHoldsNoMap() {
        ok(KvReq.mkdir("d"));
        KvEntry d = store.tree.live("d");
        assertNull(d.children, "a directory never filled holds no map");
        assertEquals(Collections.emptyList(), after("d", null));
        assertEquals(Collections.emptyList(), after("d", "d.a"));
        ok(KvReq.put("d.a", b("1")));
        ok(KvReq.put("d.b", b("2")));
        ok(KvReq.remove("d.a"));
        assertEquals(Collections.singletonList("d.b"), after("d", null));
        assertEquals(1, d.childCount());
        ok(KvReq.remove("d.b"));
        assertNull(d.children, "the last child's removal drops the map");
        assertEquals(0, d.childCount());
        assertEquals(Collections.emptyList(), after("d", null));
        assertEquals(Collections.emptyList(), sorted("d"));
    }

    @Test
    void aChildRemovedWhileASnapshotIsOpenLeavesTheSortedChildrenAtOnce() {
        ok(KvReq.mkdir("d"));
        ok(KvReq.put("d.a", b("1")));
        ok(KvReq.put("d.b", b("2")));
        try (KvSnapshot snap = store.openSnapshot()) {
            ok(KvReq.remove("d.a"));
            // the snapshot keeps d.a's entry on the index as a tombstone, but it is no child any more
            assertNotNull(store.tree.lookup("d.a"));
            assertEquals(Collections.singletonList("d.b"), after("d", null));
            ok(KvReq.put("d.a", b("again")));  // re-created on the kept entry: a child again
            assertEquals(Arrays.asList("d.a", "d.b"), after("d", null));
            assertTrue(snap.nextChunk().isLast());
        }
        assertEquals(Arrays.asList("d.a", "d.b"), sorted("d"));
    }

    @Test
    void aTempDirectoryExpiringWithItsSubtreeLeavesEveryChildrenMapEmpty() {
        store.ttlManager().onLeaderStart(log.clockMillis);
        ok(KvReq.mkdir("svc"));
        ok(asA(KvReq.makeTempDir("svc.app", 1000)));
        ok(asA(KvReq.mkdir("svc.app.sub")));
        for (String k : Arrays.asList("svc.app.sub.b", "svc.app.sub.a", "svc.app.c")) {
            ok(asA(KvReq.put(k, b(k))));
        }
        KvEntry app = store.tree.live("svc.app");
        KvEntry sub = store.tree.live("svc.app.sub");
        assertEquals(Arrays.asList("svc.app.c", "svc.app.sub"), sorted("svc.app"));
        log.advance(1000);
        List<KvReq> due = store.ttlManager().pollDue(log.clockMillis, 10);
        assertEquals(1, due.size());
        ok(due.get(0));
        assertNull(store.tree.live("svc.app"), "the temp directory expired with all it held");
        assertNull(sub.children, "its subdirectory's children were all removed");
        assertNull(app.children);
        assertEquals(Collections.emptyList(), sorted("svc"));
        assertEquals(1, store.nodeCount());
    }
}
