package io.poyang.dtkv.cluster;

import io.poyang.dtkv.client.KvClient;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotSame;

/**
 * A group stopped on its leader while the node runs on ({@code admin restart-group --on <leader>},
 * a runtime {@code remove-group} on the leader) keeps the clients' connections to that node open.
 * Its watchers are told to register with the leader (a "moved" push), as when leadership ends any
 * other way; before, the group stopped without a word and their watches went silent for good.
 */
class WatchAcrossGroupStopTest {

    @TempDir
    Path dir;

    @Test
    void aWatchHearsWritesAfterTheLeaderRestartsItsGroup() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            KvClient writer = c.client();
            KvClient watcher = c.client();
            Map<String, String> seen = watchK(writer, watcher);
            int leader = c.leader();
            RaftGroup old = c.group(leader);
            RaftGroup restarted = c.cluster.server(leader).restartGroup(1).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotSame(old, restarted);
            c.leader();
            writer.put("k", "v2");
            KvTestCluster.waitFor("the watch to hear a write made after the leader restarted its group",
                    () -> "v2".equals(seen.get("k")));
            c.checkReplicasEqual();
        }
    }

    /** The same node leads again after the restart: the client registers again with it, a new state machine. */
    @Test
    void aWatchHearsWritesAfterTheOnlyNodeRestartsItsGroupAndLeadsAgain() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 1).start()) {
            KvClient writer = c.client();
            KvClient watcher = c.client();
            Map<String, String> seen = watchK(writer, watcher);
            c.cluster.server(1).restartGroup(1).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            c.leader();
            writer.put("k", "v2");
            KvTestCluster.waitFor("the watch to hear a write made after the only node restarted its group",
                    () -> "v2".equals(seen.get("k")));
            // and it stays registered: the next write is heard too
            writer.put("k", "v3");
            KvTestCluster.waitFor("the watch to hear the next write", () -> "v3".equals(seen.get("k")));
        }
    }

    @Test
    void aWatchHearsWritesAfterTheLeaderRemovesItsGroup() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            KvClient writer = c.client();
            KvClient watcher = c.client();
            Map<String, String> seen = watchK(writer, watcher);
            int leader = c.leader();
            c.cluster.server(leader).removeGroup(1, false).get(KvTestCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            KvTestCluster.waitFor("another node to lead group 1", () -> {
                for (int n = 1; n <= 3; n++) {
                    RaftGroup g = c.group(n);
                    if (n != leader && g != null && g.isLeader()) {
                        return true;
                    }
                }
                return false;
            });
            writer.put("k", "v2");
            KvTestCluster.waitFor("the watch to hear a write made after the leader removed its group",
                    () -> "v2".equals(seen.get("k")));
        }
    }

    /** {@code watcher} watches "k", which {@code writer} set to "v1"; returns the states it heard, by key. */
    private static Map<String, String> watchK(KvClient writer, KvClient watcher) {
        writer.put("k", "v1");
        Map<String, String> seen = new ConcurrentHashMap<>();
        watcher.watch((watchKey, node) -> seen.put(node.key(), node.exists() ? node.valueAsString() : ""),
                "k");
        KvTestCluster.waitFor("the watch's first state", () -> "v1".equals(seen.get("k")));
        return seen;
    }
}
