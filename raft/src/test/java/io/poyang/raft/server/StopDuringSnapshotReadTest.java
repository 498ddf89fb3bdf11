package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.store.FaultyFileIo;
import io.poyang.raft.store.OpenFilesIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node stopped while a snapshot is being read, chunk by chunk: into a follower's state machine
 * (the install of a snapshot from the leader), or by the leader to send it to a follower. The stop
 * does not wait for the rest of the read: the read ends at its next chunk, the snapshot's file is
 * closed, and no thread of the stopped node is left.
 */
class StopDuringSnapshotReadTest {

    /** Well under the old waits: a node's 30 s for its groups and 30 s for its log I/O threads, a 120 s RPC timeout. */
    private static final long STOP_BOUND_SECONDS = 20;

    @TempDir
    Path dir;

    /**
     * Before, the install's read was not abandoned: the follower's apply fiber waited for the whole
     * read, the group's stop with it (the node gave up on it after 30 s), and then the node waited
     * up to 30 s more for its log I/O thread, which went on reading (here: forever, the read being
     * held) and was left running.
     */
    @Test
    void aFollowerStoppedWhileItsStateMachineReadsASnapshotFromTheLeaderStopsAndTheReadEndsAtTheNextChunk()
            throws Exception {
        SnapshotReadGate gate = new SnapshotReadGate();
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            SnapshotToInstall todo = new SnapshotToInstall(c);
            int follower = todo.follower;
            RaftGroup fg = todo.group;
            c.machine(follower, 1).snapshotStream = gate::wrap;

            gate.letThrough(2);
            CompletableFuture<Boolean> received = todo.receive();
            RaftCluster.waitFor("the follower's state machine to read two chunks of the snapshot",
                    () -> gate.chunksRead() == 2 && gate.waiting());
            CompletableFuture<Void> nodeStopped;
            int readAtStop = gate.chunksRead();
            try {
                // the group's stop first, so the read is abandoned before the next chunk is let through
                fg.stop();
                nodeStopped = CompletableFuture.runAsync(() -> c.stopNode(follower));
                for (int i = 0; i < 3 && !gate.ended(); i++) {
                    gate.stepOneChunk();
                }
                assertTrue(gate.ended(), "the snapshot read went on after the stop: " + (gate.chunksRead() - readAtStop)
                        + " more chunks read, and it waits for the next");
                assertTrue(String.valueOf(gate.endedWith()).contains("abandoned"), String.valueOf(gate.endedWith()));
                nodeStopped.get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
            } finally {
                gate.open();
            }
            assertFalse(received.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "a stopped follower took the snapshot");
            RaftCluster.waitFor("the stopped node's threads to end", 10, () -> threadsOf(follower).isEmpty());
        }
    }

    /**
     * The install's read ends, its result on its way to the follower's dispatcher, just before a
     * stop comes: too late for the stop to abandon it. Before, the stopping follower installed it
     * all the same and reset its log after it while its stop closed the log. The dispatcher is held
     * by a task of the test so the read's completion is queued behind it before the stop is asked for.
     */
    @Test
    void aSnapshotFromTheLeaderReadJustBeforeTheFollowerStopsIsNotInstalled() throws Exception {
        try (RaftCluster c = new RaftCluster(dir, 3, 1).start()) {
            SnapshotToInstall todo = new SnapshotToInstall(c);
            RaftGroup fg = todo.group;
            TestStateMachine machine = c.machine(todo.follower, 1);
            int before = RaftCluster.join(fg.callInGroup(machine::count));
            SnapshotReadGate gate = new SnapshotReadGate();
            machine.snapshotStream = gate::wrap;
            CompletableFuture<Boolean> received = todo.receive();
            CountDownLatch dispatcherHeld = new CountDownLatch(1);
            CountDownLatch letDispatcherGo = new CountDownLatch(1);
            CompletableFuture<Void> stopped;
            try {
                RaftCluster.waitFor("the follower's state machine to read the snapshot", gate::waiting);
                fg.callInGroup(() -> {
                    dispatcherHeld.countDown();
                    return letDispatcherGo.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                });
                assertTrue(dispatcherHeld.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
                gate.open();
                RaftCluster.waitFor("the snapshot read to end", () -> SnapshotProbe.ioTasksInFlight(fg) == 0);
                assertTrue(gate.ended() && gate.endedWith() == null, "the read did not end well: " + gate.endedWith());
                stopped = fg.stop();
            } finally {
                gate.open();
                letDispatcherGo.countDown();
            }
            stopped.get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
            assertFalse(received.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "a stopped follower took the snapshot");
            assertEquals(before, machine.count(), "the stopping follower installed the snapshot");
        }
    }

    /**
     * A follower (isolated, so the leader sends it nothing) and a snapshot of the leader's that
     * covers 300 writes it missed, re-cut into ~80 chunks of 64 bytes: it must read the snapshot
     * into its state machine to install it, chunk by chunk.
     */
    private final class SnapshotToInstall {
        final int follower;
        final RaftGroup group;
        private final SnapshotMeta meta;
        private final byte[] dataFile;

        SnapshotToInstall(RaftCluster c) throws IOException {
            int leader = c.waitForLeader(1);
            follower = leader % 3 + 1;
            c.faults.isolate(follower);
            for (long v = 1; v <= 300; v++) {
                c.write(1, v);
            }
            meta = RaftCluster.join(c.group(leader, 1).takeSnapshot());
            group = c.group(follower, 1);
            assertTrue(group.lastApplied() < meta.lastIndex(), "the follower applied what the snapshot covers");
            dataFile = SnapshotProbe.rechunkedNewest(snapshotDir(leader), 64);
        }

        /** Hands the follower the snapshot as its leader would; completes with the answer's success flag. */
        CompletableFuture<Boolean> receive() {
            return SnapshotProbe.receiveWhole(group, meta, dataFile);
        }
    }

    /**
     * Before, the leader's snapshot sender waited for the answer to its chunk in flight until the
     * request timed out (here 120 s; 5 s by default), and the group's stop with it: a node stopped
     * in the middle of a transfer to a slow follower waited that long.
     */
    @Test
    void aLeaderStoppedWhileItWaitsForTheAnswerToASnapshotChunkStopsAtOnceAndClosesTheSnapshot() throws Exception {
        NodeFiles files = new NodeFiles(3);
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, StopDuringSnapshotReadTest::smallChunksLongTimeout)) {
            c.nodeTweak = files::use;
            c.start();
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            SnapshotCatchUpTest.cutOffPastTheLeadersLog(c, leader, follower);
            // the follower holds its write of the second chunk: the leader waits for its answer
            Hold held = new Hold();
            files.faulty[follower].hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) throws IOException {
                    if (isReceivedSnapshot(file) && position > 0) {
                        held.hold(file + " at " + position);
                    }
                }
            };
            RaftGroup lg = c.group(leader, 1);
            try {
                c.faults.heal();
                held.awaitReached("the follower to hold its write of the second snapshot chunk");
                assertTrue(lg.isLeader(), "the leader changed");
                lg.stop().get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
                lg.whenFilesReleased().get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
                assertEquals(Collections.emptyList(), files.openUnder(leader, snapshotDir(leader)),
                        "the stopped leader still has the snapshot it sent open");
            } finally {
                held.release();
            }
            CompletableFuture<Void> nodeStopped = CompletableFuture.runAsync(() -> c.stopNode(leader));
            nodeStopped.get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
            RaftCluster.waitFor("the stopped node's threads to end", 10, () -> threadsOf(leader).isEmpty());
        }
    }

    /**
     * Before, a chunk the leader was reading from its snapshot file when its group stopped was sent
     * all the same once read, by the stopped leader, and the stop waited for its answer.
     */
    @Test
    void aLeaderStoppedWhileItReadsASnapshotChunkSendsNoMoreChunks() throws Exception {
        NodeFiles files = new NodeFiles(3);
        try (RaftCluster c = new RaftCluster(dir, 3, new int[]{1}, StopDuringSnapshotReadTest::smallChunksLongTimeout)) {
            c.nodeTweak = files::use;
            c.start();
            int leader = c.waitForLeader(1);
            int follower = leader % 3 + 1;
            SnapshotCatchUpTest.cutOffPastTheLeadersLog(c, leader, follower);
            // the leader holds its read of the second chunk; the follower records what it receives
            Hold held = new Hold();
            AtomicLong heldAt = new AtomicLong(-1);
            files.faulty[leader].hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeRead(Path file, long position) throws IOException {
                    if (file.startsWith(snapshotDir(leader)) && file.getFileName().toString().endsWith(".data")
                            && position > 0 && heldAt.compareAndSet(-1, position)) {
                        held.hold(file + " at " + position);
                    }
                }
            };
            List<Long> received = Collections.synchronizedList(new ArrayList<>());
            files.faulty[follower].hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeWrite(Path file, long position, int length) {
                    if (isReceivedSnapshot(file)) {
                        received.add(position);
                    }
                }
            };
            RaftGroup lg = c.group(leader, 1);
            CompletableFuture<Void> stopped;
            try {
                c.faults.heal();
                held.awaitReached("the leader to hold its read of the second snapshot chunk");
                assertTrue(lg.isLeader(), "the leader changed");
                stopped = lg.stop();
            } finally {
                held.release();
            }
            // the sender has ended once the group has stopped: a chunk it sent was answered, so written, before
            stopped.get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
            synchronized (received) {
                for (long at : received) {
                    assertTrue(at < heldAt.get(), "the stopped leader sent the chunk at offset " + heldAt.get()
                            + " read after its stop; the follower wrote " + received);
                }
            }
            lg.whenFilesReleased().get(STOP_BOUND_SECONDS, TimeUnit.SECONDS);
            assertEquals(Collections.emptyList(), files.openUnder(leader, snapshotDir(leader)),
                    "the stopped leader still has the snapshot it sent open");
        }
    }

    private static void smallChunksLongTimeout(io.poyang.raft.core.RaftConfig rc) {
        // a snapshot of many chunks; an answer that does not come is waited for long. A longer election
        // timeout keeps the leader the test holds files of: raft's tests run two classes at a time, and
        // a leader busy writing its snapshot beside another class's cluster could step down at 500 ms
        rc.segmentBytes(64 * 1024).snapshotsToKeep(1).snapshotChunkBytes(1024).replicationTimeoutMillis(120_000)
                .electionTimeoutMillis(2_000);
    }

    private static boolean isReceivedSnapshot(Path file) {
        return file.getFileName().toString().equals("receiving.tmp");
    }

    /** Each node's files through a {@link FaultyFileIo} (hooks per node) and an {@link OpenFilesIo} (what is open). */
    private static final class NodeFiles {
        final FaultyFileIo[] faulty;
        final OpenFilesIo[] open;

        NodeFiles(int nodes) {
            faulty = new FaultyFileIo[nodes + 1];
            open = new OpenFilesIo[nodes + 1];
            for (int n = 1; n <= nodes; n++) {
                faulty[n] = new FaultyFileIo();
                open[n] = new OpenFilesIo(faulty[n]);
            }
        }

        void use(int node, io.poyang.raft.core.RaftConfig rc) {
            rc.logFileIo(open[node]);
        }

        List<Path> openUnder(int node, Path d) {
            List<Path> l = new ArrayList<>();
            for (Path p : open[node].openFiles()) {
                if (p.toAbsolutePath().startsWith(d.toAbsolutePath())) {
                    l.add(p);
                }
            }
            return l;
        }
    }

    /** One file operation held until the test releases it. */
    private static final class Hold {
        private final AtomicBoolean taken = new AtomicBoolean();
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);

        /** Holds the first caller only (the I/O thread doing {@code what}). */
        void hold(String what) throws IOException {
            if (!taken.compareAndSet(false, true)) {
                return;
            }
            reached.countDown();
            try {
                if (!release.await(120, TimeUnit.SECONDS)) {
                    throw new IOException("the test never released " + what);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("held " + what);
            }
        }

        void awaitReached(String what) throws InterruptedException {
            assertTrue(reached.await(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS), "timed out waiting for " + what);
        }

        void release() {
            release.countDown();
        }
    }

    /**
     * The live threads of node {@code node} (RaftServer names them "raft-<node>-..."), but the
     * fault injector's timer, a daemon shared past the node's stop (as {@link RaftCluster#leftoverThreads}).
     */
    private static List<String> threadsOf(int node) {
        List<String> l = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("raft-" + node + "-") && !t.getName().contains("fault-timer")) {
                l.add(t.getName());
            }
        }
        return l;
    }

    private Path snapshotDir(int node) {
        return dir.resolve("node-" + node).resolve("group-1").resolve("snapshot");
    }
}
