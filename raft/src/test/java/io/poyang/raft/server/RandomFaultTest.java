package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.common.FlowControlException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftOutcomeUnknownException;
import io.poyang.raft.core.RaftGroup;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent writes to a 3- or 5-node group while a schedule drawn from a seed injects faults:
 * partitions of random subsets (the leader's side or not), message loss, delays, node restarts and
 * nodes down for a while, leader transfers, snapshots on demand and by entry count with small log
 * segments (so the log is compacted and followers catch up by snapshot), a small tail cache (so
 * laggards are fed from disk). At the end the network heals, every node comes back, and:
 * <ul>
 * <li>all state machines hold the same values at the same indexes ({@link RaftCluster#checkIdentical});</li>
 * <li>every acknowledged write is applied exactly once, at the index its answer named, and a write
 * acknowledged before another was submitted is applied before it (writes are linearizable);</li>
 * <li>no write reported "not applied" (NOT_LEADER, FLOW_CONTROL, TIMEOUT before an index,
 * STOPPING) is applied, and no value is applied twice;</li>
 * <li>no node's stop hangs and no server thread is left ({@link RaftCluster#close}).</li>
 * </ul>
 * The seeds are fixed; a sweep runs others with {@code -Dpoyang.randomFault.seeds=FROM-TO} (and
 * {@code -Dpoyang.randomFault.millis=} for the fault phase's length). Thread timing is not
 * seeded, so a seed reproduces its schedule of faults, not every interleaving.
 */
class RandomFaultTest {

    @TempDir
    Path dir;

    static LongStream seeds() {
        String s = System.getProperty("poyang.randomFault.seeds");
        if (s == null || s.isEmpty()) {
            return LongStream.of(400, 402, 404);   // 3 nodes with an observer; 5 with a change; many snapshot catch-ups
        }
        int dash = s.indexOf('-');
        return dash < 0 ? LongStream.of(Long.parseLong(s))
                : LongStream.rangeClosed(Long.parseLong(s.substring(0, dash)), Long.parseLong(s.substring(dash + 1)));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void acknowledgedWritesAreAppliedOnceInOrderAndRefusedOnesNeverUnderRandomFaults(long seed) throws Exception {
        long faultMillis = Long.getLong("poyang.randomFault.millis", 6_000);
        new Run(seed, dir.resolve("seed-" + seed), faultMillis).run();
    }

    /** One write: when it was submitted and, once answered, how (on one counter of events). */
    private static final class Rec {
        final long submitted;
        volatile long answered;     // 0: not yet
        volatile long index;        // acknowledged: the index its answer named
        volatile int outcome;       // OK, NOT_APPLIED, UNKNOWN
        volatile Throwable error;

        Rec(long submitted) {
            this.submitted = submitted;
        }
    }

    private static final int PENDING = 0;
    private static final int OK = 1;
    private static final int NOT_APPLIED = 2;
    private static final int UNKNOWN = 3;

    private static final class Run {
        final long seed;
        final Random rnd;
        final Path dir;
        final long faultMillis;
        final int nodes;
        final String ctx;
        final AtomicLong events = new AtomicLong();
        final Map<Long, Rec> writes = new ConcurrentHashMap<>();
        volatile boolean writing = true;
        volatile RaftCluster cluster;
        final StringBuilder schedule = new StringBuilder();
        final List<Thread> writers = new ArrayList<>();
        final List<Semaphore> windows = new ArrayList<>();
        final int window = 40;

        Run(long seed, Path dir, long faultMillis) {
            this.seed = seed;
            this.rnd = new Random(seed);
            this.dir = dir;
            this.faultMillis = faultMillis;
            this.nodes = rnd.nextInt(3) == 0 ? 5 : 3;
            this.ctx = " (seed " + seed + ")";
        }

        void run() throws Exception {
            int segment = 8_192 << rnd.nextInt(4);
            long snapEvery = 200 + rnd.nextInt(3_000);
            int keep = 1 + rnd.nextInt(2);
            int tail = rnd.nextBoolean() ? 20_000 : 100 + rnd.nextInt(1_000);
            long replTimeout = 400 + rnd.nextInt(1_200);
            // small bounds now and then: FLOW_CONTROL refusals, short appends, a pipeline that fills
            int pendingWrites = rnd.nextInt(3) == 0 ? 20 + rnd.nextInt(500) : 20_000;
            int appendItems = rnd.nextBoolean() ? 1 + rnd.nextInt(64) : 2_048;
            int inflightItems = rnd.nextBoolean() ? appendItems * (1 + rnd.nextInt(8)) : 50_000;
            schedule.append("nodes=").append(nodes).append(" segment=").append(segment).append(" snapEvery=")
                    .append(snapEvery).append(" keep=").append(keep).append(" tail=").append(tail)
                    .append(" replTimeout=").append(replTimeout).append(" pendingWrites=").append(pendingWrites)
                    .append(" appendItems=").append(appendItems).append(" inflightItems=").append(inflightItems)
                    .append('\n');
            try (RaftCluster c = new RaftCluster(dir, nodes, new int[]{1}, rc -> rc.segmentBytes(segment)
                    .snapshotEvery(snapEvery, 0).snapshotsToKeep(keep).snapshotChunkBytes(4_096)
                    .tailCache(tail, 32 << 20).replicationTimeoutMillis(replTimeout)
                    .maxPendingWrites(pendingWrites, 64 << 20).maxAppend(appendItems, 1 << 20)
                    .maxInflight(inflightItems, 32 << 20))) {
                cluster = c;
                c.start();
                c.waitForLeader(1);
                for (int w = 0; w < 2; w++) {
                    Semaphore sem = new Semaphore(window);
                    windows.add(sem);
                    long base = (w + 1) * 1_000_000_000L;
                    Thread t = new Thread(() -> write(base, sem), "random-fault-writer-" + w);
                    t.setDaemon(true);
                    writers.add(t);
                    t.start();
                }
                Semaphore sessionWindow = new Semaphore(SESSION_WINDOW);
                windows.add(sessionWindow);
                Thread st = new Thread(() -> writeInSession(3_000_000_000L, sessionWindow), "random-fault-session-writer");
                st.setDaemon(true);
                writers.add(st);
                st.start();
                try {
                    faults(c);
                    end(c);
                } catch (Throwable e) {
                    writing = false;
                    throw new AssertionError("failed" + ctx + "; schedule:\n" + schedule, e);
                }
            }
        }

        /** A writer: unique values, up to {@link #window} pending, through whichever node leads. */
        private void write(long base, Semaphore sem) {
            long next = base;
            while (writing) {
                try {
                    if (!sem.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                        continue;
                    }
                } catch (InterruptedException e) {
                    return;
                }
                RaftGroup leader = leader();
                if (leader == null) {
                    sem.release();
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                    continue;
                }
                long value = next++;
                Rec r = new Rec(events.incrementAndGet());
                writes.put(value, r);
                CompletableFuture<Encodable> f;
                try {
                    f = leader.submit(0, TestStateMachine.body(value), 20 + (value % 7) * 300);
                } catch (RuntimeException e) {
                    r.answered = events.incrementAndGet();
                    r.outcome = UNKNOWN;
                    sem.release();
                    continue;
                }
                if (f.isCompletedExceptionally()) {
                    // refused at once (FLOW_CONTROL, a leader that just stepped down): back off a
                    // little rather than spin, which would only fill the heap with refusals
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
                f.whenComplete((res, e) -> {
                    if (e == null) {
                        r.index = TestStateMachine.index(res);
                        r.outcome = OK;
                    } else {
                        r.error = e;
                        r.outcome = reportedNotApplied(e) ? NOT_APPLIED : UNKNOWN;
                    }
                    r.answered = events.incrementAndGet();
                    sem.release();
                });
            }
        }

        /**
     * Whether a write's failure says it was not applied (refused before it got an index). An
     * outcome-unknown error is a PoyangTimeoutException too, but one raised after an index.
     */
    private static boolean reportedNotApplied(Throwable e) {
        return !(e instanceof RaftOutcomeUnknownException) && (e instanceof NotLeaderException
                || e instanceof FlowControlException || e instanceof PoyangTimeoutException
                || e instanceof StoppedException);
    }

    /** Session writes pending at most: well inside the session window of results kept (64), so retries are answered. */
        static final int SESSION_WINDOW = 20;

        /**
         * A writer of exactly-once writes: one session, a seq per value, and a write whose outcome
         * is unknown is sent again with the same (session, seq) until its outcome is known (or the
         * writing ends). Each value must still be applied at most once, acknowledged ones at the
         * index of their first application.
         */
        private void writeInSession(long base, Semaphore sem) {
            long session = 0x5E55_0000L + seed;
            java.util.concurrent.ConcurrentLinkedQueue<Long> retries = new java.util.concurrent.ConcurrentLinkedQueue<>();
            Map<Long, Boolean> wasUnknown = new ConcurrentHashMap<>();
            long next = base;
            // after the writing ends, until every value is settled: retries left then stay unknown
            while (writing || sem.availablePermits() != SESSION_WINDOW) {
                Long retry = retries.poll();
                if (!writing) {
                    if (retry != null) {
                        writes.get(retry).answered = events.incrementAndGet();
                        sem.release();
                    } else {
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                    }
                    continue;
                }
                if (retry == null) {
                    try {
                        if (!sem.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                            continue;
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                RaftGroup leader = leader();
                if (leader == null) {
                    if (retry == null) {
                        sem.release();
                    } else {
                        retries.add(retry);
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                    continue;
                }
                long value = retry != null ? retry : next++;
                Rec r = retry != null ? writes.get(value) : new Rec(events.incrementAndGet());
                writes.putIfAbsent(value, r);
                CompletableFuture<Encodable> f;
                try {
                    f = leader.submit(0, TestStateMachine.body(value), 300 + (value % 5) * 300, session, value - base + 1);
                } catch (RuntimeException e) {
                    f = new CompletableFuture<>();
                    f.completeExceptionally(e);
                }
                if (f.isCompletedExceptionally()) {
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
                f.whenComplete((res, e) -> {
                    boolean known;
                    if (e == null) {
                        r.index = TestStateMachine.index(res);
                        r.outcome = OK;
                        known = true;
                    } else if (!reportedNotApplied(r.error = e)) {
                        wasUnknown.put(value, Boolean.TRUE);
                        r.outcome = UNKNOWN;
                        known = false;
                    } else {
                        // not applied by this attempt; an earlier one whose outcome was unknown may be
                        r.outcome = wasUnknown.containsKey(value) ? UNKNOWN : NOT_APPLIED;
                        known = !wasUnknown.containsKey(value);
                    }
                    if (!known) {
                        retries.add(value);
                    } else {
                        r.answered = events.incrementAndGet();
                        sem.release();
                    }
                });
            }
        }

        /** A node that leads (any, when several think so), or null; tolerates nodes stopping meanwhile. */
        private RaftGroup leader() {
            RaftCluster c = cluster;
            // which node is asked first: spread over the nodes, not seeded (the schedule does not depend on it)
            int start = java.util.concurrent.ThreadLocalRandom.current().nextInt(nodes);
            for (int i = 0; i < nodes; i++) {
                int n = (start + i) % nodes + 1;
                try {
                    RaftServer s = c.server(n);
                    RaftGroup g = s == null ? null : s.group(1);
                    if (g != null && g.isLeader()) {
                        return g;
                    }
                } catch (RuntimeException e) {
                    // stopping under us
                }
            }
            return null;
        }

        private void log(long t0, String what) {
            schedule.append(String.format("%6d ms %s%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), what));
        }

        private void faults(RaftCluster c) {
            long t0 = System.nanoTime();
            long end = t0 + TimeUnit.MILLISECONDS.toNanos(faultMillis);
            boolean[] down = new boolean[nodes + 1];
            while (System.nanoTime() - end < 0) {
                int step = rnd.nextInt(100);
                int a = 1 + rnd.nextInt(nodes);
                if (step < 15) {
                    c.faults.heal();
                    log(t0, "heal");
                } else if (step < 28) {
                    int[] side = randomSubset(1 + rnd.nextInt(nodes - 1));
                    c.faults.partition(side);
                    log(t0, "partition " + java.util.Arrays.toString(side));
                } else if (step < 35) {
                    int l = leaderId(c);
                    if (l != 0) {
                        c.faults.isolate(l);
                        log(t0, "isolate leader " + l);
                    }
                } else if (step < 42) {
                    double rate = 0.02 + rnd.nextDouble() * 0.2;
                    c.faults.dropRate(rate);
                    log(t0, "drop all " + rate);
                } else if (step < 48) {
                    int b = other(a);
                    double rate = 0.3 + rnd.nextDouble() * 0.7;
                    c.faults.dropRate(a, b, rate);
                    log(t0, "drop " + a + "->" + b + " " + rate);
                } else if (step < 55) {
                    int b = other(a);
                    long ms = 1 + rnd.nextInt(200);
                    c.faults.delay(a, b, ms);
                    log(t0, "delay " + a + "->" + b + " " + ms + " ms");
                } else if (step < 58) {
                    int b = other(a);
                    c.faults.block(a, b);
                    log(t0, "block " + a + "->" + b);
                } else if (step < 68) {
                    if (!down[a]) {
                        log(t0, "restart " + a);
                        stop(c, a);
                        c.startNode(a);
                        log(t0, "restarted " + a);
                    }
                } else if (step < 74) {
                    if (down[a]) {
                        c.startNode(a);
                        down[a] = false;
                        log(t0, "start " + a);
                    } else if (downCount(down) < (nodes - 1) / 2) {
                        stop(c, a);
                        down[a] = true;
                        log(t0, "stop " + a);
                    }
                } else if (step < 84) {
                    // drawn whatever the leader is, so the schedule does not depend on the timing
                    int shift = rnd.nextInt(nodes - 1);
                    long timeout = 300 + rnd.nextInt(2_000);
                    int l = leaderId(c);
                    int target = l == 0 ? 0 : (l + shift) % nodes + 1;
                    if (l != 0 && !down[target]) {
                        try {
                            c.group(l, 1).transferLeadership(target, timeout);
                            log(t0, "transfer " + l + " -> " + target);
                        } catch (RuntimeException e) {
                            log(t0, "transfer " + l + " -> " + target + " refused: " + e);
                        }
                    }
                } else if (step < 88) {
                    // voters and observers reshuffled (every node keeps the group and applies everything)
                    int l = leaderId(c);
                    int[] order = randomSubset(nodes);
                    int voterCount = (nodes == 3 ? 2 : 3) + rnd.nextInt(nodes == 3 ? 2 : 3);
                    int[] voters = java.util.Arrays.copyOf(order, voterCount);
                    int[] observers = java.util.Arrays.copyOfRange(order, voterCount, nodes);
                    java.util.Arrays.sort(voters);
                    java.util.Arrays.sort(observers);
                    if (l != 0) {
                        RaftGroup g = c.group(l, 1);
                        g.prepareMembers(voters, observers, 3_000)
                                .thenCompose(m -> g.commitMembers(voters, observers, 3_000));
                        log(t0, "change on " + l + " to voters " + java.util.Arrays.toString(voters)
                                + " observers " + java.util.Arrays.toString(observers));
                    }
                } else if (step < 90) {
                    int l = leaderId(c);
                    if (l != 0) {
                        c.group(l, 1).abortMembers(3_000);
                        log(t0, "abort a change on " + l);
                    }
                } else {
                    if (!down[a] && c.isRunning(a)) {
                        c.group(a, 1).takeSnapshot();
                        log(t0, "snapshot on " + a);
                    }
                }
                long pause = 20 + rnd.nextInt(rnd.nextBoolean() ? 150 : 500);
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
                // the faults are paced, not synchronised with anything: waiting here is the schedule
                RaftCluster.waitFor("the next fault", 5, () -> System.nanoTime() - until > 0);
            }
            c.faults.heal();
            for (int n = 1; n <= nodes; n++) {
                if (down[n]) {
                    c.startNode(n);
                }
            }
            log(t0, "healed, all nodes up");
        }

        private void stop(RaftCluster c, int n) {
            long t = System.nanoTime();
            c.stopNode(n);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t);
            assertTrue(ms < 10_000, "stopping node " + n + " took " + ms + " ms" + ctx);
        }

        private static int downCount(boolean[] down) {
            int k = 0;
            for (boolean d : down) {
                k += d ? 1 : 0;
            }
            return k;
        }

        private int other(int a) {
            return (a + rnd.nextInt(nodes - 1)) % nodes + 1;
        }

        private int[] randomSubset(int size) {
            List<Integer> all = new ArrayList<>();
            for (int i = 1; i <= nodes; i++) {
                all.add(i);
            }
            java.util.Collections.shuffle(all, rnd);
            int[] r = new int[size];
            for (int i = 0; i < size; i++) {
                r[i] = all.get(i);
            }
            java.util.Arrays.sort(r);
            return r;
        }

        private int leaderId(RaftCluster c) {
            RaftGroup g = leader();
            return g == null ? 0 : g.nodeId();
        }

        private void end(RaftCluster c) {
            long acked = count(OK);
            // progress after healing: writes are acknowledged again
            RaftCluster.waitFor("writes to be acknowledged after healing" + ctx, () -> count(OK) >= acked + 200);
            writing = false;
            for (Thread t : writers) {
                try {
                    t.join(30_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            RaftCluster.waitFor("every write to be answered" + ctx, () -> {
                for (int i = 0; i < windows.size(); i++) {
                    if (windows.get(i).availablePermits() != (i < 2 ? window : SESSION_WINDOW)) {
                        return false;
                    }
                }
                return true;
            });
            c.write(1, 1);   // an entry of the final leader's term commits everything before it
            c.checkIdentical(1);
            // identical everywhere: node 1's values with their indexes, read in one step
            long[][] held = c.call(1, 1, () -> new long[][]{c.machine(1, 1).values(), c.machine(1, 1).indexes()});
            long[] values = held[0];
            check(values, held[1]);
            long snapshotsSent = 0;
            for (int n : c.runningMembers(1)) {
                snapshotsSent += c.group(n, 1).pipelineCounters()[6];
            }
            long inSession = java.util.Arrays.stream(values).filter(v -> v >= 3_000_000_000L).count();
            System.out.printf("RandomFaultTest seed %d: %d nodes, %d writes acknowledged, %d not applied, %d unknown;"
                    + " %d applied (" + inSession + " in a session); %d snapshot transfers (since the last restarts); members %s%n", seed, nodes,
                    count(OK), count(NOT_APPLIED), count(UNKNOWN), values.length, snapshotsSent,
                    c.group(1, 1).members());
        }

        private long count(int outcome) {
            return writes.values().stream().filter(r -> r.outcome == outcome).count();
        }

        private void check(long[] values, long[] indexes) {
            Map<Long, Integer> position = new HashMap<>();
            for (int i = 0; i < values.length; i++) {
                Integer was = position.put(values[i], i);
                assertTrue(was == null, "value " + values[i] + " applied twice, at indexes " + (was == null ? 0
                        : indexes[was]) + " and " + indexes[i] + ctx);
            }
            for (Map.Entry<Long, Rec> e : writes.entrySet()) {
                Rec r = e.getValue();
                Integer p = position.get(e.getKey());
                assertTrue(r.outcome != PENDING, "write " + e.getKey() + " never answered" + ctx);
                if (r.outcome == OK) {
                    assertTrue(p != null, "acknowledged write " + e.getKey() + " (index " + r.index + ") was lost" + ctx);
                    assertEquals(r.index, indexes[p], "acknowledged write " + e.getKey()
                            + " was applied at another index than its answer named" + ctx);
                } else if (r.outcome == NOT_APPLIED) {
                    assertTrue(p == null, "write " + e.getKey() + " reported not applied (" + r.error
                            + ") was applied at index " + (p == null ? 0 : indexes[p]) + ctx);
                }
            }
            // linearizable: a write acknowledged before another was submitted comes first in the log;
            // walking from the end, the earliest answer among the later entries must follow each submission
            long minAnsweredAfter = Long.MAX_VALUE;
            long minValue = 0;
            for (int i = values.length - 1; i >= 0; i--) {
                Rec r = writes.get(values[i]);
                if (r == null) {
                    continue;   // the test's own final write
                }
                assertTrue(minAnsweredAfter > r.submitted, "write " + values[i] + " (index " + indexes[i]
                        + ") was submitted after write " + minValue + " was acknowledged, but applied before it" + ctx);
                if (r.outcome == OK && r.answered < minAnsweredAfter) {
                    minAnsweredAfter = r.answered;
                    minValue = values[i];
                }
            }
        }
    }
}
