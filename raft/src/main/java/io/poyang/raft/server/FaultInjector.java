package io.poyang.raft.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Network faults on the replication path, for tests (and, behind a testing flag, the chaos
 * runner): partitions, lost messages and delays between nodes, in either direction. The
 * replication transport of each {@link RaftServer} asks it before sending a request (the request's
 * direction) and when the answer comes (the answer's direction). One instance may be shared by the
 * in-process servers of a test. Thread-safe; changes take effect for the next message.
 *
 * <ul>
 * <li>A <b>partition</b> ({@link #isolate}, {@link #partition}, {@link #block}) refuses a message at
 * once, as an unreachable host would; the request fails with a connection error.</li>
 * <li>A <b>drop</b> ({@link #dropRate}) loses the message silently: the sender hears nothing and
 * its request times out.</li>
 * <li>A <b>delay</b> ({@link #delay}) holds the request that long before it is sent.</li>
 * </ul>
 */
public final class FaultInjector {

    /** node id → side of the partition; nodes on different sides cannot talk. Absent: side 0. */
    private final Map<Integer, Integer> sides = new ConcurrentHashMap<>();
    private final Map<Long, Boolean> blocked = new ConcurrentHashMap<>();
    private final Map<Long, Double> dropRates = new ConcurrentHashMap<>();
    private final Map<Long, Long> delays = new ConcurrentHashMap<>();
    private volatile double dropRateAll;
    private int nextSide = 1;

    private static long link(int from, int to) {
        return ((long) from << 32) | (to & 0xFFFFFFFFL);
    }

    /** Cuts {@code nodeId} off from every other node, both ways. */
    public synchronized FaultInjector isolate(int nodeId) {
        sides.put(nodeId, nextSide++);
        return this;
    }

    /** Puts {@code nodes} on one side of a partition: they talk among themselves, not with the rest. */
    public synchronized FaultInjector partition(int... nodes) {
        int side = nextSide++;
        for (int n : nodes) {
            sides.put(n, side);
        }
        return this;
    }

    /** Refuses messages from {@code from} to {@code to} (one direction). */
    public FaultInjector block(int from, int to) {
        blocked.put(link(from, to), Boolean.TRUE);
        return this;
    }

    public FaultInjector unblock(int from, int to) {
        blocked.remove(link(from, to));
        return this;
    }

    /** Loses each message from {@code from} to {@code to} with probability {@code rate}. */
    public FaultInjector dropRate(int from, int to, double rate) {
        dropRates.put(link(from, to), rate);
        return this;
    }

    /** Loses each message between any two nodes with probability {@code rate}. */
    public FaultInjector dropRate(double rate) {
        dropRateAll = rate;
        return this;
    }

    /** Holds each request from {@code from} to {@code to} for {@code millis} before sending it. */
    public FaultInjector delay(int from, int to, long millis) {
        delays.put(link(from, to), millis);
        return this;
    }

    /** Removes every fault. */
    public synchronized FaultInjector heal() {
        sides.clear();
        blocked.clear();
        dropRates.clear();
        delays.clear();
        dropRateAll = 0;
        return this;
    }

    /** True when a message from {@code from} to {@code to} cannot get through (a partition or a block). */
    public boolean isBlocked(int from, int to) {
        Integer a = sides.get(from);
        Integer b = sides.get(to);
        if ((a == null ? 0 : a) != (b == null ? 0 : b)) {
            return true;
        }
        return blocked.containsKey(link(from, to));
    }

    /** Decides (randomly) whether this message from {@code from} to {@code to} is lost. */
    public boolean shouldDrop(int from, int to) {
        Double r = dropRates.get(link(from, to));
        double rate = Math.max(r == null ? 0 : r, dropRateAll);
        return rate > 0 && ThreadLocalRandom.current().nextDouble() < rate;
    }

    /** How long to hold a request from {@code from} to {@code to} (0: none). */
    public long delayMillis(int from, int to) {
        Long d = delays.get(link(from, to));
        return d == null ? 0 : d;
    }
}
