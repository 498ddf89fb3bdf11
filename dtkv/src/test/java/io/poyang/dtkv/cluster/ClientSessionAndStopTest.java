package io.poyang.dtkv.cluster;

import io.poyang.common.StoppedException;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.dtkv.server.KvConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/**
 * A client's exactly-once session outliving the group's memory of it, and a client stopped with
 * operations still waiting for a leader or a node.
 */
class ClientSessionAndStopTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aClientIdleLongerThanTheSessionTimeoutKeepsWriting() throws Exception {
        KvConfig kvConfig = new KvConfig();
        kvConfig.sessionIdleMillis = 300;
        kvConfig.sessionSweepIntervalMillis = 100;
        try (KvTestCluster c = new KvTestCluster(dir, 3, KvTestCluster.testConfig(), kvConfig).start()) {
            KvClient kv = c.client();
            kv.mkdir("idle");
            kv.put("idle.first", b("1"));
            for (int round = 0; round < 2; round++) {
                long idleUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * kvConfig.sessionIdleMillis);
                KvTestCluster.waitFor("the client's session to go idle for longer than the group keeps it",
                        () -> System.nanoTime() - idleUntil > 0);
                // many writes at once after the gap: those sent while lower seqs were still open are
                // refused by the group (SESSION_EXPIRED) and sent again by the client; all must succeed
                List<CompletableFuture<Long>> writes = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    writes.add(kv.putAsync("idle.k" + i, b(round + "-" + i)));
                }
                for (CompletableFuture<Long> w : writes) {
                    assertTrue(w.get(10, TimeUnit.SECONDS) > 0);
                }
                for (int i = 0; i < 50; i++) {
                    assertEquals(round + "-" + i, new String(kv.get("idle.k" + i).value(), StandardCharsets.UTF_8));
                }
            }
            kv.put("idle.last", b("2"));
            assertEquals("2", new String(kv.get("idle.last").value(), StandardCharsets.UTF_8));
            c.checkReplicasEqual();
        }
    }

    @Test
    void stoppingAClientEndsTheOperationsWaitingForALeaderOrANode() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 1, KvTestCluster.testConfig(), null).start()) {
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(60_000), 1);
            KvClient followerReads = c.clientOf(new KvClientConfig().timeoutMillis(60_000)
                    .readKind(KvReadKind.FOLLOWER_READ), 1);
            kv.mkdir("stop");
            kv.put("stop.k", b("v"));
            assertEquals("v", new String(followerReads.get("stop.k").value(), StandardCharsets.UTF_8));
            c.cluster.stopNode(1);
            // with the only node gone, each waits in its client's retry timer for up to a minute
            CompletableFuture<Long> write = kv.putAsync("stop.k", b("w"));
            CompletableFuture<?> read = followerReads.getAsync("stop.k");
            // a pause, not a synchronisation: it lets both reach their retry timers (what this is about);
            // the assertions below hold wherever they are
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
            assertFalse(write.isDone(), "the write waits for a leader");
            assertFalse(read.isDone(), "the read waits for a node");
            kv.close();
            followerReads.close();
            assertStopped(write);
            assertStopped(read);
        }
    }

    private static void assertStopped(CompletableFuture<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS),
                "ends within seconds of the client's stop, not at its deadline");
        assertTrue(e.getCause() instanceof StoppedException, "failed as stopped: " + e.getCause());
    }
}
