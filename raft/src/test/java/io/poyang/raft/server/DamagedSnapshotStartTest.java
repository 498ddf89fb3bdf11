package io.poyang.raft.server;

import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.core.SnapshotUnreadableException;
import io.poyang.raft.store.LogCounter;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A node whose newest snapshot cannot be read at start: it starts from an older kept snapshot when
 * its log continues that one, and otherwise refuses to start with {@link SnapshotUnreadableException},
 * which names the files and the way out. Before, any unreadable newest snapshot failed the start.
 */
class DamagedSnapshotStartTest {

    /** How the newest snapshot is made unreadable. */
    enum Damage {
        /** A byte of the state flipped: a chunk fails its CRC. */
        FLIPPED_BYTE,
        /** The data file cut short: it no longer has the size its meta file records. */
        TRUNCATED,
        /** The files are intact, but the state machine's readSnapshot throws on the content. */
        MACHINE_CANNOT_PARSE
    }

    private static final int[] NONE = new int[0];

    @TempDir
    Path dir;

    @AfterEach
    void resetSwitches() {
        TestStateMachine.failSnapshotReadAtIndex = 0;
    }

    @ParameterizedTest
    @EnumSource(Damage.class)
    void aNodeWhoseNewestSnapshotCannotBeReadStartsFromTheOlderOneAndReplaysTheLog(Damage damage) throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(16 << 10).snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int node = leader % 3 + 1;
            RaftGroup g = c.group(node, 1);
            long v = writeMany(c, 1, 1_000);
            SnapshotMeta older = snapshotOf(c, node, v);
            v = writeMany(c, v + 1, 1_000);
            SnapshotMeta newer = snapshotOf(c, node, v);
            v = writeMany(c, v + 1, 100);
            // the log below the older snapshot is gone: without it the node could not start at all
            RaftCluster.waitFor("the log below the older snapshot to be deleted", () -> g.firstLogIndex() > 1);
            assertTrue(g.firstLogIndex() <= older.lastIndex() + 1);

            c.stopNode(node);
            Path newerData = dataFile(node, newer);
            byte[] before = damage(damage, newerData, newer);
            c.startNode(node);

            RaftGroup restarted = c.group(node, 1);
            assertEquals(Collections.singletonList(older.lastIndex()),
                    RaftCluster.join(SnapshotProbe.listedIndexes(restarted)),
                    "the newer snapshot is no longer listed: it is neither sent to followers nor kept in place of a good one");
            assertArrayEquals(before, Files.readAllBytes(newerData), "the damaged snapshot's files are left as they are");
            assertTrue(Files.exists(metaFile(node, newer)));
            long last = c.write(1, v + 1);
            RaftCluster.waitFor("the restarted node to apply the log after the older snapshot",
                    () -> restarted.lastApplied() >= last);
            assertEquals(2_101, c.checkIdentical(1).length);

