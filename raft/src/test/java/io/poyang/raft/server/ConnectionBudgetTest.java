package io.poyang.raft.server;

import io.poyang.net.NioServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A node's replication and service ports share the process's file descriptors: together they take
 * no more connections than the budget the descriptor limit leaves, so a connection flood on both
 * ports still leaves descriptors for the log's segments and snapshots. Clients get most of it.
 */
class ConnectionBudgetTest {

    @TempDir
    Path dir;

    @Test
    void theTwoPortsTogetherStayWithinTheProcesssConnectionBudget() throws Exception {
        int budget = NioServer.connectionBudget();
        assumeTrue(budget > 0, "the JVM cannot tell the file-descriptor limit here");
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            int[] limits = c.server(1).connectionLimits();
            int replication = limits[0];
            int service = limits[1];
            assertTrue(replication > 0 && service > 0, replication + " / " + service);
            assertEquals(budget, replication + service, "the ports share the budget of " + budget);
            assertTrue(service > replication, "clients get most of it: " + replication + " / " + service);
        }
    }
}
