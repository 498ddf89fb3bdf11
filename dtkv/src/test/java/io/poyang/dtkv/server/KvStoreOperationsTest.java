package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.raft.store.NoImpossibleStates;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static io.poyang.dtkv.server.KvLog.asA;
import static io.poyang.dtkv.server.KvLog.asB;
import static io.poyang.dtkv.server.KvLog.b;
import static org.junit.jupiter.api.Assertions.*;

/** Every write and read, with the rules of dtkv/README.md, and the codes they fail with. */
@ExtendWith(NoImpossibleStates.class)
class KvStoreOperationsTest {

    private KvLog log;
    private KvStore store;

    @BeforeEach
    void setUp() {
        log = new KvLog();
        store = log.store;
    }

    private KvResp ok(KvReq r) {
        KvResp resp = log.apply(r);
        assertEquals(KvCode.SUCCESS, resp.code(), () -> r + " -> " + resp);
        assertEquals(log.index, resp.raftIndex());
        return resp;
    }

    private KvResp fails(KvCode code, KvReq r) {
        String before = store.describeState().replaceFirst("applied=\\d+ term=\\d+ clock=\\d+", "");
        KvResp resp = log.apply(r);
        assertEquals(code, resp.code(), () -> r + " -> " + resp);
        assertNotNull(resp.message());
        assertFalse(resp.message().isEmpty());
        assertEquals(before, store.describeState().replaceFirst("applied=\\d+ term=\\d+ clock=\\d+", ""),
                "a failed write changes nothing");
        return resp;
    }

    private KvNode node(String key) {
        return store.get(key).node();
    }

    @Test
    void putCreatesThenUpdatesKeepingTheCreateIndex() {
        KvResp r = ok(KvReq.put("a", b("1")));
        assertNull(r.node(), "a put answers with its index alone");
        assertEquals(KvNode.of("a", b("1"), false, 1, 1), node("a"));
        ok(KvReq.put("a", b("2")));
        assertEquals(KvNode.of("a", b("2"), false, 1, 2), node("a"));
        ok(KvReq.put("empty", null));
        assertEquals(0, node("empty").value().length);
        assertTrue(node("empty").exists());
        assertEquals(2, store.nodeCount());
    }

    @Test
    void putNeedsAnExistingParentDirectory() {
        fails(KvCode.PARENT_NOT_FOUND, KvReq.put("a.b", b("1")));
        ok(KvReq.put("a", b("v")));
        fails(KvCode.PARENT_NOT_DIR, KvReq.put("a.b", b("1")));
        ok(KvReq.mkdir("d"));
        ok(KvReq.put("d.b", b("1")));
        fails(KvCode.IS_A_DIR, KvReq.put("d", b("1")));
    }

    @Test
    void invalidKeysAndLimitsAreRefused() {
        for (String k : new String[]{"", ".a", "a.", "a..b", "a\nb"}) {
            fails(KvCode.INVALID_KEY, KvReq.put(k, b("1")));
        }
        fails(KvCode.INVALID_KEY, KvReq.put(null, b("1")));
        char[] longKey = new char[KvKeys.MAX_KEY_BYTES + 1];
        Arrays.fill(longKey, 'k');
        fails(KvCode.KEY_TOO_LONG, KvReq.put(new String(longKey), b("1")));
        fails(KvCode.VALUE_TOO_LARGE, KvReq.put("a", new byte[KvKeys.MAX_VALUE_BYTES + 1]));
        ok(KvReq.put("a", new byte[KvKeys.MAX_VALUE_BYTES]));
    }

    @Test
    void mkdirIsIdempotentAndRefusesValues() {
        KvResp first = ok(KvReq.mkdir("d"));
        assertTrue(first.node().isDir());
        KvResp again = ok(KvReq.mkdir("d"));
        assertEquals(first.node(), again.node(), "an existing directory is returned unchanged");
        ok(KvReq.put("v", b("1")));
        fails(KvCode.NOT_A_DIR, KvReq.mkdir("v"));
        fails(KvCode.PARENT_NOT_FOUND, KvReq.mkdir("x.y"));
        fails(KvCode.PARENT_NOT_DIR, KvReq.mkdir("v.y"));
        ok(KvReq.mkdir("d.e"));
        assertEquals(2, store.list("d").nodes().size() + 1);
    }

