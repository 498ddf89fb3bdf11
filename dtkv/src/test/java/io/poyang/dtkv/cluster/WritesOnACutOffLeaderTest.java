package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftOutcomeUnknownException;
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
 * Writes that a leader takes after it was cut off from its peers, while the client still reaches it:
 * the leader can never commit them and steps down an election timeout later. They must be done by
 * the new leader within their deadline, once each, instead of ending outcome-unknown.
 */
class WritesOnACutOffLeaderTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void writesTakenByALeaderCutOffFromItsPeersAreAppliedOnceByTheNewLeaderBeforeTheirDeadline() throws Exception {
        // a 1 s election timeout leaves the writes below ample time to reach the old leader before it
        // steps down, even on a loaded machine; the deadline leaves room for the election after it
        try (KvTestCluster c = new KvTestCluster(dir, 3, KvTestCluster.testConfig().electionTimeoutMillis(1_000), null)
                .start()) {
            KvClient kv = c.clientOf(new KvClientConfig().timeoutMillis(20_000), 1, 2, 3);
            int keys = 8;
            for (int i = 0; i < keys; i++) {
                kv.put("k" + i, b("0"));
            }
            kv.put("n", b("0"));
            int oldLeader = c.leader();
            assertEquals(oldLeader, kv.raftClient().knownLeader(1), "the client writes to the leader");
            long committedBefore = c.group(oldLeader).commitIndex();

            c.faults.isolate(oldLeader);
            // Compare-and-sets: a second application of one would fail (CAS_MISMATCH) and answer false,
            // so every answer true and every value as set once means each was applied exactly once.
            List<CompletableFuture<Boolean>> concurrent = new ArrayList<>();
            for (int i = 0; i < keys; i++) {
                concurrent.add(kv.compareAndSetAsync("k" + i, b("0"), b("1")));
            }
            // and a chain on one key, each write sent once the one before it is answered
            for (int v = 0; v < 3; v++) {
                assertTrue(kv.compareAndSet("n", b(String.valueOf(v)), b(String.valueOf(v + 1))),
                        "compare-and-set of n from " + v);
            }
            for (int i = 0; i < keys; i++) {
                assertTrue(concurrent.get(i).get(30, TimeUnit.SECONDS), "compare-and-set of k" + i);
            }

            // the old leader did take writes it could not commit (the case under test)
            assertTrue(c.group(oldLeader).lastLogIndex() > c.group(oldLeader).commitIndex(),
                    "the cut-off leader " + oldLeader + " holds uncommitted writes");
            assertEquals(committedBefore, c.group(oldLeader).commitIndex(), "the cut-off leader committed nothing");
            int newLeader = c.leader();
            assertTrue(newLeader != oldLeader, "a node of the majority leads");
            for (int i = 0; i < keys; i++) {
                assertEquals("1", kv.get("k" + i).valueAsString(), "k" + i);
            }
            assertEquals("3", kv.get("n").valueAsString());

            c.faults.heal();
            c.checkReplicasEqual();
        }
    }

    @Test
    void aWriteWithoutASessionIsNotAnsweredAtTheStepDownAndNotSentAgain() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3, KvTestCluster.testConfig().electionTimeoutMillis(1_000), null)
                .start()) {
            KvClient kv = c.clientOf(new KvClientConfig(), 1, 2, 3);
            kv.put("plain", b("0"));
            int oldLeader = c.leader();
            c.faults.isolate(oldLeader);
            // seq 0: the store cannot tell a second copy from a new write, so the cut-off leader keeps it
            // (it may still commit) and the raft client never sends it again; only its deadline ends it
            CompletableFuture<KvResp> plain = new CompletableFuture<>();
            kv.raftClient().callLeader(1, KvCommands.KV_WRITE, KvReq.put("plain", b("1")).groupId(1),
                    KvResp.Decoder::new, 4_000, RpcCallback.completing(plain));
            ExecutionException e = assertThrows(ExecutionException.class, () -> plain.get(30, TimeUnit.SECONDS));
            assertInstanceOf(RaftOutcomeUnknownException.class, e.getCause(), "a write with no session sent once");
            Throwable answer = e.getCause().getCause();
            if (answer instanceof RemoteException) {
                // the leader's answer at the deadline, not at the step-down
                assertEquals(ResponseCode.SYS_ERROR, ((RemoteException) answer).responseCode());
                assertNotEquals(RaftCommands.SYS_ERROR_STEPPED_DOWN, ((RemoteException) answer).bizCode(),
                        "a write without a session was answered at the step-down: " + answer);
            }
            assertTrue(c.group(oldLeader).lastLogIndex() > c.group(oldLeader).commitIndex(),
                    "the cut-off leader took the write");
            c.faults.heal();
            assertEquals("0", kv.get("plain").valueAsString(), "the cut-off leader's entry was overwritten");
            c.checkReplicasEqual();
        }
    }
}
