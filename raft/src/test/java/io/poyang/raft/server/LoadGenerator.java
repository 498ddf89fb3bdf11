package io.poyang.raft.server;

import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.core.RaftGroup;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Writes unique values to a group from a thread of its own, keeping up to {@code inFlight} writes
 * pending, always through the node that currently leads. Records which values were acknowledged
 * (the write succeeded) and which failed with an outcome that says "not applied"; everything else
 * is unknown.
 */
final class LoadGenerator implements AutoCloseable {

    private final RaftCluster cluster;
    private final int groupId;
    private final Semaphore window;
    private final int inFlight;
    private final Thread thread;
    private volatile boolean running = true;
    final Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    final Set<Long> notApplied = ConcurrentHashMap.newKeySet();
    final AtomicLong unknown = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    private final long base;

    LoadGenerator(RaftCluster cluster, int groupId, int inFlight, long base) {
        this.cluster = cluster;
        this.groupId = groupId;
        this.window = new Semaphore(inFlight);
        this.inFlight = inFlight;
        this.base = base;
        this.thread = new Thread(this::run, "load-" + groupId);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        long next = base;
        while (running) {
            RaftGroup leader;
            try {
                leader = cluster.slotAtLeader(window, groupId);
            } catch (InterruptedException e) {
                return;
            }
            if (leader == null) {
                continue;
            }
            long value = next++;
            sent.incrementAndGet();
            leader.submit(0, TestStateMachine.body(value), 3_000).whenComplete((r, e) -> {
                window.release();
                if (e == null) {
                    acknowledged.add(value);
                } else if (e instanceof NotLeaderException || e instanceof io.poyang.common.FlowControlException
                        || e instanceof io.poyang.common.StoppedException) {
                    notApplied.add(value);
                } else {
                    unknown.incrementAndGet();
                }
            });
        }
    }


    /**
     * Checks the values a group applied (identical on every member, see
     * {@link RaftCluster#checkIdentical}) against this load: none applied twice, every acknowledged
     * one there, none that was reported not applied there. {@code context} (e.g. a seed, or "")
     * ends each failure message.
     */
    void checkApplied(long[] applied, String context) {
        Set<Long> all = new HashSet<>();
        for (long v : applied) {
            assertTrue(all.add(v), "value " + v + " applied twice" + context);
        }
        for (long v : acknowledged) {
            assertTrue(all.contains(v), "acknowledged value " + v + " was lost" + context);
        }
        for (long v : notApplied) {
            assertFalse(all.contains(v), "value " + v + " was reported not applied but is" + context);
        }
    }

    long acknowledgedCount() {
        return acknowledged.size();
    }

    void awaitAcknowledged(long count) {
        RaftCluster.waitFor(count + " acknowledged writes to group " + groupId, () -> acknowledged.size() >= count);
    }

    /** Stops writing and waits for the pending writes to finish. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RaftCluster.waitFor("pending writes to finish", () -> window.availablePermits() == inFlight);
    }
}
