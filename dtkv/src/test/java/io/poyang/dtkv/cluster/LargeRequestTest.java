package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.client.KvClient;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests at and over {@link KvKeys#MAX_REQUEST_BYTES} on three nodes: a write is one raft entry,
 * which must fit one 8 MiB frame between the nodes. The largest allowed batch is replicated; a larger
 * one (even one that fits the client's frame) fails at once with a KvCode, and the group goes on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeRequestTest {

    @TempDir
    static Path dir;
    private KvTestCluster c;
    private KvClient kv;

    @BeforeAll
    void start() {
        c = new KvTestCluster(dir, 3).start();
        kv = c.client();
        kv.mkdir("big");
    }

    @AfterAll
    void stop() throws Exception {
        c.checkReplicasEqual();
        c.close();
    }

    /**
     * A batchPut of two equal values taking at most {@code requestBytes}, and within a few bytes of it,
     * with session fields as large as KvClient's in this test (its seqs stay below 1000).
     */
    private static KvReq twoValueBatch(String prefix, int requestBytes) {
        List<String> keys = Arrays.asList("big." + prefix + "1", "big." + prefix + "2");
        int valueBytes = requestBytes / 2;
        while (true) {
            byte[] v = new byte[valueBytes];
            Arrays.fill(v, (byte) 'v');
            KvReq req = KvReq.batchPut(keys, Arrays.asList(v, v)).groupId(1).session(-1L, -1L)
                    .seq(1000, 1000);
            int over = req.encodedSize() - requestBytes;
            if (over <= 0) {
                return req;
            }
            valueBytes -= (over + 1) / 2;
        }
    }

    private static <T> Throwable failureOf(CompletableFuture<T> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void aBatchOverTheLimitThatFitsTheFrameFailsWithBatchTooLargeAndTheNextWriteCommitsAtOnce() throws Exception {
        // 32 bytes under the 8 MiB frame: the client can send it, but no AppendEntries can carry it
        KvReq req = twoValueBatch("over", 8 * 1024 * 1024 - 32);
        Throwable e = failureOf(kv.batchPutAsync(req.keys(), req.values()));
        assertInstanceOf(KvException.class, e, String.valueOf(e));
        assertEquals(KvCode.BATCH_TOO_LARGE, ((KvException) e).kvCode(), e.getMessage());

        long before = System.nanoTime();
        kv.put("big.after", "x");
        assertTrue(System.nanoTime() - before < TimeUnit.SECONDS.toNanos(5), "the next write commits at once");
    }

    @Test
    void theLargestAllowedBatchIsReplicatedToEveryNode() throws Exception {
        KvReq req = twoValueBatch("max", KvKeys.MAX_REQUEST_BYTES);
        kv.batchPutAsync(req.keys(), req.values()).get(10, TimeUnit.SECONDS);
        c.checkReplicasEqual();
        assertArrayEquals(req.values().get(1), kv.get("big.max2").value());
    }

    @Test
    void aCompareAndSetOfTwoLargestValuesFailsWithValueTooLargeNotANetworkError() {
        byte[] max = new byte[KvKeys.MAX_VALUE_BYTES];
        Throwable e = failureOf(kv.compareAndSetAsync("big.cas", max, max));
        assertInstanceOf(KvException.class, e, String.valueOf(e));
        assertEquals(KvCode.VALUE_TOO_LARGE, ((KvException) e).kvCode(), e.getMessage());
        assertTrue(e.getMessage().contains("expected and new values"), e.getMessage());
    }

    @Test
    void theServerRefusesAnOversizedWriteFromAClientThatDoesNotCheck() throws Exception {
        KvReq req = twoValueBatch("raw", 8 * 1024 * 1024 - 32);
        CompletableFuture<KvResp> f = KvTestCluster.callLeaderRaw(kv, KvCommands.KV_WRITE, req);
        Throwable e = failureOf(f);
        assertInstanceOf(RemoteException.class, e, String.valueOf(e));
        RemoteException r = (RemoteException) e;
        assertEquals(ResponseCode.BIZ_ERROR, r.responseCode(), r.getMessage());
        assertEquals(KvCode.BATCH_TOO_LARGE.number(), r.bizCode(), r.getMessage());
    }
}
