package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetNotSentException;
import io.poyang.net.RpcCallback;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.raft.server.FreezableProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader that stops answering the client as well as its peers — its process paused (SIGSTOP, a long
 * GC pause, a frozen VM) or the network to it black-holed — while its connection stays open: nothing
 * comes back and no reset closes it. KvClient's heartbeat (1 s by default) finds the silent connection
 * in about 2 s and closes it, and the writes pending there (all exactly-once: KvClient's session and
 * seq) go to the new leader and are applied once within their deadline. With the network layer's 10 s
 * heartbeat they waited out their deadline on the silent connection and ended outcome-unknown.
 */
class WritesOnASilentLeaderTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void writesPendingOnALeaderThatWentSilentAreAppliedOnceByTheNewLeaderBeforeTheirDeadline() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3).start()) {
            FreezableProxy[] proxies = new FreezableProxy[4];
            try {
                long deadlineMillis = 8_000;
                KvClientConfig cfg = new KvClientConfig().timeoutMillis(deadlineMillis);
                for (int n = 1; n <= 3; n++) {
                    proxies[n] = new FreezableProxy(c.cluster.servicePort(n), 64 * 1024);
                    cfg.node(n, proxies[n].address());
                }
                KvClient kv = c.clientOf(cfg);
                int keys = 8;
                for (int i = 0; i < keys; i++) {
                    kv.put("k" + i, b("0"));
                }
                kv.put("plain", b("0"));
                int oldLeader = c.leader();
                assertEquals(oldLeader, kv.raftClient().knownLeader(1), "the client writes to the leader");

                // nothing the frozen leader says later (a "stepped down" answer) reaches the client
                proxies[oldLeader].freeze();
                // Compare-and-sets: a second application of one would fail (CAS_MISMATCH) and answer
                // false, so every answer true and every value as set means each was applied once.
                List<CompletableFuture<Boolean>> pending = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    pending.add(kv.compareAndSetAsync("k" + i, b("0"), b("1")));
                }
                // seq 0: no session, so it must never be sent twice; it ends outcome-unknown
                CompletableFuture<KvResp> plain = new CompletableFuture<>();
                kv.raftClient().callLeader(1, KvCommands.KV_WRITE, KvReq.put("plain", b("1")).groupId(1),
                        KvResp.Decoder::new, deadlineMillis, RpcCallback.completing(plain));
                c.faults.isolate(oldLeader);

                for (int i = 0; i < keys; i++) {
                    assertTrue(pending.get(i).get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS),
                            "compare-and-set of k" + i);
                }
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> plain.get(deadlineMillis + 5_000, TimeUnit.MILLISECONDS));
                assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause(), "a write with no session");
                Throwable why = e.getCause().getCause();
                assertTrue(why instanceof NetConnectionException && !(why instanceof NetNotSentException),
                        "the write without a session ended when the silent connection was closed: " + why);
                assertNotEquals(oldLeader, kv.raftClient().knownLeader(1), "the client writes to the new leader");

                c.faults.heal();
                for (int i = 0; i < keys; i++) {
                    assertEquals("1", kv.get("k" + i).valueAsString(), "k" + i);
                }
                assertEquals("0", kv.get("plain").valueAsString(),
                        "the write without a session never left the silent connection, and was not sent again");
                c.checkReplicasEqual();
            } finally {
                for (FreezableProxy p : proxies) {
                    if (p != null) {
                        p.close();
                    }
                }
                c.faults.heal();
            }
        }
    }
}
