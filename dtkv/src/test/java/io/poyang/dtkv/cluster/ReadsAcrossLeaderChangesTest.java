package io.poyang.dtkv.cluster;

import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.client.KvClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads stay linearizable when a node has just become leader (found by the chaos runner, issue 11, after
 * a restart of every node: a read returned a value older than one read five seconds before).
 *
 * <p>A restarted node replays its log only up to the commit index saved in its status file, which after a
 * kill -9 may be far behind (it is saved with term changes); it learns the real commit index when the first entry of its own term commits. A
 * leader that served reads from its applied state at once — as DtKV did — answered from that old state
 * in between. DtKV reads now go through raft's read API (lease read, else ReadIndex), which waits until
 * the leader has committed in its term and applied that far.
 */
class ReadsAcrossLeaderChangesTest {

    private static final String KEY = "counter";
    private static final int WRITES = 200;
    /**
     * Held on every replication message after the restart, so the new leader's first commit takes a while;
     * well below the election timeout (1 s here), so leaders stay leaders on a loaded machine.
     */
    private static final long DELAY_MILLIS = 150;

    @TempDir
    Path dir;

    @Test
    void aLeaderJustElectedAfterARestartOfEveryNodeNeverServesAnOlderValue() throws Exception {
        try (KvTestCluster c = new KvTestCluster(dir, 3, KvTestCluster.testConfig().electionTimeoutMillis(1000), null)
                .start()) {
            KvClient writer = c.client();
            for (int i = 1; i <= WRITES; i++) {
                writer.put(KEY, b(Integer.toString(i)));
            }
            for (int n = 1; n <= 3; n++) {
                c.cluster.stopNode(n);
                // What kill -9 leaves: the status file holds the commit index of its last save (at the last
                // term change), far below the log's end. A clean stop saves the latest one; put the early one back.
                rewindSavedCommitIndex(dir.resolve("node-" + n).resolve("group-1").resolve("status"), 1);
            }
            // Slow replication (votes and appends alike) widens the time between an election and the
            // leader's first commit, when its applied state can still be the replayed, older one.
            for (int a = 1; a <= 3; a++) {
                for (int b = 1; b <= 3; b++) {
                    if (a != b) {
                        c.faults.delay(a, b, DELAY_MILLIS);
                    }
                }
            }
            for (int n = 1; n <= 3; n++) {
                c.cluster.startNode(n);
            }
            KvClient reader = c.client();
            List<String> wrong = new ArrayList<>();
            int answered = 0;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // Read as fast as answers come from the moment the nodes are up: the first answers arrive
            // right after the first election.
            while (answered < 50 && System.nanoTime() - end < 0) {
                try {
                    KvNode node = reader.get(KEY);
                    answered++;
                    String v = node.exists() ? new String(node.value(), StandardCharsets.UTF_8) : "<absent>";
                    if (!v.equals(Integer.toString(WRITES))) {
                        wrong.add(v);
                    }
                } catch (RuntimeException e) {
                    // no leader yet, or the read timed out: it says nothing
                }
            }
            c.faults.heal();
            assertEquals(new ArrayList<String>(), wrong, "reads after the restart returned values older than the "
                    + "last acknowledged write (" + WRITES + ")");
            assertTrue(answered >= 50, "only " + answered + " reads were answered in 20 s");
            c.checkReplicasEqual();
        }
    }

    /**
     * Rewrites the {@code commitIndex} line of a raft status file (text lines ending with a CRC32C line over
     * the rest; see io.poyang.raft.store.StatusFile) to {@code commit}.
     */
    static void rewindSavedCommitIndex(Path status, long commit) throws IOException {
        String text = new String(Files.readAllBytes(status), StandardCharsets.UTF_8);
        String body = text.substring(0, text.lastIndexOf("crc="));
        String rewound = body.replaceFirst("(?m)^commitIndex=\\d+$", "commitIndex=" + commit);
        assertTrue(!rewound.equals(body) || body.contains("commitIndex=" + commit + "\n"),
                "no commitIndex line in " + status + ":\n" + text);
        byte[] bytes = rewound.getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length);
        Files.write(status, (rewound + "crc=" + Long.toHexString(crc.getValue()) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
