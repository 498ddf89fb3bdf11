package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The published progress of a group (commit and applied indexes, what status and tests read) is
 * never behind a write that was acknowledged: a caller that learns its write is done and then asks
 * the node how far it applied sees at least the write's index.
 *
 * <p>Regression test for the ClusterRestartTest failure of issue 6 ("node 1 held 5,122 values and
 * the leader 5,123 with the same applied index"): the leader answered a write before publishing
 * its applied index, so the harness's consistency check, waiting for all nodes to report the same
 * applied index, could pass one entry too early and compare a node that had not applied the last
 * write yet. Here the futures complete on the dispatcher thread itself, inside the answer, so the
 * old order fails every time.
 */
class ApplyProgressTest {

    @TempDir
    Path dir;

    @Test
    void anAcknowledgedWriteIsCoveredByThePublishedAppliedAndCommitIndexes() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1)) {
            c.callbackExecutor = Runnable::run;
            c.start();
            int leader = c.waitForLeader(1);
            RaftGroup g = c.group(leader, 1);
            Set<String> behind = ConcurrentHashMap.newKeySet();
            CompletableFuture<?>[] writes = new CompletableFuture<?>[500];
            for (int i = 0; i < writes.length; i++) {
                writes[i] = g.submit(0, TestStateMachine.body(i), 10_000).thenAccept(r -> {
                    long index = TestStateMachine.index(r);
                    if (g.lastApplied() < index || g.commitIndex() < index) {
                        behind.add("write at " + index + " acknowledged while the node published applied "
                                + g.lastApplied() + ", commit " + g.commitIndex());
                    }
                });
            }
            CompletableFuture.allOf(writes).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertTrue(behind.isEmpty(), behind.size() + " writes acknowledged ahead of the published progress, e.g. "
                    + behind.stream().limit(3).collect(java.util.stream.Collectors.toList()));
            assertEquals(500, c.checkIdentical(1).length);
        }
    }
}
