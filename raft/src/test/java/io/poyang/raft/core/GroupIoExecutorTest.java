package io.poyang.raft.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GroupIoExecutorTest {

    @Test
    void idleOnlyAfterTheLastTaskAndTheFollowUpsItQueuedEnded() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            GroupIoExecutor io = new GroupIoExecutor(pool);
            CountDownLatch releaseFirst = new CountDownLatch(1);
            CountDownLatch releaseFollowUp = new CountDownLatch(1);
            CountDownLatch followUpRan = new CountDownLatch(1);
            io.execute(() -> {
                await(releaseFirst);
                // a write that queues its retry (or an fsync chain its next round) before it ends
                io.execute(() -> {
                    await(releaseFollowUp);
                    followUpRan.countDown();
                });
            });
            CompletableFuture<Void> idle = io.whenIdle();
            assertFalse(idle.isDone());
            releaseFirst.countDown();
            // the first task ended; its follow-up still waits: not idle
            assertFalse(idle.isDone());
            assertEquals(1, waitForCount(io, 1));
            releaseFollowUp.countDown();
            idle.get(10, TimeUnit.SECONDS);
            assertTrue(followUpRan.getCount() == 0);
            assertEquals(0, io.inFlight());
            assertTrue(io.whenIdle().isDone(), "asked again when idle: done at once");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aTaskThePoolRefusesIsNotCountedAndThePoolCannotBeShutThroughTheView() {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        GroupIoExecutor io = new GroupIoExecutor(pool);
        pool.shutdown();
        assertThrows(RejectedExecutionException.class, () -> io.execute(() -> {
        }));
        assertEquals(0, io.inFlight());
        assertTrue(io.whenIdle().isDone());
        assertThrows(UnsupportedOperationException.class, io::shutdown);
        assertThrows(UnsupportedOperationException.class, io::shutdownNow);
    }

    private static int waitForCount(GroupIoExecutor io, int expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (io.inFlight() != expected && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return io.inFlight();
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
