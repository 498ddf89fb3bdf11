package io.poyang.raft.server;

import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.core.ReplicationMemoryProbe;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.FaultyFileIo;
import io.poyang.raft.store.LogJournal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tools for the slow-peer tests: a disk that stalls (every log I/O thread of a node held for a
 * while, again and again), a flood of large writes whose outcome does not matter (ballast that
 * makes the leader's buffers hold real bytes), and heap figures. With the node's log journal, a
 * journal whose fsyncs stall.
 */
final class SlowPeerHarness {

    private SlowPeerHarness() {
    }

    /** The log I/O executor of a running server: its writes, fsyncs and reads run there. */
    static ThreadPoolExecutor logIo(RaftServer s) {
        return (ThreadPoolExecutor) ReplicationMemoryProbe.read(s, "logIo");
    }

    /** Bytes the server's replication client owes its peers (requests sent, not yet answered). */
    static long replicationPendingBytes(RaftServer s) {
        Object client = ReplicationMemoryProbe.read(s, "replicationClient");
        Object limiter = ReplicationMemoryProbe.read(client, "limiter");
        return ((AtomicLong) ReplicationMemoryProbe.read(limiter, "bytes")).get();
    }

    /** Heap in use after full collections, in bytes. */
    static long usedHeapAfterGcBytes() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * Holds every thread of a node's log I/O executor for a random 50–500 ms, lets the queued I/O
     * through for a moment, and again, until closed: each write and fsync of that node waits up
     * to half a second, as on a disk that stalls. The holding tasks wait for each other before
     * sleeping, so they sit on distinct threads and the whole executor stalls at once.
     */
    static final class DiskStaller implements AutoCloseable {
        private final ThreadPoolExecutor io;
        private final Thread thread;
        private final long minStallMillis;
        private final long maxStallMillis;
        private volatile boolean running = true;
        final AtomicLong stalls = new AtomicLong();
        final AtomicLong stalledMillis = new AtomicLong();

        DiskStaller(ThreadPoolExecutor io, long minStallMillis, long maxStallMillis, long seed) {
            this.io = io;
            this.minStallMillis = minStallMillis;
            this.maxStallMillis = maxStallMillis;
            Random rnd = new Random(seed);
            this.thread = new Thread(() -> run(rnd), "disk-staller");
            thread.setDaemon(true);
            thread.start();
        }

        private void run(Random rnd) {
            int threads = io.getMaximumPoolSize();
            while (running) {
                long stallMillis = minStallMillis + (long) (rnd.nextDouble() * (maxStallMillis - minStallMillis));
                CountDownLatch allHeld = new CountDownLatch(threads);
                CountDownLatch released = new CountDownLatch(threads);
                long start = System.nanoTime();
                for (int i = 0; i < threads; i++) {
                    io.execute(() -> {
                        allHeld.countDown();
                        try {
                            // no thread sleeps until every thread is held: the stall covers them all
                            if (allHeld.await(5, TimeUnit.SECONDS)) {
                                long left = stallMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                                if (left > 0) {
                                    Thread.sleep(left);   // the thing under test: a disk that stalls
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } finally {
                            released.countDown();
                        }
                    });
                }
                try {
                    released.await();
                    stalls.incrementAndGet();
                    stalledMillis.addAndGet(stallMillis);
                    Thread.sleep(5 + rnd.nextInt(20));   // the thing under test: a gap in which the queued I/O runs
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Makes each fsync of one node's log journal ({@code <nodeDir>/log-journal}: the journal's files
     * and its checkpoint file) wait a random 50–500 ms, until closed, through the cluster's shared
     * {@link FaultyFileIo}: with the journal on, a write is durable by the journal's fsync (on its own
     * thread), not by the log I/O threads {@link DiskStaller} holds.
     */
    static final class JournalFsyncStaller implements AutoCloseable {
        private final FaultyFileIo io;
        final AtomicLong stalls = new AtomicLong();
        final AtomicLong stalledMillis = new AtomicLong();

        JournalFsyncStaller(FaultyFileIo io, Path nodeDir, long minStallMillis, long maxStallMillis, long seed) {
            this.io = io;
            Path journalDir = nodeDir.resolve(LogJournal.DIR_NAME).toAbsolutePath();
            Random rnd = new Random(seed);
            io.hook = new FaultyFileIo.Hook() {
                @Override
                public void beforeForce(Path file, boolean metadata) throws IOException {
                    if (!file.toAbsolutePath().startsWith(journalDir)) {
                        return;
                    }
                    long stallMillis = minStallMillis + (long) (rnd.nextDouble() * (maxStallMillis - minStallMillis));
                    try {
                        Thread.sleep(stallMillis);   // the thing under test: an fsync that stalls
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted in a stalled journal fsync");
                    }
                    stalls.incrementAndGet();
                    stalledMillis.addAndGet(stallMillis);
                }
            };
        }

        @Override
        public void close() {
            io.hook = new FaultyFileIo.Hook() {
            };
        }
    }

    /**
     * Submits {@code bodyBytes}-byte bodies to whichever node leads, keeping {@code window} of
     * them pending. They are not test values (the state machine counts and refuses them), so
     * only their bytes matter: they fill the leader's log, tail cache and requests.
     */
    static final class Ballast implements AutoCloseable {
        private final RaftCluster cluster;
        private final int groupId;
        private final Semaphore pending;
        private final int window;
        private final byte[] body;
        private final Thread thread;
        private volatile boolean running = true;
        final AtomicLong submitted = new AtomicLong();

        Ballast(RaftCluster cluster, int groupId, int window, int bodyBytes) {
            this.cluster = cluster;
            this.groupId = groupId;
            this.window = window;
            this.pending = new Semaphore(window);
            this.body = new byte[bodyBytes];
            new Random(1).nextBytes(body);
            this.thread = new Thread(this::run, "ballast-" + groupId);
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            while (running) {
                RaftGroup leader;
                try {
                    leader = cluster.slotAtLeader(pending, groupId);
                } catch (InterruptedException e) {
                    return;
                }
                if (leader == null) {
                    continue;
                }
                submitted.incrementAndGet();
                leader.submit(0, new ByteBody(body), 3_000).whenComplete((r, e) -> pending.release());
            }
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            RaftCluster.waitFor("ballast writes to finish", () -> pending.availablePermits() == window);
        }
    }

    /**
     * The largest figures of what a leader holds for one follower, sampled every 50 ms for a
     * while: its replicator's unanswered requests (items, bytes, count), the tail cache, and the
     * bytes and requests its replication client owes all peers. Also the follower's largest lag.
     */
    static final class LeaderSample {
        long inflightItems;
        long inflightBytes;
        long inflightRequests;
        long tailCacheBytes;
        long clientPendingBytes;
        long clientPendingRequests;
        long followerLag;

        static LeaderSample over(RaftCluster c, int leader, int follower, long millis) {
            LeaderSample s = new LeaderSample();
            RaftGroup lg = c.group(leader, 1);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (System.nanoTime() - end < 0) {
                long[] inf = ReplicationMemoryProbe.inflight(lg, follower);
                if (inf != null) {
                    s.inflightItems = Math.max(s.inflightItems, inf[0]);
                    s.inflightBytes = Math.max(s.inflightBytes, inf[1]);
                    s.inflightRequests = Math.max(s.inflightRequests, inf[2]);
                }
                s.tailCacheBytes = Math.max(s.tailCacheBytes, ReplicationMemoryProbe.tailCache(lg)[1]);
                s.clientPendingBytes = Math.max(s.clientPendingBytes, replicationPendingBytes(c.server(leader)));
                s.clientPendingRequests = Math.max(s.clientPendingRequests, c.server(leader).replicationRequestsPending());
                if (c.isRunning(follower)) {
                    s.followerLag = Math.max(s.followerLag, lg.lastLogIndex() - c.group(follower, 1).lastLogIndex());
                }
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
            }
            return s;
        }

        @Override
        public String toString() {
            return "in flight to the follower: max " + inflightItems + " items / " + inflightBytes + " bytes / "
                    + inflightRequests + " requests; tail cache max " + tailCacheBytes + " bytes; replication client"
                    + " max " + clientPendingBytes + " bytes / " + clientPendingRequests + " requests pending;"
                    + " follower lag max " + followerLag + " entries";
        }
    }

    /** Acknowledged writes of {@code load} per second over {@code millis}. */
    static double ackRate(LoadGenerator load, long millis) {
        long before = load.acknowledgedCount();
        long start = System.nanoTime();
        RaftCluster.waitFor("a measuring period to pass", () -> System.nanoTime() - start >= millis * 1_000_000L);
        return (load.acknowledgedCount() - before) / ((System.nanoTime() - start) / 1e9);
    }

    /** A node of {@code groupId} other than {@code leader}. */
    static int aFollower(RaftCluster c, int groupId, int leader) {
        for (int n : c.runningMembers(groupId)) {
            if (n != leader) {
                return n;
            }
        }
        throw new AssertionError("group " + groupId + " has no follower running");
    }
}
