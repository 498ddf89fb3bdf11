package io.poyang.raft.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The AppendEntries that one round of a node's dispatcher sends to another node, for several
 * groups, leave as one APPEND_ENTRIES_BATCH frame, answered once; every group replicates as
 * before. A node that does not know the command gets its appends one by one.
 */
class BatchedAppendsTest {

    private static final int[] GROUPS = {1, 2, 3, 4};

    @TempDir
    Path dir;

    @Test
    void theAppendsOfFourGroupsOnOneDispatcherLeaveInBatchesAndEveryGroupStaysConsistent() {
        try (RaftCluster c = new RaftCluster(dir, 3, GROUPS)) {
            c.dispatchers = 1;
            c.serverTweak = b -> b.batchAppends(true);
            c.start();
            List<LoadGenerator> loads = load(c, 300);
            long batches = 0;
            long inBatches = 0;
            for (int n = 1; n <= 3; n++) {
                batches += c.server(n).replicationTransport().batchesSent();
                inBatches += c.server(n).replicationTransport().appendsInBatches();
            }
            assertTrue(batches > 0, "no batch of appends was sent");
            assertTrue(inBatches >= 2 * batches, inBatches + " appends in " + batches + " batches");
            check(c, loads);
        }
    }

    @Test
    void aNodeThatDoesNotKnowBatchesGetsItsAppendsOneByOneAndKeepsUp() {
        try (RaftCluster c = new RaftCluster(dir, 3, GROUPS)) {
            c.dispatchers = 1;
            c.nodeServerTweak = (id, b) -> {
                b.batchAppends(true);
                if (id == 3) {
                    b.refuseBatchedAppendsForTests();
                }
            };
            c.start();
            // node 1 leads every group, so each of its rounds has appends of several groups for node 3
            for (int g : GROUPS) {
                if (c.waitForLeader(g) != 1) {
                    RaftCluster.join(c.group(c.waitForLeader(g), g).transferLeadership(1, 10_000));
                }
                RaftCluster.waitFor("node 1 to lead group " + g, () -> c.group(1, g).isLeader());
            }
            List<LoadGenerator> loads = load(c, 300);
            ReplicationTransport t = c.server(1).replicationTransport();
            assertFalse(t.batchesAppendsTo(3), "node 1 still sends batches to node 3, which refuses them");
            assertTrue(t.batchesAppendsTo(2), "node 1 stopped sending batches to node 2, which takes them");
            assertTrue(t.batchesSent() > 0, "node 1 sent no batch");
            // node 3 holds every group's values (checkIdentical compares all three nodes)
            check(c, loads);
        }
    }

    @Test
    void byDefaultNoBatchIsSent() {
        try (RaftCluster c = new RaftCluster(dir, 3, GROUPS)) {
            c.dispatchers = 1;
            c.start();
            List<LoadGenerator> loads = load(c, 100);
            for (int n = 1; n <= 3; n++) {
                assertEquals(0, c.server(n).replicationTransport().batchesSent(), "node " + n + " sent batches");
            }
            check(c, loads);
        }
    }

    /** Writes to every group until each has {@code acknowledged} answers, then stops writing. */
    private static List<LoadGenerator> load(RaftCluster c, int acknowledged) {
        List<LoadGenerator> loads = new ArrayList<>();
        for (int g : GROUPS) {
            c.waitForLeader(g);
            loads.add(new LoadGenerator(c, g, 20, g * 10_000_000L));
        }
        for (LoadGenerator l : loads) {
            l.awaitAcknowledged(acknowledged);
        }
        for (LoadGenerator l : loads) {
            l.close();
        }
        return loads;
    }

    private static void check(RaftCluster c, List<LoadGenerator> loads) {
        for (int i = 0; i < GROUPS.length; i++) {
            loads.get(i).checkApplied(c.checkIdentical(GROUPS[i]), " (group " + GROUPS[i] + ")");
        }
    }
}
