package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.SnapshotProbe;
import io.poyang.raft.sm.SnapshotMeta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node stopped while a snapshot is being read, chunk by chunk, into a follower's state machine
 * (the install of a snapshot from the leader). The stop does not wait for the rest of the read:
 * the read ends at its next chunk, the snapshot's file is closed, and no thread of the stopped node
 * is left.
 */
class StopDuringSnapshotReadTest {

    /** Well under the old waits: a node's 30 s for its groups and 30 s for its log I/O threads. */
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
