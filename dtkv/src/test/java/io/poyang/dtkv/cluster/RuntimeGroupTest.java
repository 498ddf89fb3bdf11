package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvClient;
import io.poyang.raft.core.Members;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A DtKV group added to running nodes is served like the others, and leaves the service when removed. */
class RuntimeGroupTest {

    @TempDir
    Path dir;

    @Test
    void aDtKvGroupAddedAtRuntimeIsServedAndLeavesTheServiceWhenRemoved() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            KvClient kv = c.client();
            kv.put("g1", "one".getBytes(StandardCharsets.UTF_8));
            for (int n = 1; n <= 3; n++) {
                c.cluster.server(n).addGroup(2, c.cluster.service(n).stateMachine(2), new Members(1, 2, 3))
                        .get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            assertTrue(c.cluster.waitForLeader(2, KvTestCluster.WAIT_SECONDS * 1000) != 0, "group 2 elected no leader");
            KvClient g2 = kv.forGroup(2);
            g2.put("g2", "two".getBytes(StandardCharsets.UTF_8));
            for (KvReadKind kind : KvReadKind.values()) {
                assertEquals("two", g2.withReadKind(kind).getString("g2"), kind.toString());
                assertFalse(g2.withReadKind(kind).get("g1").exists(), "groups are separate trees");
            }
            assertFalse(kv.get("g2").exists());
            for (int n = 1; n <= 3; n++) {
                assertEquals(Arrays.asList(1, 2), c.cluster.service(n).groupIds());
            }

            for (int n = 1; n <= 3; n++) {
                c.cluster.server(n).removeGroup(2, true).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            for (int n = 1; n <= 3; n++) {
                int node = n;
                KvTestCluster.waitFor("node " + n + "'s DtKV service to drop group 2",
                        () -> c.cluster.service(node).groupIds().equals(Collections.singletonList(1)));
                assertFalse(Files.exists(dir.resolve("node-" + n).resolve("group-2")), "group 2's data was deleted");
            }
            assertThrows(RuntimeException.class, () -> g2.get("g2"), "a removed group is not served");
            assertEquals("one", kv.getString("g1"));
            c.checkReplicasEqual();
        }
    }
}
