package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvWatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A watch on a directory whose content is larger than one 8 MiB frame: its first state comes in
 * parts, and the client ends with all of it. (Before, the whole directory was one event that could
 * never be sent; the server retried it in a loop and the listener heard nothing.)
 */
class LargeDirectoryWatchTest {

    @TempDir
    Path dir;

    @Test
    void aWatchOnADirectoryLargerThanAFrameGetsEveryValue() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 1).start()) {
            KvClient kv = c.client();
            kv.mkdir("d");
            byte[] value = new byte[KvKeys.MAX_VALUE_BYTES];
            for (int i = 0; i < 3; i++) { // 12 MiB under d
                Arrays.fill(value, (byte) ('a' + i));
                kv.put("d.v" + i, value);
            }
            Map<String, KvNode> seen = new ConcurrentHashMap<>();
            KvWatch w = kv.watch((watchKey, node) -> {
                if (node.exists()) {
                    seen.put(node.key(), node);
                } else {
                    seen.remove(node.key());
                }
            }, "d");
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (seen.size() < 4 && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
                assertEquals(4, seen.size(), "the directory and its three values: " + seen.keySet());
                for (int i = 0; i < 3; i++) {
                    byte[] got = seen.get("d.v" + i).value();
                    assertEquals(KvKeys.MAX_VALUE_BYTES, got.length);
                    assertEquals('a' + i, got[got.length - 1]);
                }
                // and the watch goes on: a change after the parts is seen
                kv.put("d.v0", new byte[]{'z'});
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (seen.get("d.v0").value().length != 1 && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
                assertTrue(Arrays.equals(new byte[]{'z'}, seen.get("d.v0").value()));
                assertEquals(4, seen.size(), "nothing was taken for removed");
            } finally {
                w.close();
            }
        }
    }
}
