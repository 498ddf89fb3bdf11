package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvListPage;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.client.KvCallback;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvLock;
import io.poyang.net.RemoteException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every operation through KvClient on three nodes (sync, callback, future) and every error code end to end. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvClientOperationsTest {

    @TempDir
    static Path dir;
    private KvTestCluster c;
    private KvClient kv;
    private KvClient other;

    @BeforeAll
    void start() {
        c = new KvTestCluster(dir, 3).start();
        kv = c.client();
        other = c.client();
    }

    @AfterAll
    void stop() throws Exception {
        c.checkReplicasEqual();
        c.close();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private <T> T viaCallback(java.util.function.Consumer<KvCallback<T>> op) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        AtomicReference<String> thread = new AtomicReference<>();
        op.accept(new KvCallback<T>() {
            @Override
            public void onSuccess(T result) {
                thread.set(Thread.currentThread().getName());
                f.complete(result);
            }

            @Override
            public void onFailure(Throwable error) {
                thread.set(Thread.currentThread().getName());
                f.completeExceptionally(error);
            }
        });
        T r = f.get(10, TimeUnit.SECONDS);
        assertFalse(thread.get().contains("-io-"), "callbacks run off the I/O thread, ran on " + thread.get());
        return r;
    }

    @Test
    void everyOperationSyncAsyncAndWithACallback() throws Exception {
        assertTrue(kv.mkdir("ops") > 0);
        assertTrue(kv.mkdirAsync("ops.dir").get(10, TimeUnit.SECONDS) > 0);
        long mk = this.<Long>viaCallback(cb -> kv.mkdir("ops.dir2", cb));
        assertTrue(mk > 0);
        long i1 = kv.put("ops.a", b("1"));
        long i2 = kv.putAsync("ops.b", b("2")).get(10, TimeUnit.SECONDS);
        long i3 = this.<Long>viaCallback(cb -> kv.put("ops.c", b("3"), cb));
        assertTrue(i1 < i2 && i2 < i3, "raft indexes grow");
        KvNode a = kv.get("ops.a");
        assertEquals("1", a.valueAsString());
        assertEquals(i1, a.createIndex());
        assertEquals(i1, a.updateIndex());
        assertEquals("2", kv.getAsync("ops.b").get(10, TimeUnit.SECONDS).valueAsString());
        KvNode cNode = this.<KvNode>viaCallback(cb -> kv.get("ops.c", cb));
        assertEquals("3", cNode.valueAsString());
        assertFalse(kv.get("ops.missing").exists());

        kv.batchPut(Arrays.asList("ops.a", "ops.d"), Arrays.asList(b("10"), b("40")));
        kv.batchPutAsync(Arrays.asList("ops.e"), Arrays.asList(b("50"))).get(10, TimeUnit.SECONDS);
        long bp = this.<Long>viaCallback(cb -> kv.batchPut(Arrays.asList("ops.f"), Arrays.asList(b("60")), cb));
        assertTrue(bp > 0);
        List<KvNode> got = kv.batchGet(Arrays.asList("ops.a", "ops.d", "ops.nope"));
        assertEquals("10", got.get(0).valueAsString());
        assertEquals("40", got.get(1).valueAsString());
        assertFalse(got.get(2).exists());
        assertEquals(3, kv.batchGetAsync(Arrays.asList("ops.a", "ops.e", "ops.f")).get(10, TimeUnit.SECONDS).size());
        assertEquals(1, this.<List<KvNode>>viaCallback(cb -> kv.batchGet(Collections.singletonList("ops.a"), cb)).size());

        List<KvNode> children = kv.list("ops");
        List<String> names = new ArrayList<>();
        for (KvNode n : children) {
            names.add(n.key());
        }
        assertEquals(Arrays.asList("ops.a", "ops.b", "ops.c", "ops.d", "ops.dir", "ops.dir2", "ops.e", "ops.f"), names);
        assertTrue(kv.list("").size() >= 1);
        assertEquals(8, kv.listAsync("ops").get(10, TimeUnit.SECONDS).size());
        assertEquals(8, this.<List<KvNode>>viaCallback(cb -> kv.list("ops", cb)).size());

        assertTrue(kv.compareAndSet("ops.a", b("10"), b("11")));
        assertFalse(kv.compareAndSet("ops.a", b("10"), b("12")));
        assertTrue(kv.compareAndSet("ops.new", null, b("n")));
        assertFalse(kv.compareAndSetAsync("ops.new", null, b("n2")).get(10, TimeUnit.SECONDS));
        assertTrue(this.<Boolean>viaCallback(cb -> kv.compareAndSet("ops.new", b("n"), b("n3"), cb)));
        assertEquals("n3", kv.getString("ops.new"));

        kv.remove("ops.new");
        kv.removeAsync("ops.f").get(10, TimeUnit.SECONDS);
        this.<Long>viaCallback(cb -> kv.remove("ops.e", cb));
        kv.batchRemove(Arrays.asList("ops.dir2", "ops.d"));
        kv.batchRemoveAsync(Collections.singletonList("ops.c")).get(10, TimeUnit.SECONDS);
        this.<Long>viaCallback(cb -> kv.batchRemove(Collections.singletonList("ops.b"), cb));
        assertFalse(kv.get("ops.b").exists());

        kv.putTemp("ops.t1", b("t"), 60_000);
        kv.putTempAsync("ops.t2", b("t"), 60_000).get(10, TimeUnit.SECONDS);
        this.<Long>viaCallback(cb -> kv.putTemp("ops.t3", b("t"), 60_000, cb));
        KvNode t1 = kv.get("ops.t1");
        assertTrue(t1.isTemp());
        assertEquals(60_000, t1.ttlMillis());
        kv.makeTempDir("ops.td", 60_000);
        kv.put("ops.td.x", b("x"));
        kv.makeTempDirAsync("ops.td2", 60_000).get(10, TimeUnit.SECONDS);
        this.<Long>viaCallback(cb -> kv.makeTempDir("ops.td3", 60_000, cb));
        kv.updateTtl("ops.t1", 120_000);
        kv.updateTtlAsync("ops.t2", 120_000).get(10, TimeUnit.SECONDS);
        this.<Long>viaCallback(cb -> kv.updateTtl("ops.t3", 120_000, cb));
        assertEquals(120_000, kv.get("ops.t1").ttlMillis());

        KvLock lock = kv.lock("ops-lock");
        assertTrue(lock.tryLock(10_000, 0));
        long token = lock.fencingToken();
        assertTrue(token > 0);
        lock.updateLease(20_000);
        lock.updateLeaseAsync(20_000).get(10, TimeUnit.SECONDS);
        assertEquals(token, lock.fencingToken(), "a renewal keeps the token");
        KvLock theirs = other.lock("ops-lock");
        assertFalse(theirs.tryLock(10_000, 0), "held by another: not acquired without waiting");
        CompletableFuture<Boolean> waiting = theirs.tryLockAsync(10_000, 20_000);
        lock.unlockAsync().get(10, TimeUnit.SECONDS);
        assertTrue(waiting.get(20, TimeUnit.SECONDS), "the waiter is granted by push");
        assertTrue(theirs.fencingToken() > token, "a later grant has a higher fencing token");
        theirs.unlock();

        KvLock cbLock = kv.lock("ops-lock-cb");
        assertTrue(this.<Boolean>viaCallback(cb -> cbLock.tryLock(10_000, 0, cb)));
        long cbToken = cbLock.fencingToken();
        this.<Void>viaCallback(cb -> cbLock.updateLease(20_000, cb));
        assertEquals(cbToken, cbLock.fencingToken());
        this.<Void>viaCallback(cb -> cbLock.unlock(cb));
        assertFalse(cbLock.isHeld());
        CompletableFuture<Throwable> refused = new CompletableFuture<>();
        cbLock.unlock(new KvCallback<Void>() {
            @Override
            public void onSuccess(Void result) {
                refused.complete(null);
            }

            @Override
            public void onFailure(Throwable error) {
                refused.complete(error);
            }
        });
        Throwable e = refused.get(10, TimeUnit.SECONDS);
        assertTrue(e instanceof KvException && ((KvException) e).kvCode() == KvCode.LOCK_NOT_HELD, "got " + e);
    }

    /** Sends a hand-made write straight through the raft client (for the codes KvClient never provokes). */
    private static void rawWrite(KvClient client, KvReq req, KvCode expected) throws Exception {
        raw(client, KvCommands.KV_WRITE, req, expected);
    }

    private static void raw(KvClient client, int command, KvReq req, KvCode expected) throws Exception {
        CompletableFuture<KvResp> f = KvTestCluster.callLeaderRaw(client, command, req);
        try {
            f.get(10, TimeUnit.SECONDS);
            throw new AssertionError("expected " + expected);
        } catch (java.util.concurrent.ExecutionException e) {
            RemoteException r = (RemoteException) e.getCause();
            assertEquals(expected.number(), r.bizCode(), r.getMessage());
        }
    }

    /** A request whose read_kind is a number no KvReadKind has (as a newer client might send). */
    private static KvReq readKindNumber(KvReq req, int number) throws Exception {
        java.lang.reflect.Field f = KvReq.class.getDeclaredField("readKind");
        f.setAccessible(true);
        f.setInt(req, number);
        return req;
    }

    private static KvException expect(KvCode code, Runnable op) {
        KvException e = assertThrows(KvException.class, op::run);
        assertEquals(code, e.kvCode(), e.getMessage());
        return e;
    }

    @Test
    void everyErrorCodeEndToEnd() throws Exception {
        Set<KvCode> seen = EnumSet.of(KvCode.SUCCESS);
        kv.mkdir("err");
        kv.put("err.v", b("v"));
        char[] longKey = new char[8200];
        Arrays.fill(longKey, 'k');

        seen.add(expect(KvCode.NOT_FOUND, () -> kv.remove("err.none")).kvCode());
        seen.add(expect(KvCode.INVALID_KEY, () -> kv.put("err..x", b("1"))).kvCode());
        seen.add(expect(KvCode.INVALID_KEY, () -> kv.put(".err", b("1"))).kvCode());
        seen.add(expect(KvCode.KEY_TOO_LONG, () -> kv.get(new String(longKey))).kvCode());
        seen.add(expect(KvCode.VALUE_TOO_LARGE, () -> kv.put("err.big", new byte[4 * 1024 * 1024 + 1])).kvCode());
        seen.add(expect(KvCode.PARENT_NOT_FOUND, () -> kv.put("err.nodir.x", b("1"))).kvCode());
        seen.add(expect(KvCode.PARENT_NOT_DIR, () -> kv.put("err.v.x", b("1"))).kvCode());
        seen.add(expect(KvCode.IS_A_DIR, () -> kv.put("err", b("1"))).kvCode());
        seen.add(expect(KvCode.NOT_A_DIR, () -> kv.list("err.v")).kvCode());
        seen.add(expect(KvCode.DIR_NOT_EMPTY, () -> kv.remove("err")).kvCode());
        // CAS_MISMATCH is false from compareAndSet; the code itself travels as shown by a raw write
        assertFalse(kv.compareAndSet("err.v", b("other"), b("x")));
        rawWrite(kv, KvReq.compareAndSet("err.v", b("other"), b("x")), KvCode.CAS_MISMATCH);
        seen.add(KvCode.CAS_MISMATCH);
        seen.add(expect(KvCode.NOT_TEMP, () -> kv.updateTtl("err.v", 1000)).kvCode());
        kv.putTemp("err.mine", b("m"), 60_000);
        seen.add(expect(KvCode.NOT_OWNER, () -> other.put("err.mine", b("theirs"))).kvCode());
        seen.add(expect(KvCode.INVALID_TTL, () -> kv.putTemp("err.t", b("t"), 0)).kvCode());
        seen.add(expect(KvCode.LOCK_NOT_HELD, () -> kv.lock("err-lock").unlock()).kvCode());
        KvLock shortLease = kv.lock("err-lease");
        assertTrue(shortLease.tryLock(200, 0));
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
        KvTestCluster.waitFor("the lease to run out", () -> System.nanoTime() - until > 0);
        KvException le = assertThrows(KvException.class, () -> shortLease.updateLease(1000));
        assertTrue(le.kvCode() == KvCode.LEASE_EXPIRED || le.kvCode() == KvCode.LOCK_NOT_HELD, le.getMessage());
        seen.add(KvCode.LEASE_EXPIRED);
        seen.add(KvCode.LOCK_NOT_HELD);
        // a batchPut without one value per key: the client refuses it before sending; the server too,
        // for clients that send one
        assertThrows(IllegalArgumentException.class, () -> kv.batchPut(Arrays.asList("err.a", "err.b"),
                Collections.singletonList(b("1"))));
        raw(kv, KvCommands.KV_WRITE, KvReq.batchPut(Arrays.asList("err.a", "err.b"), Collections.singletonList(b("1"))),
                KvCode.INVALID_REQUEST);
        seen.add(KvCode.INVALID_REQUEST);
        raw(kv, KvCommands.KV_READ, readKindNumber(KvReq.get("err.v"), 9), KvCode.INVALID_REQUEST);
        raw(kv, KvCommands.KV_READ, KvReq.put("err.v", b("w")), KvCode.INVALID_REQUEST);
        raw(kv, KvCommands.KV_WRITE, KvReq.get("err.v"), KvCode.INVALID_REQUEST);
        KvException batch = expect(KvCode.PARENT_NOT_FOUND, () -> kv.batchPut(Arrays.asList("err.a", "err.no.b"),
                Arrays.asList(b("1"), b("2"))));
        assertEquals(2, batch.failedPosition(), "the failing key's position");
        assertFalse(kv.get("err.a").exists(), "a failed batch changes nothing");
        // EXPIRE and EXPIRE_LOCK are the leader's own proposals: refused from a client, and STALE_EXPIRE
        // (what applying a stale one gives, KvStoreOperationsTest) never reaches a client
        kv.putTemp("err.t2", b("t"), 60_000);
        long created = kv.get("err.t2").createIndex();
        raw(kv, KvCommands.KV_WRITE, KvReq.expire("err.t2", created), KvCode.INVALID_REQUEST);
        assertTrue(kv.get("err.t2").exists(), "a client's EXPIRE removed nothing");
        raw(kv, KvCommands.KV_WRITE, KvReq.expireLock("err-lease", 1), KvCode.INVALID_REQUEST);
        seen.add(KvCode.STALE_EXPIRE);
        java.util.UUID stranger = java.util.UUID.randomUUID();
        rawWrite(kv, KvReq.put("err.s", b("s")).session(stranger.getMostSignificantBits(),
                stranger.getLeastSignificantBits()).seq(50, 40), KvCode.SESSION_EXPIRED);
        seen.add(KvCode.SESSION_EXPIRED);
        java.util.UUID fresh = java.util.UUID.randomUUID();
        KvReq first = KvReq.put("err.s", b("s")).session(fresh.getMostSignificantBits(), fresh.getLeastSignificantBits())
                .seq(1, 1);
        CompletableFuture<KvResp> ok = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_WRITE, first);
        ok.get(10, TimeUnit.SECONDS);
        CompletableFuture<KvResp> ok2 = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_WRITE, KvReq.put("err.s",
                b("s1")).session(fresh.getMostSignificantBits(), fresh.getLeastSignificantBits()).seq(2, 2));
        ok2.get(10, TimeUnit.SECONDS);
        rawWrite(kv, KvReq.put("err.s", b("s2")).session(fresh.getMostSignificantBits(), fresh.getLeastSignificantBits())
                .seq(1, 1), KvCode.SEQ_ALREADY_ACKED);
        seen.add(KvCode.SEQ_ALREADY_ACKED);
        rawWrite(kv, KvReq.put("err.s", b("s3")).session(fresh.getMostSignificantBits(), fresh.getLeastSignificantBits())
                .seq(10_000_000, 2), KvCode.SESSION_WINDOW_FULL);
        seen.add(KvCode.SESSION_WINDOW_FULL);
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 10_001; i++) {
            many.add("err.k" + i);
        }
        seen.add(expect(KvCode.BATCH_TOO_LARGE, () -> kv.batchGet(many)).kvCode());
        // a directory over one answer: list fails with a code that says what to do, listPage reads it all
        kv.mkdir("err.big");
        List<String> bigKeys = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            bigKeys.add("err.big.v" + i);
            kv.put("err.big.v" + i, new byte[3 << 20]);
        }
        seen.add(expect(KvCode.ANSWER_TOO_LARGE, () -> kv.list("err.big")).kvCode());
        // TOO_MANY_WATCHES needs a node with a low limit (100,000 watches here): WatchCountLimitTest
        seen.add(KvCode.TOO_MANY_WATCHES);
        expect(KvCode.ANSWER_TOO_LARGE, () -> kv.batchGet(bigKeys));
        List<String> paged = new ArrayList<>();
        KvListPage page = kv.listPage("err.big", null, 0);
        int pages = 1;
        paged.addAll(keysOf(page.nodes()));
        while (page.more()) {
            page = kv.listPage("err.big", page.nextStartAfter(), 0);
            pages++;
            paged.addAll(keysOf(page.nodes()));
        }
        assertEquals(bigKeys, paged);
        assertEquals(3, pages, "3 MiB values: one per page of about 4 MiB");
        assertEquals(Collections.singletonList("err.big.v2"), keysOf(kv.listPage("err.big", "err.big.v1", 5).nodes()));
        expect(KvCode.INVALID_REQUEST, () -> kv.listPage("err.big", null, -1));
        assertEquals(EnumSet.allOf(KvCode.class), seen, "every code was shown");
    }

    @Test
    void aRetriedWriteIsAppliedOnce() throws Exception {
        java.util.UUID id = java.util.UUID.randomUUID();
        kv.mkdir("once");
        KvReq req = KvReq.put("once.k", b("v")).session(id.getMostSignificantBits(), id.getLeastSignificantBits())
                .seq(1, 1).groupId(1);
        long[] idx = new long[2];
        for (int i = 0; i < 2; i++) {
            CompletableFuture<KvResp> f = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_WRITE, req);
            idx[i] = f.get(10, TimeUnit.SECONDS).raftIndex();
        }
        assertEquals(idx[0], idx[1], "the retry got the first answer");
        assertEquals(idx[0], kv.get("once.k").updateIndex(), "and was not applied again");
    }

    /**
     * An empty write batch from a client that does not check (KvClient refuses it before sending) is
     * refused by the leader instead of becoming a logged entry that changes nothing.
     */
    @Test
    void theServerRefusesAWriteBatchWithNoKeys() throws Exception {
        List<KvReq> empty = Arrays.asList(KvReq.batchPut(Collections.emptyList(), Collections.emptyList()),
                KvReq.batchRemove(Collections.emptyList()));
        for (KvReq req : empty) {
            CompletableFuture<KvResp> f = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_WRITE, req);
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> f.get(10, TimeUnit.SECONDS), req + " was applied");
            RemoteException r = (RemoteException) e.getCause();
            assertEquals(KvCode.INVALID_REQUEST.number(), r.bizCode(), r.getMessage());
            assertTrue(r.getMessage().contains("with no keys is refused"), r.getMessage());
        }
    }

    /**
     * An empty batchGet from a client that does not check (KvClient refuses it before sending) is
     * refused by the node before it takes a trip through the read path, with every read kind.
     */
    @Test
    void theServerRefusesABatchGetWithNoKeys() throws Exception {
        for (KvReadKind kind : KvReadKind.values()) {
            KvReq req = KvReq.batchGet(Collections.emptyList()).readKind(kind);
            CompletableFuture<KvResp> f = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_READ, req);
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> f.get(10, TimeUnit.SECONDS), kind + ": an empty batchGet was answered");
            RemoteException r = (RemoteException) e.getCause();
            assertEquals(KvCode.INVALID_REQUEST.number(), r.bizCode(), r.getMessage());
            assertTrue(r.getMessage().contains("BATCH_GET with no keys is refused"), r.getMessage());
        }
    }

    @Test
    void aGroupTheNodesDoNotHaveIsABadRequest() {
        io.poyang.common.PoyangException e = assertThrows(io.poyang.common.PoyangException.class,
                () -> kv.forGroup(7).get("x"));
        assertTrue(e.getMessage().contains("group 7"), e.getMessage());
    }

    private static List<String> keysOf(List<KvNode> nodes) {
        List<String> keys = new ArrayList<>();
        for (KvNode n : nodes) {
            keys.add(n.key());
        }
        return keys;
    }
}
