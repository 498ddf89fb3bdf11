package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A snapshot received from the leader is committed to disk and listed before the state machine
 * installs it. When the install fails, it must not stay listed as a good snapshot.
 */
class FailedSnapshotInstallTest {

    @TempDir
    Path dir;

    @Test
    void aReceivedSnapshotThatFailsToInstallIsUnlistedAndDeletedNotTakenForAGoodOne() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            RaftGroup lg = c.group(leader, 1);
            RaftGroup fg = c.group(follower, 1);
            long first = c.write(1, 1);
            RaftCluster.waitFor("the follower to apply the first write", () -> fg.lastApplied() >= first);
            SnapshotMeta own = RaftCluster.join(fg.takeSnapshot());

            // the follower is cut off while the leader goes on and snapshots past it
            c.faults.isolate(follower);
            for (long v = 2; v <= 300; v++) {
                c.write(1, v);
            }
            SnapshotMeta leaders = RaftCluster.join(lg.takeSnapshot());
            long applied = fg.lastApplied();
            assertTrue(leaders.lastIndex() > applied);
            byte[] fromLeader = SnapshotProbe.rechunkedNewest(snapshotDir(leader), 4096);

            TestStateMachine.failSnapshotReads = new IOException("test: the state machine cannot read this snapshot");
            try {
                assertFalse(SnapshotProbe.receiveWhole(fg, leaders, fromLeader).get(10, TimeUnit.SECONDS),
                        "a snapshot that was not installed is refused");
            } finally {
                TestStateMachine.failSnapshotReads = null;
            }
            assertEquals(applied, fg.lastApplied(), "nothing was installed");
            assertEquals(Collections.singletonList(own.lastIndex()), RaftCluster.join(SnapshotProbe.listedIndexes(fg)),
                    "only the follower's own snapshot is listed");
            String failedName = String.format("%020d-%d", leaders.lastIndex(), leaders.lastTerm());
            RaftCluster.waitFor("the failed snapshot's files to be deleted", () -> !hasFileStartingWith(
                    snapshotDir(follower), failedName));
            // a snapshot asked of the follower is of its own state, not the one it failed to install
            SnapshotMeta taken = RaftCluster.join(fg.takeSnapshot());
            assertEquals(fg.lastApplied(), taken.lastIndex(), "the follower snapshots what it applied");

            // healed, it gets the leader's snapshot again (the leader's log starts after it), and it
            // starts again from what it keeps
            c.faults.heal();
            long after = c.write(1, 1_000);
            RaftCluster.waitFor("the follower to catch up", () -> fg.lastApplied() >= after);
            c.restartNode(follower);
            c.write(1, 1_001);
            c.checkIdentical(1);
        } finally {
            TestStateMachine.failSnapshotReads = null;
        }
    }

    private Path snapshotDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1").resolve("snapshot");
    }

    private static boolean hasFileStartingWith(Path d, String prefix) {
        try (Stream<Path> s = Files.list(d)) {
            return s.anyMatch(p -> p.getFileName().toString().startsWith(prefix));
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }
}
