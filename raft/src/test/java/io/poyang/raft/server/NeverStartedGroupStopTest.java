package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Dispatcher;
import io.poyang.net.DecoderFactory;
import io.poyang.net.NetNotSentException;
import io.poyang.net.RpcCallback;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.RaftTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A group an embedder made (or a server listed) and stopped without ever starting it. Before, its
 * stop waited for a start that never came: the future never completed, and whoever waited on it
 * (an embedder's shutdown, a node's stop, a group's removal) hung until its own timeout.
 */
class NeverStartedGroupStopTest {

    private static final Members ONE = new Members(new int[]{1}, new int[0]);

    @TempDir
    Path dir;

    /** A single-node group sends nothing; a send would be a bug of the test's setup. */
    private static final RaftTransport NO_PEERS = new RaftTransport() {
        @Override
        public <T> void send(int nodeId, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
                             RpcCallback<T> callback) {
            callback.onFailure(new NetNotSentException("this test has no node " + nodeId));
        }
    };

    private static RaftGroup group(Path groupDir, Dispatcher d, ExecutorService io) {
        return new RaftGroup(1, 1, ONE, new TestStateMachine(), RaftCluster.testConfig(), groupDir, d, io,
                Runnable::run, NO_PEERS, null, null);
    }

    @Test
    void aGroupStoppedBeforeItWasStartedStopsAtOnceRefusesToStartAndANewGroupStartsOnItsDirectory()
            throws Exception {
        Dispatcher d = new Dispatcher("raft-never-started-test");
        ExecutorService io = Executors.newFixedThreadPool(2);
        d.start();
        try {
            Path groupDir = dir.resolve("group-1");
            RaftGroup never = group(groupDir, d, io);

            never.stop().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            never.whenFilesReleased().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            assertTrue(never.stop().isDone(), "a second stop is the same, done stop");
            assertFalse(Files.exists(groupDir.resolve("log")), "a group never started made its log");

            // a stopped group does not start: its start and startedFuture fail, they do not wait
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> never.start().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(StoppedException.class, refused.getCause());
            assertTrue(refused.getCause().getMessage().contains("stopped before it was started"),
                    refused.getCause().getMessage());
            assertTrue(never.startedFuture().isCompletedExceptionally());
            assertFalse(Files.exists(groupDir.resolve("log")), "the refused start made the log");
            // nor does anything run in it
            ExecutionException call = assertThrows(ExecutionException.class,
                    () -> never.callInGroup(() -> 1).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(StoppedException.class, call.getCause());
            assertInstanceOf(StoppedException.class, assertThrows(ExecutionException.class,
                    () -> never.submit(0, TestStateMachine.body(1), 5_000).get(RaftCluster.WAIT_SECONDS,
                            TimeUnit.SECONDS)).getCause());

            // what the refusal says to do: a new group on the same directory starts and takes writes
            RaftGroup fresh = group(groupDir, d, io);
            fresh.start().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            RaftCluster.waitFor("the new group to lead", fresh::isLeader);
            Encodable r = fresh.submit(0, TestStateMachine.body(7), 5_000).get(RaftCluster.WAIT_SECONDS,
                    TimeUnit.SECONDS);
            assertEquals(fresh.lastApplied(), TestStateMachine.index(r));
            fresh.stop().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
            fresh.whenFilesReleased().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
        } finally {
            d.stop();
            io.shutdown();
            assertTrue(io.awaitTermination(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
        }
    }

    /** A stop and a start from two threads at once: either the group starts and then stops, or it never starts. */
    @Test
    void aStopRacingTheFirstStartEndsEitherWayAndLeavesNoFilesOpen() throws Exception {
        Dispatcher d = new Dispatcher("raft-never-started-race-test");
        ExecutorService io = Executors.newFixedThreadPool(2);
        ExecutorService callers = Executors.newFixedThreadPool(2);
        d.start();
        try {
            for (int i = 0; i < 20; i++) {
                RaftGroup g = group(dir.resolve("group-" + i), d, io);
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                CompletableFuture<CompletableFuture<Void>> start = CompletableFuture.supplyAsync(() -> {
                    awaitQuietly(go);
                    return g.start();
                }, callers);
                CompletableFuture<CompletableFuture<Void>> stop = CompletableFuture.supplyAsync(() -> {
                    awaitQuietly(go);
                    return g.stop();
                }, callers);
                go.countDown();
                stop.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS).get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                g.whenFilesReleased().get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                CompletableFuture<Void> started = start.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                try {
                    started.get(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertInstanceOf(StoppedException.class, e.getCause());
                }
            }
        } finally {
            callers.shutdown();
            d.stop();
            io.shutdown();
            assertTrue(io.awaitTermination(RaftCluster.WAIT_SECONDS, TimeUnit.SECONDS));
        }
    }

    private static void awaitQuietly(java.util.concurrent.CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