            // its next snapshot is newer than the damaged one, and the node restarts on it
            SnapshotMeta next = RaftCluster.join(restarted.takeSnapshot());
            assertTrue(next.lastIndex() > newer.lastIndex(), next + " after " + newer);
            TestStateMachine.failSnapshotReadAtIndex = 0;
            c.restartNode(node);
            c.write(1, v + 2);
            assertEquals(2_102, c.checkIdentical(1).length);
        }
    }

    /**
     * A newest snapshot whose meta file is damaged is skipped at start; it is never listed, so
     * pruning never reached it: its files stayed for good, and every later start warned about it
     * again. Now the next snapshot written deletes it, and the start after that does not see it.
     */
    @Test
    void aSkippedSnapshotWithADamagedMetaFileIsDeletedByTheNextSnapshotAndNotWarnedAboutAgain() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(16 << 10).snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int node = leader % 3 + 1;
            long v = writeMany(c, 1, 500);
            SnapshotMeta older = snapshotOf(c, node, v);
            v = writeMany(c, v + 1, 500);
            SnapshotMeta newer = snapshotOf(c, node, v);
            v = writeMany(c, v + 1, 50);

            c.stopNode(node);
            Path newerMeta = metaFile(node, newer);
            Path newerData = dataFile(node, newer);
            flipByte(newerMeta, Files.size(newerMeta) / 2);
            String damagedName = newerMeta.getFileName().toString();
            try (LogCounter logs = new LogCounter()) {
                c.startNode(node);
                assertTrue(logs.messages.stream().anyMatch(m -> m.contains(damagedName)),
                        "the skip is warned about: " + logs.messages);
            }
            RaftGroup restarted = c.group(node, 1);
            assertEquals(Collections.singletonList(older.lastIndex()),
                    RaftCluster.join(SnapshotProbe.listedIndexes(restarted)));
            assertTrue(Files.exists(newerMeta) && Files.exists(newerData), "left for inspection until the next snapshot");

            long last = c.write(1, v + 1);
            RaftCluster.waitFor("the restarted node to apply", () -> restarted.lastApplied() >= last);
            SnapshotMeta next = RaftCluster.join(restarted.takeSnapshot());
            assertTrue(next.lastIndex() > newer.lastIndex(), next + " after " + newer);
            RaftCluster.waitFor("the damaged snapshot's files to be deleted",
                    () -> !Files.exists(newerMeta) && !Files.exists(newerData));
            assertTrue(Files.exists(metaFile(node, older)) && Files.exists(metaFile(node, next)),
                    "the sound snapshots are kept");

            try (LogCounter logs = new LogCounter()) {
                c.restartNode(node);
                assertTrue(logs.messages.stream().noneMatch(m -> m.contains(damagedName)),
                        "the start warned about the deleted snapshot again: " + logs.messages);
            }
            assertEquals(java.util.Arrays.asList(older.lastIndex(), next.lastIndex()),
                    RaftCluster.join(SnapshotProbe.listedIndexes(c.group(node, 1))));
            c.write(1, v + 2);
            assertEquals(1_052, c.checkIdentical(1).length);
        }
    }

    @Test
    void theOnlySnapshotUnreadableWithTheLogCompactedFailsTheStartNamingTheFileAndTheWayOut() throws Exception {
        Members one = new Members(new int[]{1}, new int[0]);
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1},
                rc -> rc.segmentBytes(16 << 10).snapshotsToKeep(1)).start()) {
            c.waitForLeader(1);
            RaftGroup g = c.group(1, 1);
            long v = writeMany(c, 1, 1_000);
            SnapshotMeta only = snapshotOf(c, 1, v);
            RaftCluster.waitFor("the log below the snapshot to be deleted", () -> g.firstLogIndex() > 1);
            RaftServer server = c.server(1);
            server.removeGroup(1, false).get(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);

            Path data = dataFile(1, only);
            byte[] before = damage(Damage.FLIPPED_BYTE, data, only);
            CompletableFuture<RaftGroup> adding = server.addGroup(1, TestStateMachine::new, one);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> adding.get(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS));
            SnapshotUnreadableException error = unreadable(e);
            String m = error.getMessage();
            assertTrue(m.contains(data.getFileName().toString()) && m.contains("fails its CRC")
                    && m.contains("no older snapshot") && m.contains("move " + groupDir(1) + " aside")
                    && m.contains("restore the snapshot files from a backup"), m);
            assertEquals(Collections.singletonList(data), error.unreadable());
            assertEquals(groupDir(1), error.groupDir());
            assertNotNull(error.getCause(), "the read's own error is the cause");
            assertArrayEquals(before, Files.readAllBytes(data), "no file is changed");
            assertTrue(Files.exists(metaFile(1, only)), "no file is deleted");
        }
    }

    @Test
    void anOlderSnapshotTheLogWasResetPastFailsTheStartAndTheNodeIsRebuiltAsTheMessageSays() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1},
                rc -> rc.segmentBytes(16 << 10).snapshotsToKeep(2)).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            RaftGroup fg = c.group(follower, 1);
            long v = writeMany(c, 1, 10);
            SnapshotMeta own = snapshotOf(c, follower, v);

            // cut off, the follower misses entries the others compact away: it gets the leader's snapshot
            c.faults.isolate(follower);
            long missedFrom = fg.lastLogIndex() + 1;
            v = writeMany(c, v + 1, 1_500);
            for (int n : c.allNodes()) {
                if (n != follower) {
                    RaftCluster.join(c.group(n, 1).takeSnapshot());
                }
            }
            RaftGroup lg = c.group(leader, 1);
            RaftCluster.waitFor("the leader's log to start after the follower's", () -> lg.firstLogIndex() > missedFrom);
            c.faults.heal();
            long caughtUp = c.write(1, v + 1);
            RaftCluster.waitFor("the follower to install the leader's snapshot and catch up",
                    () -> fg.firstLogIndex() > missedFrom && fg.lastApplied() >= caughtUp);
            java.util.List<Long> listed = RaftCluster.join(SnapshotProbe.listedIndexes(fg));
            assertEquals(2, listed.size(), String.valueOf(listed));
            assertEquals(own.lastIndex(), (long) listed.get(0));
            long received = listed.get(1);

            c.stopNode(follower);
            Path data = newestDataFile(follower, received);
            damage(Damage.FLIPPED_BYTE, data, null);
            Exception e = assertThrows(Exception.class, () -> c.startNode(follower));
            SnapshotUnreadableException error = unreadable(e);
            String m = error.getMessage();
            assertTrue(m.contains(data.getFileName().toString()) && m.contains("the log starts at index")
                    && m.contains(String.format("%020d", own.lastIndex())), m);

            // what the message says to do: out of the group, its directory aside, back into the group
            int[] others = java.util.stream.IntStream.of(c.allNodes()).filter(n -> n != follower).toArray();
            c.onLeader(1, g -> g.prepareMembers(others, NONE, 20_000));
            c.onLeader(1, g -> g.commitMembers(others, NONE, 20_000));
            Files.move(groupDir(follower), dir.resolve("group-1-of-node-" + follower + "-aside"));
            c.setMembers(1, others);
            c.startNode(follower);
            c.addGroup(follower, 1, new Members(others, NONE));
            c.onLeader(1, g -> g.prepareMembers(c.allNodes(), NONE, 20_000));
            c.onLeader(1, g -> g.commitMembers(c.allNodes(), NONE, 20_000));
            c.setMembers(1, c.allNodes());
            c.write(1, v + 2);
            assertEquals(1_512, c.checkIdentical(1).length);
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Writes {@code count} values from {@code from} on; returns the last one. */
    /**
     * A stop while the start reads the older snapshot, after the newest failed its CRC: the stop
     * ends the start as stopped. The abandoned read is not taken for one more damaged snapshot (the
     * start would then look for another older one and, with none left, report the snapshots as
     * unreadable), and nothing read is installed.
     */
    @Test
    void aStopWhileTheStartFallsBackToTheOlderSnapshotEndsTheStartAsStoppedNotAsUnreadable() throws Exception {
        Members one = new Members(new int[]{1}, new int[0]);
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1},
                rc -> rc.logFileIo(io).segmentBytes(16 << 10).snapshotsToKeep(2)).start()) {
            c.waitForLeader(1);
            long v = writeMany(c, 1, 500);
            SnapshotMeta older = snapshotOf(c, 1, v);
            v = writeMany(c, v + 1, 500);
            SnapshotMeta newer = snapshotOf(c, 1, v);
            v = writeMany(c, v + 1, 50);
            RaftServer server = c.server(1);
            server.removeGroup(1, false).get(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
            damage(Damage.FLIPPED_BYTE, dataFile(1, newer), newer);

            java.util.List<TestStateMachine> made = new java.util.concurrent.CopyOnWriteArrayList<>();
            CompletableFuture<RaftGroup> adding;
            try {
                io.holdNextReadUnder(dataFile(1, older));
                adding = server.addGroup(1, () -> {
                    TestStateMachine m = new TestStateMachine();
                    made.add(m);
                    return m;
                }, one);
                assertTrue(io.reached.await(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS),
                        "the start did not fall back to the older snapshot");
                // the read is held: the group stops all the same
                server.group(1).stop().get(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
            } finally {
                io.release();
            }
            // the failed add is answered once the group is unlisted and its files are released
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> adding.get(RaftCluster.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof io.poyang.common.StoppedException
                    && e.getCause().getMessage().contains("stopped while starting"), String.valueOf(e.getCause()));
            for (Throwable t = e; t != null; t = t.getCause()) {
                assertTrue(!(t instanceof SnapshotUnreadableException),
                        "the abandoned read was taken for a damaged snapshot: " + t);
            }
            RaftCluster.waitFor("the group's files to be closed", () -> io.openUnder(groupDir(1)).isEmpty());
            assertEquals(0, io.readsAfterRelease(), "the older snapshot was read on after the stop");
            assertEquals(1, made.size());
            assertEquals(0, made.get(0).count(), "a state read during the stop was installed");

            // added again, it falls back to the older snapshot and has every write
            c.addGroup(1, 1, one);
            c.waitForLeader(1);
            c.write(1, v + 1);
            assertEquals(1_051, c.checkIdentical(1).length);
        }
    }

    /**
     * Before, a meta file the node did not write (a name that is not {@code <index>-<term>}, content
     * that is not a snapshot's) was taken for a damaged snapshot newer than every real one, and no
     * real one could stand in for it: every start of the node failed.
     */
    @Test
    void aForeignMetaFileInTheSnapshotDirectoryIsIgnoredAndTheNodeStartsFromItsSnapshot() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.segmentBytes(16 << 10)).start()) {
            int leader = c.waitForLeader(1);
            int node = leader % 3 + 1;
            long v = writeMany(c, 1, 500);
            SnapshotMeta taken = snapshotOf(c, node, v);
            c.stopNode(node);
            Path foreign = metaFile(node, taken).resolveSibling("copy-of-yesterday.meta");
            Files.write(foreign, "not a snapshot's meta file".getBytes(java.nio.charset.StandardCharsets.UTF_8));

            c.startNode(node);
            RaftGroup restarted = c.group(node, 1);
            assertEquals(Collections.singletonList(taken.lastIndex()),
                    RaftCluster.join(SnapshotProbe.listedIndexes(restarted)));
            assertTrue(Files.exists(foreign), "a file the node did not write is left where it is");
            long last = c.write(1, v + 1);
            RaftCluster.waitFor("the restarted node to apply", () -> restarted.lastApplied() >= last);
            assertEquals(501, c.checkIdentical(1).length);
        }
    }

    private static long writeMany(RaftCluster c, long from, int count) {
        long v = from;
        for (int i = 0; i < count; i++, v++) {
            c.write(1, v);
        }
        return v - 1;
    }

    /** Takes a snapshot on {@code node} once it applied the write of {@code value}. */
    private static SnapshotMeta snapshotOf(RaftCluster c, int node, long value) {
        RaftGroup g = c.group(node, 1);
        RaftCluster.waitFor("node " + node + " to apply value " + value, () -> {
            long[] values = c.values(node, 1);
            return values.length > 0 && values[values.length - 1] == value;
        });
        return RaftCluster.join(g.takeSnapshot());
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, at);
            ch.force(true);
        }
    }

    /** Damages {@code data} (the snapshot of {@code meta}, null when damage is in the file); returns what it then holds. */
    private static byte[] damage(Damage how, Path data, SnapshotMeta meta) throws IOException {
        switch (how) {
            case FLIPPED_BYTE:
                try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ByteBuffer b = ByteBuffer.allocate(1);
                    long at = 8 + 100;   // past the first chunk's header, inside its bytes
                    ch.read(b, at);
                    b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
                    ch.write(b, at);
                    ch.force(true);
                }
                break;
            case TRUNCATED:
                try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
                    ch.truncate(ch.size() / 2);
                    ch.force(true);
                }
                break;
            case MACHINE_CANNOT_PARSE:
                TestStateMachine.failSnapshotReadAtIndex = meta.lastIndex();
                break;
            default:
                fail("unknown damage " + how);
        }
        return Files.readAllBytes(data);
    }

    private static SnapshotUnreadableException unreadable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SnapshotUnreadableException) {
                return (SnapshotUnreadableException) t;
            }
        }
        throw new AssertionError("not a SnapshotUnreadableException", e);
    }

    private Path groupDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1");
    }

    private Path dataFile(int node, SnapshotMeta m) {
        return groupDir(node).resolve("snapshot").resolve(String.format("%020d-%d.data", m.lastIndex(), m.lastTerm()));
    }

    private Path metaFile(int node, SnapshotMeta m) {
        return groupDir(node).resolve("snapshot").resolve(String.format("%020d-%d.meta", m.lastIndex(), m.lastTerm()));
    }

    /** The data file of the snapshot of {@code lastIndex} on {@code node}, whatever its term. */
    private Path newestDataFile(int node, long lastIndex) throws IOException {
        String prefix = String.format("%020d-", lastIndex);
        try (java.util.stream.Stream<Path> s = Files.list(groupDir(node).resolve("snapshot"))) {
            Path[] found = s.filter(p -> p.getFileName().toString().startsWith(prefix)
                    && p.getFileName().toString().endsWith(".data")).toArray(Path[]::new);
            assertEquals(1, found.length, Arrays.toString(found));
            return found[0];
        }
    }
}
