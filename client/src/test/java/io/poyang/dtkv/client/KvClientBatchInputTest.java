package io.poyang.dtkv.client;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/**
 * A batch's bad input is refused before anything is sent, as a single key's is: a KvException with
 * the code and the 1-based position, not a bare NullPointerException from the encoder.
 */
class KvClientBatchInputTest {

    private static KvException failure(CompletableFuture<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(KvException.class, e.getCause(), "failed with " + e.getCause());
        return (KvException) e.getCause();
    }

    @Test
    void badKeysAndNullValuesOfABatchFailWithTheirPosition() throws Exception {
        // never started: nothing here may need a connection
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:1").timeoutMillis(2_000))) {
            byte[] v = new byte[1];
            KvException e = failure(kv.batchPutAsync(Arrays.asList("a", null), Arrays.asList(v, v)));
            assertEquals(KvCode.INVALID_KEY, e.kvCode());
            assertEquals(2, e.failedPosition());

            e = failure(kv.batchPutAsync(Arrays.asList("a", "b..c"), Arrays.asList(v, v)));
            assertEquals(KvCode.INVALID_KEY, e.kvCode());
            assertEquals(2, e.failedPosition());

            e = failure(kv.batchPutAsync(Arrays.asList("a", "b"), Arrays.asList(v, null)));
            assertEquals(KvCode.INVALID_REQUEST, e.kvCode());
            assertEquals(2, e.failedPosition());
            assertTrue(e.getMessage().contains("null"), e.getMessage());

            e = failure(kv.batchRemoveAsync(Arrays.asList(null, "a")));
            assertEquals(KvCode.INVALID_KEY, e.kvCode());
            assertEquals(1, e.failedPosition());

            e = failure(kv.batchGetAsync(Arrays.asList("a", "b", null)));
            assertEquals(KvCode.INVALID_KEY, e.kvCode());
            assertEquals(3, e.failedPosition());
        }
    }

    /**
     * An empty write batch (or a null key list) is a caller's bug that would cost a logged entry
     * changing nothing: refused before sending, in every form of the call.
     */
    @Test
    void aWriteBatchWithNoKeysIsRefusedWithIllegalArgumentException() throws Exception {
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:1").timeoutMillis(2_000))) {
            List<String> none = Collections.emptyList();
            assertNoKeys(kv.batchPutAsync(none, Collections.emptyList()), "batchPut");
            assertNoKeys(kv.batchPutAsync(null, null), "batchPut");
            assertNoKeys(kv.batchRemoveAsync(none), "batchRemove");
            assertNoKeys(kv.batchRemoveAsync(null), "batchRemove");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> kv.batchPut(none, Collections.emptyList()));
            assertTrue(e.getMessage().contains("at least one key"), e.getMessage());
            CompletableFuture<Long> viaCallback = new CompletableFuture<>();
            kv.batchRemove(none, KvClient.completing(viaCallback));
            assertNoKeys(viaCallback, "batchRemove");
        }
    }

    @Test
    void aBatchPutWithoutOneValuePerKeyIsRefusedWithIllegalArgumentException() throws Exception {
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:1").timeoutMillis(2_000))) {
            byte[] v = {1};
            assertValueCount(kv.batchPutAsync(Arrays.asList("a", "b"), Collections.singletonList(v)), "2 keys and 1 values");
            assertValueCount(kv.batchPutAsync(Collections.singletonList("a"), Arrays.asList(v, v)), "1 keys and 2 values");
            assertValueCount(kv.batchPutAsync(Collections.singletonList("a"), null), "a null value list");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> kv.batchPut(Arrays.asList("a", "b"), Collections.emptyList()));
            assertTrue(e.getMessage().contains("one value per key"), e.getMessage());
        }
    }

    private static void assertValueCount(CompletableFuture<?> f, String counts) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e.getCause(), "failed with " + e.getCause());
        String message = e.getCause().getMessage();
        assertTrue(message.contains(counts) && message.contains("one value per key"), message);
    }

    /**
     * An empty batchGet (or a null key list) is refused before sending like an empty write batch:
     * before, it was handed to the raft client to send (which, never started here, failed it with
     * StoppedException instead).
     */
    @Test
    void aBatchGetWithNoKeysIsRefusedWithIllegalArgumentException() throws Exception {
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:1").timeoutMillis(2_000))) {
            assertNoKeys(kv.batchGetAsync(Collections.emptyList()), "batchGet");
            assertNoKeys(kv.batchGetAsync(null), "batchGet");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> kv.batchGet(Collections.emptyList()));
            assertTrue(e.getMessage().contains("nothing to read"), e.getMessage());
            CompletableFuture<List<io.poyang.dtkv.KvNode>> viaCallback = new CompletableFuture<>();
            kv.batchGet(Collections.emptyList(), KvClient.completing(viaCallback));
            assertNoKeys(viaCallback, "batchGet");
        }
    }

    private static void assertNoKeys(CompletableFuture<?> f, String operation) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e.getCause(), "failed with " + e.getCause());
        String message = e.getCause().getMessage();
        assertTrue(message.startsWith(operation) && message.contains("at least one key"), message);
    }
}
