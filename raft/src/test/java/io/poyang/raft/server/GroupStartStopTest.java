package io.poyang.raft.server;

import io.poyang.common.LifeCycle;
import io.poyang.common.StoppedException;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A group's start that does not end in a running group: stopped while it recovers its log, or
 * failed after its log store opened. Either way it gives back every file it opened, and the group
 * can be added again on its directory.
 */
class GroupStartStopTest {

    private static final Members ONE = new Members(new int[]{1}, new int[0]);

    @TempDir
    Path dir;

    /**
     * Before, a stop waited for the start to end: the whole recovery (minutes on a large log), then
     * the replay, and a node's stop with it.
     */
    @Test
    void aGroupStoppedWhileItRecoversItsLogStopsWithoutWaitingForTheRecoveryWhichClosesItsFilesAtItsNextSafePoint()
            throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io).segmentBytes(16 << 10))
                .start()) {
            c.waitForLeader(1);
            for (long v = 1; v <= 300; v++) {
                c.write(1, v);
            }
            RaftServer server = c.server(1);
            server.removeGroup(1, false).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            Path groupDir = dir.resolve("node-1").resolve("group-1");
            assertEquals(Collections.emptyList(), io.openUnder(groupDir));
            CompletableFuture<Void> removal;
            try {
                io.holdNextReadUnder(groupDir.resolve("log"));
                CompletableFuture<RaftGroup> adding = server.addGroup(1, TestStateMachine::new, ONE);
                assertTrue(io.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the recovery read nothing");
                RaftGroup starting = server.group(1);
                removal = server.removeGroup(1, false);

                // the recovery is held in a read: the group stops all the same
                starting.stop().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> adding.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof StoppedException
                        && e.getCause().getMessage().contains("stopped while starting"), String.valueOf(e.getCause()));
                assertFalse(removal.isDone(), "the removal answered while the recovery still had the group's files");
            } finally {
                io.release();
            }
            // the removal completes once the abandoned recovery closed the files at its next safe point
            // (waiting for the files alone raced the removal's own bookkeeping, which follows them)
            removal.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals(null, server.group(1));
            assertEquals(Collections.emptyList(), io.openUnder(groupDir));
            assertEquals(0, io.readsAfterRelease(), "the recovery read on after it was abandoned");

            // the group comes back on its kept files
            c.addGroup(1, 1, ONE);
            c.waitForLeader(1);
            c.write(1, 301);
            assertEquals(301, c.checkIdentical(1).length);
        }
    }

    /**
     * Before, a node's stop that came while the node started (its groups configured in the builder)
     * waited for the whole start: every group's recovery, minutes on large logs. Now it waits only for
     * the recovery's next safe point (here, the one held read), and the start fails as stopped.
     */
    @Test
    void aNodeStoppedWhileItsGroupsRecoverAbandonsTheRecoveryAndItsStartFailsAsStopped()
            throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        Path nodeDir = dir.resolve("node-1");
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io).segmentBytes(16 << 10))
                .start()) {
            c.waitForLeader(1);
            for (long v = 1; v <= 300; v++) {
                c.write(1, v);
            }
            c.stopNode(1);
        }
        Path groupDir = nodeDir.resolve("group-1");
        assertEquals(Collections.emptyList(), io.openUnder(groupDir));

        RaftServer server = RaftServer.builder()
                .nodeId(1)
                .node(1, "127.0.0.1:0")
                .servicePort("127.0.0.1", 0)
                .dataDir(nodeDir)
                .raftConfig(RaftCluster.testConfig().logFileIo(io).segmentBytes(16 << 10))
                .group(1, TestStateMachine::new, new int[]{1})
                .build();
        java.util.concurrent.atomic.AtomicReference<Throwable> startFailure =
                new java.util.concurrent.atomic.AtomicReference<>();
        Thread starter = new Thread(() -> {
            try {
                server.start();
            } catch (Throwable t) {
                startFailure.set(t);
            }
        }, "starter");
        Thread stopper = new Thread(server::stop, "stopper");
        try {
            io.holdNextReadUnder(groupDir.resolve("log"));
            starter.start();
            assertTrue(io.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the recovery read nothing");
            // the stop tells the start, then waits for it (the held read is the recovery's safe point).
            // Wait for what telling it does, the group's start failing at once, not for the stopping
            // thread to be WAITING: on its way to the groups it logs, and a log handler or print
            // stream that locks with a ReentrantLock (as some JDKs' do) parks it there when another
            // thread logs; a release then would let the recovery read on (StopDuringStartTest saw
            // that on CI, its stopping thread parked while the service port's I/O threads ended).
            RaftGroup group = server.group(1);
            stopper.start();
            RaftCluster.waitFor("the group to give up its start", () -> group.startedFuture().isDone());
        } finally {
            io.release();
        }
        stopper.join(TimeUnit.SECONDS.toMillis(RaftCluster.WAIT_SECONDS));
        starter.join(TimeUnit.SECONDS.toMillis(RaftCluster.WAIT_SECONDS));
        assertFalse(stopper.isAlive());
        assertEquals(LifeCycle.Status.STOPPED, server.status());
        assertFalse(starter.isAlive());
        Throwable f = startFailure.get();
        assertTrue(f instanceof StoppedException && f.getMessage().contains("stopped while it started"),
                String.valueOf(f));
        assertEquals(Collections.emptyList(), io.openUnder(groupDir), "the abandoned recovery's files are closed");
        assertEquals(0, io.readsAfterRelease(), "the recovery read on after it was abandoned");
    }

    /**
     * Before, a stop waited for the state machine to read the whole snapshot (minutes for a large
     * one), as the snapshot load did not look at the stop.
     */
    @Test
    void aGroupStoppedWhileItLoadsItsSnapshotStopsWithoutWaitingForTheReadWhichReadsNoMoreAndIsNeverInstalled()
            throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            RaftServer server = c.server(1);
            Path groupDir = removeGroupWithOneSnapshot(c);
            assertEquals(Collections.emptyList(), io.openUnder(groupDir));
            Path data = onlySnapshotDataFile(groupDir);
            List<TestStateMachine> made = new java.util.concurrent.CopyOnWriteArrayList<>();
            CompletableFuture<Void> removal;
            try {
                io.holdNextReadUnder(data);
                CompletableFuture<RaftGroup> adding = server.addGroup(1, () -> {
                    TestStateMachine m = new TestStateMachine();
                    made.add(m);
                    return m;
                }, ONE);
                assertTrue(io.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the snapshot was not read");
                RaftGroup starting = server.group(1);
                removal = server.removeGroup(1, false);

                // the snapshot read is held: the group stops all the same
                starting.stop().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> adding.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof StoppedException
                        && e.getCause().getMessage().contains("stopped while starting"), String.valueOf(e.getCause()));
                assertFalse(removal.isDone(), "the removal answered while the snapshot read still had its file");
            } finally {
                io.release();
            }
            // the removal completes once the abandoned read ended at its next file read and closed the file
            removal.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals(null, server.group(1));
            assertEquals(Collections.emptyList(), io.openUnder(groupDir));
            assertEquals(0, io.readsAfterRelease(), "the snapshot read went on after it was abandoned");
            assertEquals(1, made.size());
            assertEquals(0, made.get(0).count(), "the abandoned read's state was installed");

            // the group comes back on its kept files, its snapshot loaded
            addedBackItTakesTheNextWrite(c);
        }
    }

    /**
     * The start's snapshot read ends, its result on its way to the dispatcher, just before a stop
     * comes: the stop's abandonment of the read comes too late to fail it. Before, the result was
     * installed into the state machine of a start that was then failed as stopped (the docs say a
     * state read during a stop is never installed). The group's dispatcher is held by a task of the
     * test so the read's completion is queued behind it before the stop is asked for.
     */
    @Test
    void aSnapshotReadThatEndsJustBeforeTheStopIsNotInstalled() throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            RaftServer server = c.server(1);
            Path groupDir = removeGroupWithOneSnapshot(c);
            Path data = onlySnapshotDataFile(groupDir);
            List<TestStateMachine> made = new java.util.concurrent.CopyOnWriteArrayList<>();
            StoppedAfterRead r = stopJustAfterTheSnapshotReadEnds(server, io, data, () -> {
                TestStateMachine m = new TestStateMachine();
                made.add(m);
                return m;
            });
            CompletableFuture<RaftGroup> adding = r.adding;
            RaftGroup starting = r.group;
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> adding.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof StoppedException
                    && e.getCause().getMessage().contains("stopped while starting"), String.valueOf(e.getCause()));
            starting.whenFilesReleased().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertEquals(1, made.size());
            assertEquals(0, made.get(0).count(), "the state read before the stop was installed");

            addedBackItTakesTheNextWrite(c);
        }
    }

    /**
     * The start fails on its own (the state machine cannot load the snapshot) just as a stop comes:
     * the start's failure handler turns the error into "stopped while starting" with the error as
     * its cause. Before, it set the cause with {@code initCause}, which a {@link StoppedException}
     * refuses (its cause is set, to null, when it is made): the handler threw, the start's future
     * never completed, and so neither did the group's stop, its removal or its addGroup, and its
     * log files stayed open. The group's dispatcher is held by a task of the test so the read's
     * failure is queued behind it before the stop is asked for.
     */
    @Test
    void aStartThatFailsOnItsOwnJustAsAStopComesEndsAsStoppedAndClosesItsFiles() throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            RaftServer server = c.server(1);
            Path groupDir = removeGroupWithOneSnapshot(c);
            Path data = onlySnapshotDataFile(groupDir);
            IOException cannotLoad = new IOException("test: the state machine cannot load the snapshot");
            StoppedAfterRead r = stopJustAfterTheSnapshotReadEnds(server, io, data, () -> {
                TestStateMachine m = new TestStateMachine();
                m.failReadSnapshot = cannotLoad;
                return m;
            });
            CompletableFuture<RaftGroup> adding = r.adding;
            CompletableFuture<Void> stopping = r.stopping;
            stopping.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> adding.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof StoppedException
                    && e.getCause().getMessage().contains("stopped while starting"), String.valueOf(e.getCause()));
            assertTrue(e.getCause().getCause() == cannotLoad, "the start's own error is the cause: " + e.getCause());
            assertEquals(Collections.emptyList(), io.openUnder(groupDir), "files of the stopped start left open");

            addedBackItTakesTheNextWrite(c);
        }
    }

    /** Before, the log store's segments and index files stayed open until garbage collected. */
    @Test
    void aStartThatFailsAfterItsLogOpenedClosesTheLogsFilesAndTheGroupCanBeAddedAgain() throws Exception {
        TrackingFileIo io = new TrackingFileIo();
        try (RaftCluster c = new RaftCluster(dir, 1, new int[]{1}, rc -> rc.logFileIo(io)).start()) {
            RaftServer server = c.server(1);
            Path groupDir = removeGroupWithOneSnapshot(c);
            assertEquals(Collections.emptyList(), io.openUnder(groupDir));

            IOException cannotLoad = new IOException("the state machine cannot load its snapshot (test)");
            CompletableFuture<RaftGroup> failing = server.addGroup(1, () -> {
                TestStateMachine m = new TestStateMachine();
                m.failReadSnapshot = cannotLoad;
                return m;
            }, ONE);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> failing.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(String.valueOf(e.getCause()).contains("cannot load its snapshot"), String.valueOf(e.getCause()));
            // the start opened the log (segments, index files) before it read the snapshot
            assertEquals(Collections.emptyList(), io.openUnder(groupDir), "files of the failed start still open");

            addedBackItTakesTheNextWrite(c);
        }
    }

    /**
     * Writes 1..20 to group 1 of the one-node cluster, takes a snapshot of them and removes the
     * group from the node, its files kept and closed; returns the group's directory.
     */
    private Path removeGroupWithOneSnapshot(RaftCluster c) throws Exception {
        c.waitForLeader(1);
        for (long v = 1; v <= 20; v++) {
            c.write(1, v);
        }
        c.group(1, 1).takeSnapshot().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
        c.server(1).removeGroup(1, false).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
        return dir.resolve("node-1").resolve("group-1");
    }

    /** The data file of the one snapshot in the group directory. */
    private static Path onlySnapshotDataFile(Path groupDir) throws IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(groupDir.resolve("snapshot"))) {
            List<Path> l = files.filter(p -> p.getFileName().toString().endsWith(".data"))
                    .collect(java.util.stream.Collectors.toList());
            assertEquals(1, l.size(), String.valueOf(l));
            return l.get(0);
        }
    }

    /** Group 1 added back on its files: it elects, takes write 21 on top of 1..20, and is consistent. */
    private static void addedBackItTakesTheNextWrite(RaftCluster c) {
        c.addGroup(1, 1, ONE);
        c.waitForLeader(1);
        c.write(1, 21);
        assertEquals(21, c.checkIdentical(1).length);
    }

    /** What {@link #stopJustAfterTheSnapshotReadEnds} started and asked for. */
    private static final class StoppedAfterRead {
        final CompletableFuture<RaftGroup> adding;
        final RaftGroup group;
        final CompletableFuture<Void> stopping;

        StoppedAfterRead(CompletableFuture<RaftGroup> adding, RaftGroup group, CompletableFuture<Void> stopping) {
            this.adding = adding;
            this.group = group;
            this.stopping = stopping;
        }
    }

    /**
     * Adds group 1 back with {@code machine} and holds its start's read of {@code data}; then holds
     * the group's dispatcher with a task of the test, lets the read run to its end (its result or its
     * failure is queued behind the held dispatcher), asks for the group's stop, and lets the
     * dispatcher go: the stop comes just after the read ended, before the start saw it.
     */
    private static StoppedAfterRead stopJustAfterTheSnapshotReadEnds(RaftServer server, TrackingFileIo io, Path data,
            java.util.function.Supplier<TestStateMachine> machine) throws Exception {
        java.util.concurrent.CountDownLatch dispatcherHeld = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch letDispatcherGo = new java.util.concurrent.CountDownLatch(1);
        try {
            io.holdNextReadUnder(data);
            CompletableFuture<RaftGroup> adding = server.addGroup(1, machine, ONE);
            assertTrue(io.reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "the snapshot was not read");
            RaftGroup starting = server.group(1);
            starting.callInGroup(() -> {
                dispatcherHeld.countDown();
                return letDispatcherGo.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            });
            assertTrue(dispatcherHeld.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            io.release();
            RaftCluster.waitFor("the snapshot read to end", () -> SnapshotProbe.ioTasksInFlight(starting) == 0);
            return new StoppedAfterRead(adding, starting, starting.stop());
        } finally {
            io.release();
            letDispatcherGo.countDown();
        }
    }
}
