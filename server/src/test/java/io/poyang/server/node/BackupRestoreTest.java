package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The backup and restore of docs/operations.md: a snapshot pair copied into an empty data directory. */
class BackupRestoreTest {

    @TempDir
    Path tmp;

    private PoyangNode node(Path dataDir, boolean snapshotOnStop) throws Exception {
        return InProcessNodes.singleNode(tmp.resolve("config-" + dataDir.getFileName() + ".properties"), dataDir,
                java.util.Collections.singletonMap("snapshotOnStop", String.valueOf(snapshotOnStop)));
    }

    @Test
    void aSnapshotPairCopiedIntoAnEmptyDataDirectoryRestoresTheGroup() throws Exception {
        Path original = tmp.resolve("original");
        PoyangNode a = node(original, true);
        a.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + a.servicePort()))) {
            kv.start();
            kv.mkdir("cfg");
            for (int i = 0; i < 100; i++) {
                kv.put("cfg.k" + i, "v" + i);
            }
        } finally {
            a.stop();
        }
        List<Path> pair;
        try (Stream<Path> s = Files.list(original.resolve("group-1").resolve("snapshot"))) {
            pair = s.filter(p -> p.toString().endsWith(".data") || p.toString().endsWith(".meta"))
                    .sorted().collect(Collectors.toList());
        }
        assertEquals(2, pair.size(), "one snapshot: " + pair);

        Path restored = tmp.resolve("restored");
        Path snapDir = Files.createDirectories(restored.resolve("group-1").resolve("snapshot"));
        for (Path p : pair) {
            Files.copy(p, snapDir.resolve(p.getFileName()));
        }
        PoyangNode b = node(restored, false);
        b.start();
        try (KvClient kv = new KvClient(new KvClientConfig().servers("127.0.0.1:" + b.servicePort()))) {
            kv.start();
            for (int i = 0; i < 100; i++) {
                assertEquals("v" + i, kv.getString("cfg.k" + i));
            }
            kv.put("cfg.after", "x");   // the group goes on from the snapshot
            assertEquals("x", kv.getString("cfg.after"));
        } finally {
            b.stop();
        }
        assertEquals(0, Files.size(restored.resolve(DataDir.PID_FILE)), "a clean stop empties the PID file");
    }
}