    @Test
    void removeValuesAndEmptyDirectoriesOnly() {
        fails(KvCode.NOT_FOUND, KvReq.remove("a"));
        ok(KvReq.mkdir("d"));
        ok(KvReq.put("d.x", b("1")));
        fails(KvCode.DIR_NOT_EMPTY, KvReq.remove("d"));
        ok(KvReq.remove("d.x"));
        ok(KvReq.remove("d"));
        assertFalse(node("d").exists());
        assertEquals(0, store.nodeCount());
        // re-created keys get a new create index
        ok(KvReq.mkdir("d"));
        assertEquals(log.index, node("d").createIndex());
    }

    @Test
    void batchPutIsAllOrNothing() {
        ok(KvReq.mkdir("d"));
        KvResp r = fails(KvCode.PARENT_NOT_FOUND, KvReq.batchPut(Arrays.asList("d.a", "d.b", "x.c", "d.e"),
                Arrays.asList(b("1"), b("2"), b("3"), b("4"))));
        assertEquals(3, r.failedPosition());
        assertFalse(node("d.a").exists(), "nothing of a failed batch is applied");
        ok(KvReq.batchPut(Arrays.asList("d.a", "d.b", "d.a"), Arrays.asList(b("1"), b("2"), b("3"))));
        assertEquals("3", node("d.a").valueAsString(), "a key given twice takes the later value");
        assertEquals(log.index, node("d.b").updateIndex(), "a batch is one index");
        fails(KvCode.INVALID_REQUEST, KvReq.batchPut(Arrays.asList("d.a"), Collections.<byte[]>emptyList()));
        fails(KvCode.IS_A_DIR, KvReq.batchPut(Arrays.asList("d.a", "d"), Arrays.asList(b("1"), b("2"))));
        List<String> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i <= KvKeys.MAX_BATCH_KEYS; i++) {
            keys.add("k" + i);
            values.add(b("v"));
        }
        fails(KvCode.BATCH_TOO_LARGE, KvReq.batchPut(keys, values));
    }

    @Test
    void batchRemoveIsAllOrNothingAndInOrder() {
        ok(KvReq.mkdir("d"));
        ok(KvReq.batchPut(Arrays.asList("d.a", "d.b", "top"), Arrays.asList(b("1"), b("2"), b("3"))));
        KvResp r = fails(KvCode.DIR_NOT_EMPTY, KvReq.batchRemove(Arrays.asList("top", "d.a", "d")));
        assertEquals(3, r.failedPosition());
        fails(KvCode.NOT_FOUND, KvReq.batchRemove(Arrays.asList("top", "top")));
        fails(KvCode.NOT_FOUND, KvReq.batchRemove(Arrays.asList("top", "nope")));
        ok(KvReq.batchRemove(Arrays.asList("d.a", "d.b", "d", "top")));
        assertEquals(0, store.nodeCount());
        ok(KvReq.put("ok", b("1")));
        assertEquals(2, fails(KvCode.INVALID_KEY, KvReq.batchRemove(Arrays.asList("ok", "bad."))).failedPosition());
        assertTrue(node("ok").exists());
        fails(KvCode.BATCH_TOO_LARGE, KvReq.batchRemove(Collections.nCopies(KvKeys.MAX_BATCH_KEYS + 1, "k")));
    }

    @Test
    void compareAndSet() {
        ok(KvReq.compareAbsentAndSet("a", b("1")));
        fails(KvCode.CAS_MISMATCH, KvReq.compareAbsentAndSet("a", b("2")));
        fails(KvCode.CAS_MISMATCH, KvReq.compareAndSet("a", b("0"), b("2")));
        ok(KvReq.compareAndSet("a", b("1"), b("2")));
        assertEquals("2", node("a").valueAsString());
        fails(KvCode.CAS_MISMATCH, KvReq.compareAndSet("missing", b(""), b("2")));
        ok(KvReq.put("e", null));
        ok(KvReq.compareAndSet("e", null, b("x")));
        ok(KvReq.mkdir("d"));
        fails(KvCode.IS_A_DIR, KvReq.compareAndSet("d", b(""), b("x")));
        fails(KvCode.PARENT_NOT_FOUND, KvReq.compareAbsentAndSet("x.y", b("1")));
        fails(KvCode.INVALID_KEY, KvReq.compareAndSet("a..b", b(""), b("1")));
    }

    @Test
    void tempNodesBelongToTheirOwner() {
        fails(KvCode.INVALID_REQUEST, KvReq.putTemp("t", b("1"), 1000)); // no client id
        fails(KvCode.INVALID_TTL, asA(KvReq.putTemp("t", b("1"), 0)));
        fails(KvCode.INVALID_TTL, asA(KvReq.putTemp("t", b("1"), KvKeys.MAX_TTL_MILLIS + 1)));
        KvResp r = ok(asA(KvReq.putTemp("t", b("1"), 1000)));
        assertTrue(r.node().isTemp());
        assertEquals(log.clockMillis + 1000, r.node().expireAtMillis());
        fails(KvCode.NOT_OWNER, asB(KvReq.putTemp("t", b("2"), 1000)));
        fails(KvCode.NOT_OWNER, asB(KvReq.put("t", b("2"))));
        fails(KvCode.NOT_OWNER, KvReq.put("t", b("2")));
        fails(KvCode.NOT_OWNER, asB(KvReq.remove("t")));
        fails(KvCode.NOT_OWNER, asB(KvReq.compareAndSet("t", b("1"), b("2"))));
        fails(KvCode.NOT_OWNER, asB(KvReq.updateTtl("t", 5000)));
        // a plain put by the owner changes the value and keeps the TTL
        log.advance(10);
        ok(asA(KvReq.put("t", b("3"))));
        assertEquals(r.node().expireAtMillis(), node("t").expireAtMillis());
        ok(KvReq.put("p", b("1")));
        fails(KvCode.NOT_TEMP, asA(KvReq.putTemp("p", b("2"), 1000)));
        fails(KvCode.NOT_TEMP, asA(KvReq.updateTtl("p", 1000)));
        fails(KvCode.NOT_FOUND, asA(KvReq.updateTtl("nope", 1000)));
        ok(KvReq.mkdir("d"));
        fails(KvCode.IS_A_DIR, asA(KvReq.putTemp("d", b("1"), 1000)));
        ok(asA(KvReq.remove("t")));
    }

    @Test
    void tempDirectoriesOwnTheirSubtree() {
        ok(asA(KvReq.makeTempDir("svc", 5000)));
        ok(asA(KvReq.put("svc.n1", b("addr"))));
        ok(asA(KvReq.mkdir("svc.sub")));
        ok(asA(KvReq.putTemp("svc.sub.t", b("x"), 100)));
        fails(KvCode.NOT_OWNER, asB(KvReq.put("svc.n2", b("addr"))));
        fails(KvCode.NOT_OWNER, asB(KvReq.mkdir("svc.other")));
        fails(KvCode.NOT_OWNER, asB(KvReq.put("svc.n1", b("hijack"))));
        fails(KvCode.NOT_OWNER, asB(KvReq.remove("svc.n1")));
        fails(KvCode.NOT_OWNER, asB(KvReq.batchPut(Arrays.asList("svc.n1"), Arrays.asList(b("x")))));
        fails(KvCode.NOT_OWNER, asB(KvReq.makeTempDir("svc", 5000)));
        // makeTempDir again by the owner refreshes the TTL
        log.advance(1000);
        KvResp again = ok(asA(KvReq.makeTempDir("svc", 5000)));
        assertEquals(log.clockMillis + 5000, again.node().expireAtMillis());
        ok(KvReq.mkdir("plain"));
        fails(KvCode.NOT_TEMP, asA(KvReq.makeTempDir("plain", 5000)));
        ok(KvReq.put("v", b("1")));
        fails(KvCode.NOT_A_DIR, asA(KvReq.makeTempDir("v", 5000)));
        fails(KvCode.INVALID_TTL, asA(KvReq.makeTempDir("t2", -5)));
        fails(KvCode.PARENT_NOT_FOUND, asA(KvReq.makeTempDir("x.y", 5)));
    }

    @Test
    void readsReturnCurrentStateAtTheAppliedIndex() {
        ok(KvReq.mkdir("d"));
        ok(KvReq.batchPut(Arrays.asList("d.b", "d.a", "d.c"), Arrays.asList(b("2"), b("1"), b("3"))));
        ok(KvReq.mkdir("d.z"));
        KvResp list = store.list("d");
        assertEquals(Arrays.asList("d.a", "d.b", "d.c", "d.z"), keys(list.nodes()));
        assertTrue(list.nodes().get(3).isDir());
        assertEquals(log.index, list.raftIndex());
        assertEquals(Arrays.asList("d"), keys(store.list("").nodes()));
        assertEquals(KvCode.NOT_FOUND, store.list("nope").code());
        assertEquals(KvCode.NOT_A_DIR, store.list("d.a").code());
        assertEquals(KvCode.INVALID_KEY, store.list("d.").code());
        KvResp g = store.get("nope");
        assertEquals(KvCode.SUCCESS, g.code(), "absence is not an error for get");
        assertFalse(g.node().exists());
        assertEquals(KvCode.INVALID_KEY, store.get("").code());
        KvResp bg = store.batchGet(Arrays.asList("d.a", "nope", "d"));
        assertEquals(3, bg.nodes().size());
        assertEquals("1", bg.nodes().get(0).valueAsString());
        assertFalse(bg.nodes().get(1).exists());
        assertTrue(bg.nodes().get(2).isDir());
        KvResp bad = store.batchGet(Arrays.asList("d.a", ".x"));
        assertEquals(KvCode.INVALID_KEY, bad.code());
        assertEquals(2, bad.failedPosition());
        assertEquals(KvCode.BATCH_TOO_LARGE, store.batchGet(Collections.nCopies(KvKeys.MAX_BATCH_KEYS + 1, "k")).code());
        assertEquals(store.get("d.a"), store.read(KvReq.get("d.a")));
        assertEquals(store.list(""), store.read(KvReq.list("")));
        assertEquals(KvCode.INVALID_REQUEST, store.read(KvReq.put("a", b("1"))).code());
    }

    @Test
    void listPagesCoverTheDirectoryInKeyOrderWithoutRepeatsAndSayWhetherMoreFollow() {
        ok(KvReq.mkdir("d"));
        // created out of key order, so the page must pick the smallest keys, not the first created
        List<String> created = Arrays.asList("d.g", "d.c", "d.j", "d.a", "d.e", "d.i", "d.b", "d.h", "d.d", "d.f");
        for (String k : created) {
            ok(KvReq.put(k, b(k)));
        }
        List<String> listed = new ArrayList<>();
        List<Boolean> mores = new ArrayList<>();
        String after = null;
        do {
            KvResp page = store.listPage("d", after, 3);
            assertEquals(KvCode.SUCCESS, page.code(), page::toString);
            assertEquals(log.index, page.raftIndex());
            listed.addAll(keys(page.nodes()));
            mores.add(page.more());
            after = page.nodes().get(page.nodes().size() - 1).key();
        } while (mores.get(mores.size() - 1));
        assertEquals(Arrays.asList("d.a", "d.b", "d.c", "d.d", "d.e", "d.f", "d.g", "d.h", "d.i", "d.j"), listed);
        assertEquals(Arrays.asList(true, true, true, false), mores);
        assertEquals(Collections.singletonList("d.b"), keys(store.listPage("d", "d.a", 1).nodes()));

        // a start key that does not exist starts at the next one; one past the end gives an empty last page
        assertEquals(Arrays.asList("d.c", "d.d"), keys(store.listPage("d", "d.bb", 2).nodes()));
        KvResp end = store.listPage("d", "d.z", 2);
        assertTrue(end.nodes().isEmpty());
        assertFalse(end.more());
        // no limit: everything after the start key, in one page since it is small
        KvResp rest = store.listPage("d", "d.g", 0);
        assertEquals(Arrays.asList("d.h", "d.i", "d.j"), keys(rest.nodes()));
        assertFalse(rest.more());
        // a limit alone pages from the first child, and the request decoder routes both kinds
        assertEquals(store.listPage("d", null, 4), store.read(KvReq.listPage("d", null, 4)));
        assertEquals(store.list("d"), store.read(KvReq.list("d")));
        assertEquals(store.list("d").nodes(), store.listPage("d", null, 0).nodes());

        assertEquals(KvCode.INVALID_REQUEST, store.listPage("d", null, -1).code());
        assertEquals(KvCode.NOT_FOUND, store.listPage("nope", null, 5).code());
        assertEquals(KvCode.NOT_A_DIR, store.listPage("d.a", null, 5).code());
        assertEquals(KvCode.INVALID_KEY, store.listPage("d.", null, 5).code());
    }

    @Test
    void aPageStartsAfterItsCursorWhenTheCursorKeyWasRemovedOrKeysCameBeforeOrAfterItBetweenPages() {
        ok(KvReq.mkdir("d"));
        for (String k : Arrays.asList("d.e", "d.a", "d.d", "d.b", "d.c")) {
            ok(KvReq.put(k, b(k)));
        }
        KvResp first = store.listPage("d", null, 2);
        assertEquals(Arrays.asList("d.a", "d.b"), keys(first.nodes()));
        assertTrue(first.more());
        String cursor = "d.b";
        ok(KvReq.remove(cursor));               // the cursor key itself is gone
        ok(KvReq.put("d.aa", b("before")));     // before the cursor: not listed, the pages passed it
        ok(KvReq.put("d.bb", b("after")));      // just after the cursor: the next page starts with it
        ok(KvReq.put("d.f", b("at the end")));  // after every child listed so far: the last page has it
        KvResp second = store.listPage("d", cursor, 2);
        assertEquals(Arrays.asList("d.bb", "d.c"), keys(second.nodes()));
        assertTrue(second.more());
        // the last page holds exactly the children left: no more, though it is full
        KvResp last = store.listPage("d", "d.c", 3);
        assertEquals(Arrays.asList("d.d", "d.e", "d.f"), keys(last.nodes()));
        assertFalse(last.more());
        // a page cut by its limit right before the last child says more
        KvResp cut = store.listPage("d", "d.c", 2);
        assertEquals(Arrays.asList("d.d", "d.e"), keys(cut.nodes()));
        assertTrue(cut.more());
        // re-created after its removal, the cursor key is listed by a page from before it only
        ok(KvReq.put(cursor, b("again")));
        assertEquals(Arrays.asList("d.bb", "d.c"), keys(store.listPage("d", cursor, 2).nodes()));
        assertEquals(Arrays.asList("d.b", "d.bb"), keys(store.listPage("d", "d.aa", 2).nodes()));
    }

    @Test
    void aDirectoryThatIsEmptyOrWasEmptiedListsAsOneEmptyLastPage() {
        ok(KvReq.mkdir("never"));
        KvResp never = store.listPage("never", null, 5);
        assertEquals(KvCode.SUCCESS, never.code());
        assertTrue(never.nodes().isEmpty());
        assertFalse(never.more());
        assertTrue(store.listPage("never", "never.x", 0).nodes().isEmpty());
        assertTrue(store.list("never").nodes().isEmpty());

        ok(KvReq.mkdir("emptied"));
        ok(KvReq.put("emptied.a", b("1")));
        ok(KvReq.put("emptied.b", b("2")));
        ok(KvReq.batchRemove(Arrays.asList("emptied.a", "emptied.b")));
        KvResp emptied = store.listPage("emptied", null, 5);
        assertTrue(emptied.nodes().isEmpty());
        assertFalse(emptied.more());
        assertTrue(store.listPage("emptied", "emptied.a", 1).nodes().isEmpty());
        assertTrue(store.list("emptied").nodes().isEmpty());
        ok(KvReq.remove("emptied"));            // no children left, so it can go
        ok(KvReq.put("never.c", b("3")));       // and a directory that never had a child can get one
        assertEquals(Collections.singletonList("never.c"), keys(store.listPage("never", null, 5).nodes()));
    }

    @Test
    void aPageWithoutALimitHoldsAtMostTheDefaultNumberOfChildren() {
        ok(KvReq.mkdir("many"));
        int children = KvKeys.DEFAULT_LIST_PAGE_NODES + 5;
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < children; i++) {
            keys.add(String.format("many.k%06d", children - 1 - i));   // created in reverse key order
        }
        ok(KvReq.batchPut(keys.subList(0, KvKeys.MAX_BATCH_KEYS), Collections.nCopies(KvKeys.MAX_BATCH_KEYS, b("v"))));
        ok(KvReq.batchPut(keys.subList(KvKeys.MAX_BATCH_KEYS, children), Collections.nCopies(5, b("v"))));
        KvResp first = store.listPage("many", null, 0);
        assertEquals(KvKeys.DEFAULT_LIST_PAGE_NODES, first.nodes().size());
        assertTrue(first.more());
        assertEquals("many.k000000", first.nodes().get(0).key());
        String last = first.nodes().get(first.nodes().size() - 1).key();
        assertEquals(String.format("many.k%06d", KvKeys.DEFAULT_LIST_PAGE_NODES - 1), last);
        KvResp second = store.listPage("many", last, 0);
        assertEquals(5, second.nodes().size());
        assertFalse(second.more());
    }

    @Test
    void aDirectoryOverOneAnswerFailsWholeButListsInPagesOfAboutFourMiB() {
        ok(KvReq.mkdir("big"));
        byte[] value = new byte[3 << 19];   // 1.5 MiB: two fit a 4 MiB page, three do not
        List<String> all = new ArrayList<>();
        for (int i = 0; i < 7; i++) {       // 10.5 MiB in all, over one 8 MiB answer
            String k = "big.k" + i;
            ok(KvReq.put(k, value));
            all.add(k);
        }
        KvResp whole = store.list("big");
        assertEquals(KvCode.ANSWER_TOO_LARGE, whole.code());
        assertTrue(whole.message().contains("listPage"), whole.message());
        KvResp batch = store.batchGet(all);
        assertEquals(KvCode.ANSWER_TOO_LARGE, batch.code());
        assertTrue(batch.message().contains("fewer keys"), batch.message());
        assertEquals(KvCode.SUCCESS, store.batchGet(all.subList(0, 5)).code(), "7.5 MiB still fits one answer");

        List<String> listed = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        String after = null;
        KvResp page;
        do {
            page = store.listPage("big", after, 0);
            assertEquals(KvCode.SUCCESS, page.code());
            assertTrue(page.encodedSize() < KvKeys.MAX_ANSWER_BYTES, "a page fits one answer: " + page.encodedSize());
            sizes.add(page.nodes().size());
            listed.addAll(keys(page.nodes()));
            after = listed.get(listed.size() - 1);
        } while (page.more());
        assertEquals(all, listed);
        assertEquals(Arrays.asList(2, 2, 2, 1), sizes);

        // a single child over the page size still comes, alone
        ok(KvReq.mkdir("huge"));
        ok(KvReq.put("huge.a", new byte[KvKeys.MAX_VALUE_BYTES]));
        ok(KvReq.put("huge.b", b("small")));
        KvResp first = store.listPage("huge", null, 0);
        assertEquals(Collections.singletonList("huge.a"), keys(first.nodes()));
        assertTrue(first.more());
        assertEquals(Collections.singletonList("huge.b"), keys(store.listPage("huge", "huge.a", 0).nodes()));
    }

    @Test
    void readsAreNotAppliedAndUnknownOpsAreInvalid() {
        fails(KvCode.INVALID_REQUEST, KvReq.get("a"));
        fails(KvCode.INVALID_REQUEST, new KvReq());
        assertThrows(IllegalArgumentException.class, () -> store.apply(log.index, log.term, log.clockMillis, KvReq.put("a", null)));
        store.applyOther(log.index + 1, log.term, log.clockMillis + 5);
        assertEquals(log.clockMillis + 5, store.logClockMillis());
    }

    @Test
    void logClockNeverGoesBack() {
        log.advance(1000);
        ok(KvReq.put("a", b("1")));
        long clock = store.logClockMillis();
        log.advance(-500); // a new leader whose clock is behind
        ok(KvReq.put("b", b("1")));
        assertEquals(clock, store.logClockMillis());
    }

    static List<String> keys(List<KvNode> nodes) {
        List<String> out = new ArrayList<>();
        for (KvNode n : nodes) {
            out.add(n.key());
        }
        return out;
    }
}
