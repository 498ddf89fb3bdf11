package io.poyang.dtkv.server;

import io.poyang.raft.core.RaftConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The raft server settings a LocalKvCluster passes on to its nodes. */
class LocalKvClusterTest {

    @TempDir
    Path dir;

    @Test
    void theLogJournalAndBatchedAppendsReachEveryNodeWhenAsked() {
        try (LocalKvCluster c = new LocalKvCluster(dir, 2, 1, new RaftConfig(), 1, null, null)
                .logJournal(true).batchAppends(true).start()) {
            for (int n = 1; n <= 2; n++) {
                assertTrue(c.server(n).config().logJournal(), "node " + n);
                assertNotNull(c.server(n).logJournalStats(), "node " + n + " keeps a journal");
                assertTrue(c.server(n).config().batchAppends(), "node " + n);
            }
        }
    }

    @Test
    void bothAreOffByDefault() {
        try (LocalKvCluster c = new LocalKvCluster(dir, 1, 1, new RaftConfig(), 1, null, null).start()) {
            assertFalse(c.server(1).config().logJournal());
            assertNull(c.server(1).logJournalStats());
            assertFalse(c.server(1).config().batchAppends());
        }
    }
}
