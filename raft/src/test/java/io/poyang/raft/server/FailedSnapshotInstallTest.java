package io.poyang.raft.server;

import io.poyang.fiber.FiberGroupSnapshot;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
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

    /**
     * A received snapshot whose install failed while something still read it (a transfer of it to a
     * follower) waits off the list for that reader before its files go. If the node meanwhile
     * applies up to the same index by log and takes its own snapshot there, that one has the same
     * file names: it must not be written while the deletion is pending, or the deletion removes
     * the files of a listed snapshot (the log below it may already be gone).
     */
    @Test
    void aSnapshotTakenUnderTheNameOfAFailedOneStillBeingReadKeepsItsFiles() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            int other = 6 - leader - follower;
            RaftGroup fg = c.group(follower, 1);
            RaftGroup og = c.group(other, 1);
            long first = c.write(1, 1);
            RaftCluster.waitFor("the follower to apply the first write", () -> fg.lastApplied() >= first);
            SnapshotMeta own = RaftCluster.join(fg.takeSnapshot());

            // the follower is cut off; the other follower snapshots past it, and the leader keeps
            // its log, so that the follower can later reach the same index by log
            c.faults.isolate(follower);
            long last = 0;
            for (long v = 2; v <= 50; v++) {
                last = c.write(1, v);
            }
            long end = last;
            RaftCluster.waitFor("the other follower to apply the writes", () -> og.lastApplied() >= end);
            SnapshotMeta others = RaftCluster.join(og.takeSnapshot());
            assertEquals(end, others.lastIndex());
            byte[] data = SnapshotProbe.rechunkedNewest(snapshotDir(other), 4096);

            // its install fails while a reader holds it (as a transfer to a follower would)
            CompletableFuture<Object> reader = new CompletableFuture<>();
            TestStateMachine.onSnapshotRead = meta -> reader.complete(
                    SnapshotProbe.holdReader(fg, meta.lastIndex()).join());
            TestStateMachine.failSnapshotReads = new IOException("test: the state machine cannot read this snapshot");
            try {
                assertFalse(SnapshotProbe.receiveWhole(fg, others, data).get(10, TimeUnit.SECONDS),
                        "a snapshot that was not installed is refused");
            } finally {
                TestStateMachine.failSnapshotReads = null;
                TestStateMachine.onSnapshotRead = null;
            }
            Object held = reader.get(10, TimeUnit.SECONDS);
            assertEquals(Collections.singletonList(own.lastIndex()), RaftCluster.join(SnapshotProbe.listedIndexes(fg)),
                    "only the follower's own snapshot is listed");
            String name = String.format("%020d-%d", others.lastIndex(), others.lastTerm());
            Path sdir = snapshotDir(follower);
            assertTrue(Files.exists(sdir.resolve(name + ".meta")), "the failed snapshot's files wait for their reader");

            // healed, the follower reaches the same index by log, and takes its own snapshot there
            c.faults.heal();
            RaftCluster.waitFor("the follower to catch up by log", () -> fg.lastApplied() >= end);
            assertEquals(end, fg.lastApplied(), "nothing was written after the other follower's snapshot");
            CompletableFuture<SnapshotMeta> taking = fg.takeSnapshot();
            RaftCluster.waitFor("the snapshot to be taken, or to wait for the name", () -> taking.isDone()
                    || isSleeping(fg, "snapshot-1"));
            RaftCluster.join(SnapshotProbe.endReader(fg, held));
            SnapshotMeta taken = taking.get(10, TimeUnit.SECONDS);
            assertEquals(end, taken.lastIndex());
            assertEquals(others.lastTerm(), taken.lastTerm(), "the follower's snapshot has the failed one's name");
            RaftCluster.waitFor("the follower's file tasks to end", () -> SnapshotProbe.ioTasksInFlight(fg) == 0);

            assertEquals(Arrays.asList(own.lastIndex(), end), RaftCluster.join(SnapshotProbe.listedIndexes(fg)));
            assertTrue(Files.exists(sdir.resolve(name + ".meta")) && Files.exists(sdir.resolve(name + ".data")),
                    "the listed snapshot " + name + " has its files");
            assertEquals(Collections.emptyList(), SnapshotProbe.mismatchedMetaFiles(sdir));
            c.restartNode(follower);
            c.write(1, 1_000);
            c.checkIdentical(1);
        } finally {
            TestStateMachine.failSnapshotReads = null;
            TestStateMachine.onSnapshotRead = null;
        }
    }

    /**
     * The leader sends a snapshot the follower lists already (its own here; the leader gave up
     * waiting for the first answer of a transfer, say), and installing it again fails at once: the
     * follower's apply fiber has ended (its machine cannot give a body decoder). That does not make
     * the listed snapshot bad, and the log's start may depend on it; before 99823b9 the receive
     * dropped it all the same: unlisted, its files deleted.
     */
    @Test
    void aListedSnapshotReceivedAgainIsKeptWhenItsInstallFailsBecauseTheApplyFiberEnded() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            RaftGroup before = c.group(follower, 1);
            long last = 0;
            for (long v = 1; v <= 50; v++) {
                last = c.write(1, v);
            }
            long applied = last;
            RaftCluster.waitFor("the follower to apply the writes", () -> before.lastApplied() >= applied);
            SnapshotMeta own = RaftCluster.join(before.takeSnapshot());
            byte[] data = SnapshotProbe.rechunkedNewest(snapshotDir(follower), 4096);
            long entryAfter = c.write(1, 51);
            RaftCluster.waitFor("the follower to apply the entry after its snapshot",
                    () -> before.lastApplied() >= entryAfter);

            // restarted with a machine that cannot give a body decoder, the group loads its snapshot
            // and its apply fiber ends on the entry after it: the group fails, but is not stopping
            c.decoderFailure = new IllegalStateException("test: this machine cannot decode its bodies");
            RaftGroup fg;
            try {
                fg = c.server(follower).restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            } finally {
                c.decoderFailure = null;
            }
            RaftCluster.waitFor("the follower's group to fail", () -> fg.failure() != null);
            assertEquals(Collections.singletonList(own.lastIndex()), RaftCluster.join(SnapshotProbe.listedIndexes(fg)));

            assertFalse(SnapshotProbe.receiveWhole(fg, own, data).get(10, TimeUnit.SECONDS),
                    "a snapshot that was not installed again is refused");
            RaftCluster.waitFor("the follower's file tasks to end", () -> SnapshotProbe.ioTasksInFlight(fg) == 0);
            assertEquals(Collections.singletonList(own.lastIndex()), RaftCluster.join(SnapshotProbe.listedIndexes(fg)),
                    "the follower's own snapshot is still listed");
            String name = String.format("%020d-%d", own.lastIndex(), own.lastTerm());
            Path sdir = snapshotDir(follower);
            assertTrue(Files.exists(sdir.resolve(name + ".meta")) && Files.exists(sdir.resolve(name + ".data")),
                    "the listed snapshot " + name + " has its files");

            // restarted with a machine that decodes, the follower starts from it and catches up
            c.restartNode(follower);
            c.write(1, 52);
            assertEquals(52, c.checkIdentical(1).length);
        }
    }

    private static boolean isSleeping(RaftGroup g, String fiber) {
        FiberGroupSnapshot.FiberInfo f = SnapshotProbe.fibers(g).join().fiber(fiber);
        return f != null && f.waitingOn() != null && f.waitingOn().startsWith("sleep");
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
