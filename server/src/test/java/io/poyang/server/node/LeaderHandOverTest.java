package io.poyang.server.node;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader stopped gracefully hands its group to another voter first: with an election timeout of
 * 4 s, the group has a new leader well before any follower would have timed out and stood.
 */
class LeaderHandOverTest {

    private static final long ELECTION_TIMEOUT_MILLIS = 4_000;

    @TempDir
    Path tmp;
    private InProcessNodes cluster;

    @AfterEach
    void stopAll() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aStoppingLeaderHandsOverBeforeAnElectionTimeout() throws Exception {
        cluster = new InProcessNodes(tmp, 3,
                Collections.singletonMap("electionTimeoutMillis", String.valueOf(ELECTION_TIMEOUT_MILLIS)));
        PoyangNode leader = cluster.awaitLeader(null, 60_000);
        KvClientConfig cfg = cluster.clientConfig().timeoutMillis(30_000);
        try (KvClient kv = new KvClient(cfg)) {
            kv.start();
            kv.put("before", "1");
            long start = System.nanoTime();
            CompletableFuture<Void> stopping = CompletableFuture.runAsync(leader::stop,
                    task -> new Thread(task, "stop").start());   // blocks: the client's callbacks use the common pool
            PoyangNode next = cluster.awaitLeader(leader, 30_000);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis < ELECTION_TIMEOUT_MILLIS - 1_000, "a new leader after " + tookMillis
                    + " ms: handed over, not elected after a timeout");
            stopping.get(60, TimeUnit.SECONDS);
            assertTrue(next != leader);
            kv.put("after", "2");   // the client follows the new leader
            assertEquals("1", kv.getString("before"));
        }
    }
}
