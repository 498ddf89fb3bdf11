package io.poyang.raft.server;

import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.FaultyFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RaftServer#restartGroup}: one group of a running node stops and starts again from its
 * files, with a new state machine, while the node's other groups go on.
 */
class GroupRestartTest {

    @TempDir
    Path dir;

    @Test
    void aGroupWhoseDiskFilledComesBackByARestartOfThatGroupAloneWhileTheNodesOtherGroupGoesOn() throws Exception {
        FullDiskFileIo io = new FullDiskFileIo();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1, 2}, rc -> rc.logFileIo(io)).start()) {
            int leader = c.waitForLeader(1);
            c.waitForLeader(2);
            RaftGroup neighbour = c.group(leader, 2);
            DiskFullTest.Flood flood = new DiskFullTest.Flood(c);
            flood.awaitAcknowledged(1_000);
            // only group 1's directory on the leader's node is full
            io.fill(dir.resolve("node-" + leader).resolve("group-1"));
            RaftCluster.waitFor("group 1 to fail on node " + leader, () -> c.group(leader, 1).failure() != null);
            RaftGroup failed = c.group(leader, 1);
            RaftCluster.waitFor("another leader of group 1", () -> c.waitForLeader(1) != leader);
            flood.awaitAcknowledged(1_000);
            for (long v = 1; v <= 50; v++) {
                c.write(2, v);
            }
            io.free();

            RaftGroup restarted = c.server(leader).restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotSame(failed, restarted);
            assertSame(restarted, c.group(leader, 1));
            assertNull(restarted.failure());
            // the other group of the node was not touched
            assertSame(neighbour, c.group(leader, 2));
            assertNull(neighbour.failure());

            flood.awaitAcknowledged(1_000);
            flood.close();
            // every node (the restarted one too) applied the same entries, with every acknowledged write
            DiskFullTest.checkAcknowledgedApplied(c, flood);
            assertEquals(50, c.checkIdentical(2).length);
        }
    }

    /**
     * A stop changes no role, so the state machine of a leader whose group stops (restarted or
     * removed on a running node, or the node stopping) was never told its leadership ended: what
     * it did as leader (DtKV: the clients' watches it served) was left without a word.
     */
    @Test
    void theStateMachineOfALeaderWhoseGroupRestartsIsToldLastThatItHasNoRole() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}).start()) {
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            TestStateMachine leaderMachine = c.machine(leader, 1);
            TestStateMachine followerMachine = c.machine(follower, 1);
            c.server(leader).restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals(RaftRole.NONE, last(leaderMachine.roleChanges), "the roles told: " + leaderMachine.roleChanges);
            c.removeGroup(follower, 1);
            assertEquals(RaftRole.NONE, last(followerMachine.roleChanges), "the roles told: " + followerMachine.roleChanges);
        }
    }

    private static RaftRole last(java.util.List<RaftRole> roles) {
        return roles.isEmpty() ? null : roles.get(roles.size() - 1);
    }

    /** Holds the rename of one group's status file on one node until released. */
    static final class StatusRenameGate implements FaultyFileIo.Hook {
        final FaultyFileIo io = new FaultyFileIo();
        private volatile Path groupDir;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        StatusRenameGate() {
            io.hook = this;
        }

        /** Holds the renames of the status file in {@code dir} (null: none) from now on. */
        void arm(Path dir) {
            groupDir = dir == null ? null : dir.toAbsolutePath();
        }

        @Override
        public void beforeMove(Path from, Path to) throws IOException {
            Path d = groupDir;
            if (d != null && to.toAbsolutePath().equals(d.resolve("status"))) {
                reached.countDown();
                try {
                    if (!release.await(60, TimeUnit.SECONDS)) {
                        throw new IOException("the test never released the status rename");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException(e);
                }
            }
        }
    }

    @Test
    void whileARestartWaitsForTheOldGroupsFilesTheGroupStaysListedAndAskingAgainJoinsIt() throws Exception {
        StatusRenameGate gate = new StatusRenameGate();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(gate.io)).start()) {
            int follower = c.waitForLeader(1) % 3 + 1;
            RaftGroup old = c.group(follower, 1);
            RaftServer server = c.server(follower);
            CompletableFuture<RaftGroup> restart = restartHeldAtTheOldGroupsStatusSave(c, gate, follower);

            // the old group's status save is held: the restart cannot have started a new group
            assertSame(restart, server.restartGroup(1), "a second restart joins the first");
            assertSame(restart, server.addGroup(1, () -> {
                throw new AssertionError("addGroup made a state machine during a restart");
            }, new Members(new int[]{1, 2, 3}, new int[0])), "addGroup during a restart waits for it");
            assertFalse(restart.isDone());
            assertSame(old, server.group(1), "the group stays listed while it restarts");

            gate.arm(null);
            gate.release.countDown();
            RaftGroup fresh = restart.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotSame(old, fresh);
            assertSame(fresh, server.group(1));
            for (long v = 101; v <= 200; v++) {
                c.write(1, v);
            }
            long[] values = c.checkIdentical(1);
            assertEquals(200, values.length);
            assertEquals(200, values[values.length - 1]);
        }
    }

    @Test
    void aGroupRemovedWhileItRestartsIsNotStartedAgainAndCanBeAddedBack() throws Exception {
        StatusRenameGate gate = new StatusRenameGate();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(gate.io)).start()) {
            int follower = c.waitForLeader(1) % 3 + 1;
            RaftServer server = c.server(follower);
            CompletableFuture<RaftGroup> restart = restartHeldAtTheOldGroupsStatusSave(c, gate, follower);
            CompletableFuture<Void> removal = server.removeGroup(1, false);
            assertNull(server.group(1));
            assertFalse(removal.isDone(), "the removal waits for the old group's files too");
            gate.arm(null);
            gate.release.countDown();

            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> restart.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IllegalStateException && e.getCause().getMessage().contains("removed"),
                    String.valueOf(e.getCause()));
            removal.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertNull(server.group(1));
            IllegalArgumentException notHosted = assertThrows(IllegalArgumentException.class,
                    () -> server.restartGroup(1));
            assertTrue(notHosted.getMessage().contains("does not host raft group 1"), notHosted.getMessage());

            // its files were kept: added back, it recovers them and catches up
            addedBackCatchesUp(c, follower);
        }
    }

    @Test
    void whileARemovalWaitsForTheGroupsFilesItCannotBeAddedAgainAndARepeatedRemovalWaitsToo() throws Exception {
        StatusRenameGate gate = new StatusRenameGate();
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, rc -> rc.logFileIo(gate.io)).start()) {
            int follower = c.waitForLeader(1) % 3 + 1;
            RaftServer server = c.server(follower);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            Path groupDir = dir.resolve("node-" + follower).resolve("group-1");
            gate.arm(groupDir);
            CompletableFuture<Void> removal = server.removeGroup(1, false);
            assertTrue(gate.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the old group saved no status");
            // the old group's last status save is held: its files are in use
            assertNull(server.group(1));
            CompletableFuture<Void> again = server.removeGroup(1, false);
            assertFalse(again.isDone(), "a repeated removal answered before the group's files were released");
            CompletableFuture<RaftGroup> readd = server.addGroup(1, TestStateMachine::new,
                    new Members(new int[]{1, 2, 3}, new int[0]));
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> readd.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(refused.getCause() instanceof IllegalStateException
                    && refused.getCause().getMessage().contains("still being removed"), String.valueOf(refused.getCause()));
            assertNull(server.group(1), "a second group started on the directory the old one still writes to");

            gate.arm(null);
            gate.release.countDown();
            removal.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            again.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertTrue(Files.exists(groupDir.resolve("status")), "the kept data went");
            // now it can come back on its kept files, and catches up
            addedBackCatchesUp(c, follower);
        }
    }

    @Test
    void aGroupWhoseStartFailedIsNotLeftListedAndCanBeAddedOnceTheCauseIsGone() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 1, 1).start()) {
            RaftServer server = c.server(1);
            Path group2 = Files.createDirectories(dir.resolve("node-1").resolve("group-2"));
            Files.write(group2.resolve("status"), new byte[]{1, 2, 3, 4, 5, 6, 7, 8});   // not a status file
            Members one = new Members(new int[]{1}, new int[0]);
            CompletableFuture<RaftGroup> failed = server.addGroup(2, TestStateMachine::new, one);
            assertThrows(ExecutionException.class, () -> failed.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertNull(server.group(2), "a group whose start failed stays listed (and swallows requests)");
            Files.delete(group2.resolve("status"));
            RaftGroup added = c.addGroup(1, 2, one);
            assertSame(added, server.group(2));
            c.write(2, 7);
            assertEquals(1, c.checkIdentical(2).length);
        }
    }

    @Test
    void aGroupWhoseApplyFiberEndedRefusesSnapshotsAndARestartBringsItBackAtOnce() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}).start()) {
            int follower = c.waitForLeader(1) % 3 + 1;
            for (long v = 1; v <= 20; v++) {
                c.write(1, v);
            }
            RaftServer server = c.server(follower);
            // restarted with a machine that cannot give a decoder: its apply fiber ends on the first entry
            c.decoderFailure = new IllegalStateException("this build of the machine cannot decode its bodies");
            RaftGroup broken = server.restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            RaftCluster.waitFor("group 1 to fail on node " + follower, () -> broken.failure() != null);
            // a snapshot must not wait for the ended apply fiber (and hold the group's stop with it)
            CompletableFuture<?> snapshot = broken.takeSnapshot();
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> snapshot.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(String.valueOf(refused.getCause().getMessage()).contains("apply fiber"),
                    String.valueOf(refused.getCause()));

            c.decoderFailure = null;
            // well inside the 30 s the restart gives the old group's files before it gives up
            RaftGroup fresh = server.restartGroup(1).get(20, TimeUnit.SECONDS);
            assertNull(fresh.failure());
            for (long v = 21; v <= 40; v++) {
                c.write(1, v);
            }
            assertEquals(40, c.checkIdentical(1).length);
        }
    }

    @Test
    void aRestartWhoseStateMachineCannotBeMadeFailsWithTheCauseAndCanBeRepeated() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}).start()) {
            int follower = c.waitForLeader(1) % 3 + 1;
            for (long v = 1; v <= 20; v++) {
                c.write(1, v);
            }
            RaftServer server = c.server(follower);
            c.supplierFailure = new IllegalStateException("the state machine's database is not reachable");
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> server.restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertSame(c.supplierFailure, e.getCause());
            assertNotNull(server.group(1), "the stopped group stays listed");

            c.supplierFailure = null;
            RaftGroup fresh = server.restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertNull(fresh.failure());
            assertSame(fresh, server.group(1));
            for (long v = 21; v <= 40; v++) {
                c.write(1, v);
            }
            assertEquals(40, c.checkIdentical(1).length);
        }
    }

    /**
     * The new state machine is the embedding's code: made on the old group's dispatcher thread (where
     * its files were released) it blocked that thread's other groups and met their per-thread state.
     */
    @Test
    void aRestartMakesTheNewStateMachineOnTheCallbackExecutorNotOnARaftThread() throws Exception {
        java.util.concurrent.ExecutorService callbacks = java.util.concurrent.Executors.newSingleThreadExecutor(
                r -> new Thread(r, "embedding-callbacks"));
        try (RaftCluster c = new RaftCluster(dir, 1, 1)) {
            c.callbackExecutor = callbacks;
            c.start();
            c.waitForLeader(1);
            c.write(1, 1);
            RaftGroup fresh = c.server(1).restartGroup(1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals("embedding-callbacks", c.lastMachineMadeOn.getName(),
                    "the restart's state machine supplier ran on " + c.lastMachineMadeOn.getName());
            assertSame(fresh, c.group(1, 1));
            c.write(1, 2);
            assertEquals(2, c.checkIdentical(1).length);
        } finally {
            callbacks.shutdown();
        }
    }

    @Test
    void whileARemovalDeletesTheGroupsDataItCannotBeAddedAgain() throws Exception {
        // the removal's layout update runs after the group's files are released and before its
        // directory is deleted: held there, an addGroup lands in that window
        HeldLayout held = new HeldLayout();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> { })) {
            RaftServer server = held.startWithOneHundredValues(c);
            Path groupDir = dir.resolve("node-1").resolve("group-1");
            held.armed.set(true);
            CompletableFuture<Void> removal = server.removeGroup(1, true);
            try {
                assertTrue(held.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the removal recorded no layout");
                CompletableFuture<RaftGroup> readd = server.addGroup(1, TestStateMachine::new,
                        new Members(new int[]{1}, new int[0]));
                ExecutionException refused = assertThrows(ExecutionException.class,
                        () -> readd.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS),
                        "a group was added on the directory the removal is about to delete");
                assertTrue(refused.getCause() instanceof IllegalStateException
                        && refused.getCause().getMessage().contains("still being removed"), String.valueOf(refused.getCause()));
            } finally {
                held.release.countDown();
            }
            removal.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertFalse(Files.exists(groupDir), "the removed group's directory was not deleted");

            // once the removal is done, the group is added anew, empty, and its files stay
            assertNotNull(c.addGroup(1, 1, new Members(new int[]{1}, new int[0])));
            c.waitForLeader(1);
            c.write(1, 7);
            long[] applied = c.checkIdentical(1);
            assertEquals(1, applied.length, "the group added again holds only its own write");
            assertTrue(Files.isDirectory(groupDir.resolve("log")), "the group added again has no log directory");
        }
    }

    @Test
    void aSecondRemovalWaitsForTheFirstSoThatTheGroupIsNotAddedWhileTheFirstStillDeletes() throws Exception {
        HeldLayout held = new HeldLayout();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> { })) {
            RaftServer server = held.startWithOneHundredValues(c);
            Path groupDir = dir.resolve("node-1").resolve("group-1");
            held.armed.set(true);
            CompletableFuture<Void> first = server.removeGroup(1, true);
            CompletableFuture<Void> second;
            try {
                assertTrue(held.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the removal recorded no layout");
                // the first removal is held before its deletion; the second must not run its own meanwhile
                second = server.removeGroup(1, true);
                assertThrows(java.util.concurrent.TimeoutException.class, () -> second.get(500, TimeUnit.MILLISECONDS),
                        "the second removal ended while the first had not yet deleted anything");
                CompletableFuture<RaftGroup> readd = server.addGroup(1, TestStateMachine::new,
                        new Members(new int[]{1}, new int[0]));
                ExecutionException refused = assertThrows(ExecutionException.class,
                        () -> readd.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS),
                        "a group was added on the directory the first removal is about to delete");
                assertTrue(refused.getCause() instanceof IllegalStateException, String.valueOf(refused.getCause()));
            } finally {
                held.release.countDown();
            }
            first.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            second.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertFalse(Files.exists(groupDir), "the removed group's directory was not deleted");
            assertNotNull(c.addGroup(1, 1, new Members(new int[]{1}, new int[0])));
            c.waitForLeader(1);
            c.write(1, 7);
            assertEquals(1, c.checkIdentical(1).length, "the group added again holds only its own write");
        }
    }

    /**
     * A deletion that fails half way left some of the group's files in {@code group-<id>}: a group
     * added again (or the node's next start) would recover a mix of its predecessor's state and
     * nothing. The directory is now moved aside first, so what a failed deletion leaves is
     * {@code group-<id>.removed}: the group added again starts empty, and the next start deletes it.
     */
    @Test
    void aDeletionThatFailsHalfWayLeavesNoHalfDeletedGroupAndTheNextStartDeletesTheRest() throws Exception {
        FaultyFileIo io = new FaultyFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            c.waitForLeader(1);
            RaftServer server = c.server(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            Path groupDir = dir.resolve("node-1").resolve("group-1");
            Path aside = dir.resolve("node-1").resolve("group-1.removed");
            assertTrue(Files.exists(groupDir.resolve("status")), "the group has no status file: the test deletes nothing it names");
            java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeDelete(Path file) throws IOException {
                    if (file.getFileName().toString().equals("status")) {
                        refused.incrementAndGet();
                        throw new IOException("injected: the disk refused the delete");
                    }
                }
            };
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> server.removeGroup(1, true).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(failed.getCause() instanceof java.io.UncheckedIOException
                    && failed.getCause().getMessage().contains("deleting its data failed"), String.valueOf(failed.getCause()));
            assertEquals(1, refused.get(), "the injected failure did not happen");
            assertFalse(Files.exists(groupDir), "a half-deleted group directory was left in place");
            assertTrue(Files.exists(aside.resolve("status")), "the failed deletion left nothing aside: the test shows nothing");

            // the group added again starts empty, not on the old files
            assertNotNull(c.addGroup(1, 1, new Members(new int[]{1}, new int[0])));
            c.waitForLeader(1);
            c.write(1, 7);
            assertEquals(1, c.checkIdentical(1).length, "the group added again holds only its own write");

            io.hook = new FaultyFileIo.Hook() {
            };
            c.restartNode(1);
            assertFalse(Files.exists(aside), "the next start did not delete what the removal left");
            c.write(1, 8);
            assertEquals(2, c.checkIdentical(1).length, "the group lost its writes in the restart");
        }
    }

    /**
     * A layout listener that, once armed, holds its next call until released: a removal's layout
     * update runs after the group's files are released and before its directory is deleted, so a
     * removal held there lets a test act in that window.
     */
    private static final class HeldLayout {
        final java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        /** Starts the one-node cluster {@code c} with this listener and writes 100 values to group 1. */
        RaftServer startWithOneHundredValues(RaftCluster c) {
            c.serverTweak = b -> b.layoutListener(() -> {
                if (armed.compareAndSet(true, false)) {
                    reached.countDown();
                    try {
                        release.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            c.start();
            c.waitForLeader(1);
            for (long v = 1; v <= 100; v++) {
                c.write(1, v);
            }
            return c.server(1);
        }
    }

    /** Adds group 1 (100 values written) back on {@code node} from its kept files; 50 more writes reach every node. */
    private static void addedBackCatchesUp(RaftCluster c, int node) {
        RaftGroup back = c.addGroup(node, 1, new Members(new int[]{1, 2, 3}, new int[0]));
        assertNotNull(back);
        for (long v = 101; v <= 150; v++) {
            c.write(1, v);
        }
        assertEquals(150, c.checkIdentical(1).length);
    }

    /**
     * Writes 100 values, then restarts group 1 on {@code node} while {@code gate} holds the old
     * group's status save (its stop): the restart returned is not done.
     */
    private CompletableFuture<RaftGroup> restartHeldAtTheOldGroupsStatusSave(RaftCluster c, StatusRenameGate gate,
                                                                            int node) throws InterruptedException {
        for (long v = 1; v <= 100; v++) {
            c.write(1, v);
        }
        gate.arm(dir.resolve("node-" + node).resolve("group-1"));
        CompletableFuture<RaftGroup> restart = c.server(node).restartGroup(1);
        assertTrue(gate.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the old group saved no status");
        return restart;
    }
}
