package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.FailureCause;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.Outcome;
import io.poyang.benchmark.UsageException;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvReq;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

class KvScenarioTest {

    private static List<String> benchKeys(int count) {
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add("bench.k" + i);
        }
        return keys;
    }

    /**
     * The preload's batchPuts fit one DtKV request whatever the value size up to DtKV's limit (1,000
     * keys of 16 KiB each were one request of 16 MB: every get run with values over ~8.3 KB failed in
     * its setup), and cover the keys once, in order.
     */
    @Test
    void preloadBatchesFitOneRequestForEveryValueSize() {
        int[][] cases = {{256, 2_500}, {16 * 1024, 600}, {KvKeys.MAX_VALUE_BYTES, 5}};
        for (int[] c : cases) {
            int valueBytes = c[0];
            List<String> keys = benchKeys(c[1]);
            byte[] value = new byte[valueBytes];
            List<List<String>> batches = KvScenario.preloadBatches(keys, valueBytes);
            List<String> covered = new ArrayList<>();
            for (List<String> batch : batches) {
                assertFalse(batch.isEmpty(), "value size " + valueBytes);
                assertTrue(batch.size() <= KvScenario.PRELOAD_BATCH_KEYS, "value size " + valueBytes + ": " + batch.size());
                KvReq req = KvReq.batchPut(batch, Collections.nCopies(batch.size(), value))
                        .groupId(1).session(Long.MIN_VALUE, Long.MIN_VALUE).seq(Long.MAX_VALUE, Long.MAX_VALUE);
                assertTrue(req.encodedSize() <= KvKeys.MAX_REQUEST_BYTES,
                        "value size " + valueBytes + ": a batch of " + batch.size() + " takes " + req.encodedSize() + " bytes");
                covered.addAll(batch);
            }
            assertEquals(keys, covered, "value size " + valueBytes);
        }
        // small values: as few requests as the key cap allows
        assertEquals(3, KvScenario.preloadBatches(benchKeys(2_500), 256).size());
        // 4 MiB values: one per request
        assertEquals(5, KvScenario.preloadBatches(benchKeys(5), KvKeys.MAX_VALUE_BYTES).size());
    }

    /** The outcomes of {@code count} asynchronous operations of {@code scenario}, "success" or "OUTCOME cause". */
    private static List<String> issue(KvScenario scenario, int count) throws Exception {
        ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
        CountDownLatch ended = new CountDownLatch(count);
        OpCallback callback = new OpCallback() {
            @Override
            public void succeeded() {
                outcomes.add("success");
                ended.countDown();
            }

            @Override
            public void failed(Outcome outcome, String cause) {
                outcomes.add(outcome + " " + cause);
                ended.countDown();
            }
        };
        for (int i = 0; i < count; i++) {
            scenario.issue(0, callback);
        }
        assertTrue(ended.await(30, TimeUnit.SECONDS), "ended: " + outcomes);
        return new ArrayList<>(outcomes);
    }

    /**
     * A get of a key that should be there and is not is a failure counted as KvException NOT_FOUND,
     * asynchronously as with --sync, single or batched (the asynchronous gets and both batchGets
     * counted it as a success); with the keys written first, the same gets succeed.
     */
    @Test
    void getsOfAbsentKeysFailAsNotFoundInEveryMode() throws Exception {
        assertEquals("KvException NOT_FOUND", KvScenario.MISSING_KEY_CAUSE);
        for (String batchSize : new String[]{"1", "10"}) {
            KvScenario withoutPreload = new KvScenario("get", false);
            try {
                withoutPreload.setUp(BenchOptions.parse("--op", "get", "--in-process", "--keys", "50", "--batch-size", batchSize));
                assertEquals(Collections.nCopies(20, "FAILED KvException NOT_FOUND"), issue(withoutPreload, 20), "batch " + batchSize);
                KvException e = assertThrows(KvException.class, () -> withoutPreload.call(0), "batch " + batchSize);
                assertEquals(KvScenario.MISSING_KEY_CAUSE, FailureCause.of(e));
            } finally {
                withoutPreload.close();
            }
            KvScenario preloaded = new KvScenario("get");
            try {
                preloaded.setUp(BenchOptions.parse("--op", "get", "--in-process", "--keys", "50", "--batch-size", batchSize));
                assertEquals(Collections.nCopies(20, "success"), issue(preloaded, 20), "batch " + batchSize);
                preloaded.call(0);
            } finally {
                preloaded.close();
            }
        }
    }

    /**
     * POYANG_BENCH_SERVER_PIDS is checked before the run: a malformed entry ended the run with a
     * NumberFormatException and its stack trace, a pid not running silently left the servers' CPU partial.
     */
    @Test
    void serverPidsFromTheEnvironmentAreCheckedBeforeTheRun() throws Exception {
        long self = ProcessHandle.current().pid();
        assertEquals(Collections.emptyList(), KvScenario.serverPidsOf(null));
        assertEquals(Collections.emptyList(), KvScenario.serverPidsOf(" "));
        assertEquals(Collections.singletonList(self), KvScenario.serverPidsOf(" " + self + " , "));
        UsageException malformed = assertThrows(UsageException.class, () -> KvScenario.serverPidsOf(self + ",abc"));
        assertEquals("POYANG_BENCH_SERVER_PIDS takes the process ids of the --servers nodes running on this machine,"
                + " comma-separated; 'abc' is not a process id", malformed.getMessage());
        assertThrows(UsageException.class, () -> KvScenario.serverPidsOf("-3"));
        UsageException notRunning = assertThrows(UsageException.class, () -> KvScenario.serverPidsOf("999999999"));
        assertTrue(notRunning.getMessage().startsWith("POYANG_BENCH_SERVER_PIDS names process 999999999, which is not"
                + " running on this machine"), notRunning.getMessage());
    }

    /**
     * A client whose stop throws: the in-process nodes still stop and their data directory goes (the
     * close stopped at the client, leaving the nodes running over a directory deleted under them),
     * and the close then reports the client's failure.
     */
    @Test
    void aClientThatFailsToStopDoesNotKeepTheNodesRunning() throws Exception {
        KvScenario scenario = new KvScenario("put");
        scenario.clientStopper = c -> {
            c.close();
            throw new IllegalStateException("client stop failed");
        };
        java.nio.file.Path dir;
        try {
            scenario.setUp(BenchOptions.parse("--op", "put", "--in-process", "--keys", "10", "--clients", "2"));
            dir = scenario.dataDirectory();
            assertTrue(java.nio.file.Files.isDirectory(dir), String.valueOf(dir));
        } catch (Exception | Error e) {
            scenario.clientStopper = io.poyang.dtkv.client.KvClient::close;
            scenario.close();
            throw e;
        }
        Exception thrown = assertThrows(Exception.class, scenario::close);
        assertFalse(java.nio.file.Files.exists(dir), "the nodes' data directory is left: " + dir);
        assertEquals("client stop failed", thrown.getMessage());
        assertEquals(1, thrown.getSuppressed().length, "the second client's stop failed too");
    }
}
