package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvReq;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

/**
 * A rough measure of what applying costs, printed for information (figures for the docs come from
 * the benchmark). It asserts only what the design promises: without a snapshot no versions are
 * kept nor made (a put overwrites the key's version), and puts over existing keys leave no garbage
 * entries behind.
 */
class ApplyCostTest {

    @Test
    void putsOverExistingKeysCostAHashLookupAndNoNewVersion() {
        KvStore store = new KvStore();
        int keys = 10_000;
        String[] names = new String[keys];
        byte[] value = new byte[64];
        long index = 0;
        store.apply(++index, 1, 1, KvReq.mkdir("bench"));
        for (int i = 0; i < keys; i++) {
            names[i] = "bench.k" + i;
            store.apply(++index, 1, 1, KvReq.put(names[i], value));
        }
        KvReq[] reqs = new KvReq[keys];
        for (int i = 0; i < keys; i++) {
            reqs[i] = KvReq.put(names[i], value);
        }
        KvVersion[] versions = new KvVersion[keys];
        for (int i = 0; i < keys; i++) {
            versions[i] = store.tree.lookup(names[i]).latest;
        }
        int rounds = 100;
        long start = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < keys; i++) {
                if (store.apply(++index, 1, 1 + r, reqs[i]).codeNumber() != 0) {
                    fail("put failed");
                }
            }
        }
        long nanos = System.nanoTime() - start;
        System.out.printf("DtKV apply: %,d puts over %,d keys in %d ms: %.0f ns per put, %,.0f puts/s%n",
                rounds * keys, keys, nanos / 1_000_000, (double) nanos / (rounds * keys),
                rounds * keys * 1e9 / nanos);
        assertEquals(0, store.tree.keptVersions());
        for (int i = 0; i < keys; i++) {
            assertSame(versions[i], store.tree.lookup(names[i]).latest, names[i]);
        }
        assertEquals(keys + 1, store.tree.entryCount());
        assertEquals(KvCode.SUCCESS, store.get(names[0]).code());
    }
}
