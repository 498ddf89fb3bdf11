package io.poyang.raft.core;

import io.poyang.codec.Encodable;
import io.poyang.raft.store.LogItem;

/**
 * The most recent log entries of a group in memory, by index, in a ring that grows as needed: the
 * leader's replicators send from here and the apply manager applies from here, so the hot path
 * never reads the disk. Entries not yet applied are always kept; applied ones are kept for
 * followers that are a little behind, up to a bound in items and bytes, and evicted once every
 * follower has them. Dispatcher thread only.
 */
final class TailCache {

    private LogItem[] ring = new LogItem[1024];
    private int[] sizes = new int[1024];
    private int mask = 1023;
    /** Index of the oldest entry held; meaningless when empty. */
    private long first;
    private int count;
    private long bytes;

    /** The oldest index held, or -1 when empty. */
    long firstIndex() {
        return count == 0 ? -1 : first;
    }

    /** The newest index held, or -1 when empty. */
    long lastIndex() {
        return count == 0 ? -1 : first + count - 1;
    }

    int size() {
        return count;
    }

    long bytes() {
        return bytes;
    }

    /** Adds the next entry; an entry that does not follow the last one restarts the cache at it. */
    void add(LogItem item) {
        long idx = item.getIndex();
        if (count == 0 || idx != first + count) {
            clear();
            first = idx;
        }
        if (count == ring.length) {
            grow();
        }
        int slot = (int) (idx & mask);
        int size = sizeOf(item);
        ring[slot] = item;
        sizes[slot] = size;
        count++;
        bytes += size;
    }

    /** The entry at {@code index}, or null when it is not held. */
    LogItem get(long index) {
        long off = index - first;
        if (count == 0 || off < 0 || off >= count) {
            return null;
        }
        return ring[(int) (index & mask)];
    }

    /** Drops {@code index} and everything after it (a follower's conflicting tail). */
    void truncateFrom(long index) {
        while (count > 0 && first + count - 1 >= index) {
            int slot = (int) ((first + count - 1) & mask);
            bytes -= sizes[slot];
            ring[slot] = null;
            count--;
        }
    }

    /** Drops the entries below {@code index}. */
    void evictBelow(long index) {
        while (count > 0 && first < index) {
            evictFirst();
        }
    }

    /**
     * Evicts applied entries: those every follower has (below {@code neededFrom}, the lowest index
     * some follower still needs) at once, then the oldest applied ones while the cache is past its
     * bounds. Never drops an entry above {@code applied}.
     */
    void evict(long applied, long neededFrom, int maxItems, long maxBytes) {
        long freeBelow = Math.min(applied + 1, neededFrom);
        while (count > 0 && first < freeBelow) {
            evictFirst();
        }
        while (count > 0 && first <= applied && (count > maxItems || bytes > maxBytes)) {
            evictFirst();
        }
    }

    void clear() {
        while (count > 0) {
            evictFirst();
        }
        bytes = 0;
    }

    private void evictFirst() {
        int slot = (int) (first & mask);
        bytes -= sizes[slot];
        ring[slot] = null;
        first++;
        count--;
    }

    private void grow() {
        int n = ring.length * 2;
        LogItem[] r = new LogItem[n];
        int[] s = new int[n];
        int m = n - 1;
        for (int i = 0; i < count; i++) {
            long idx = first + i;
            r[(int) (idx & m)] = ring[(int) (idx & mask)];
            s[(int) (idx & m)] = sizes[(int) (idx & mask)];
        }
        ring = r;
        sizes = s;
        mask = m;
    }

    static int sizeOf(LogItem item) {
        Encodable b = item.getBody();
        Encodable h = item.getHeader();
        return 48 + (b == null ? 0 : b.encodedSize()) + (h == null ? 0 : h.encodedSize());
    }
}
