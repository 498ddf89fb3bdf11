package io.poyang.raft.store;

/**
 * The file positions of a run of consecutive log indexes, in memory: a growable ring of longs.
 * Holds the positions not yet flushed to the index files (and a few before them, for reads), so
 * the hot path records a position with one array store and no allocation.
 */
final class PositionRing {

    private long[] positions;
    private int head;
    private int size;
    /** The index whose position is at {@link #head}; meaningful when size &gt; 0. */
    private long firstIndex;

    PositionRing(int initialCapacity) {
        int cap = Integer.highestOneBit(Math.max(16, initialCapacity - 1) << 1);
        positions = new long[cap];
    }

    /** Empties the ring; the next {@link #add} is for {@code nextIndex}. */
    void reset(long nextIndex) {
        head = 0;
        size = 0;
        firstIndex = nextIndex;
    }

    /** The first index held (or the next one to add, when empty). */
    long firstIndex() {
        return firstIndex;
    }

    /** One past the last index held. */
    long endIndex() {
        return firstIndex + size;
    }

    boolean contains(long index) {
        return index >= firstIndex && index < firstIndex + size;
    }

    /** Records the position of index {@link #endIndex()}. */
    void add(long position) {
        if (size == positions.length) {
            grow();
        }
        positions[(head + size) & (positions.length - 1)] = position;
        size++;
    }

    long get(long index) {
        if (!contains(index)) {
            throw new IllegalArgumentException("index " + index + " not in [" + firstIndex + ", " + endIndex() + ")");
        }
        return positions[(head + (int) (index - firstIndex)) & (positions.length - 1)];
    }

    /** Drops {@code index} and everything after it. */
    void truncateFrom(long index) {
        if (index < firstIndex) {
            size = 0;
            firstIndex = index;
        } else if (index < firstIndex + size) {
            size = (int) (index - firstIndex);
        }
    }

    /** Drops everything before {@code index}. */
    void removeBefore(long index) {
        if (index <= firstIndex) {
            return;
        }
        long n = Math.min(index - firstIndex, size);
        head = (head + (int) n) & (positions.length - 1);
        size -= (int) n;
        firstIndex = index;
    }

    private void grow() {
        long[] bigger = new long[positions.length * 2];
        for (int i = 0; i < size; i++) {
            bigger[i] = positions[(head + i) & (positions.length - 1)];
        }
        positions = bigger;
        head = 0;
    }
}
