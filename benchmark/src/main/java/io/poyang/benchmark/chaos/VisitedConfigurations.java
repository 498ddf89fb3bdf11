package io.poyang.benchmark.chaos;

import java.util.Arrays;

/**
 * The memo of the linearizability search: every configuration already explored, so none is explored twice.
 * A configuration is (the definite operations placed so far, the register's state, the optional operations
 * applied so far). Since optional operations need never be applied, a configuration is no better than one
 * with the same placed operations and state that applied a subset of its optional ones: {@link #add} refuses
 * such a dominated configuration, which keeps unknown-outcome operations from multiplying the search.
 *
 * <p>Entries live in one growing {@code long[]} arena, found through an open-addressing table of int offsets,
 * so a configuration costs a few words and no objects. Entry layout: [lengths: placed-key words << 32 |
 * optional words][next entry with the same placed key and state, or -1][placed key...][optional bits...].
 */
final class VisitedConfigurations {

    private long[] arena = new long[1024];
    private int arenaUsed;
    /** Arena offset + 1 of the newest entry for a (placed, state) key; 0 = empty slot. */
    private int[] slots = new int[256];
    private int[] slotHashes = new int[256];
    private int keys;
    private long configurations;

    /** Configurations stored so far. */
    long configurations() {
        return configurations;
    }

    /**
     * Stores a configuration unless it or one that dominates it is already stored.
     *
     * @param placed  the placed-operations key (state and placed set, as built by the search), first {@code placedWords} words
     * @param applied the applied optional operations, first {@code appliedWords} words (trailing zero words trimmed)
     * @return true if the configuration is new and must be explored
     */
    boolean add(long[] placed, int placedWords, long[] applied, int appliedWords) {
        int hash = hash(placed, placedWords);
        int mask = slots.length - 1;
        int slot = hash & mask;
        while (slots[slot] != 0) {
            if (slotHashes[slot] == hash && sameKey(slots[slot] - 1, placed, placedWords)) {
                for (int e = slots[slot] - 1; e >= 0; e = (int) arena[e + 1]) {
                    if (isSubset(e, applied, appliedWords)) {
                        return false;
                    }
                }
                slots[slot] = append(placed, placedWords, applied, appliedWords, slots[slot] - 1) + 1;
                return true;
            }
            slot = (slot + 1) & mask;
        }
        slots[slot] = append(placed, placedWords, applied, appliedWords, -1) + 1;
        slotHashes[slot] = hash;
        if (++keys * 2 > slots.length) {
            grow();
        }
        return true;
    }

    private int append(long[] placed, int placedWords, long[] applied, int appliedWords, int next) {
        int need = 2 + placedWords + appliedWords;
        if (arenaUsed + need > arena.length) {
            long size = Math.max((long) arena.length * 2, (long) arenaUsed + need);
            if (size > Integer.MAX_VALUE - 8) {
                throw new OutOfMemoryError("the linearizability memo is full (2^31 words); lower the state budget");
            }
            arena = Arrays.copyOf(arena, (int) size);
        }
        int e = arenaUsed;
        arena[e] = ((long) placedWords << 32) | appliedWords;
        arena[e + 1] = next;
        System.arraycopy(placed, 0, arena, e + 2, placedWords);
        System.arraycopy(applied, 0, arena, e + 2 + placedWords, appliedWords);
        arenaUsed += need;
        configurations++;
        return e;
    }

    private boolean sameKey(int e, long[] placed, int placedWords) {
        if ((int) (arena[e] >>> 32) != placedWords) {
            return false;
        }
        for (int i = 0; i < placedWords; i++) {
            if (arena[e + 2 + i] != placed[i]) {
                return false;
            }
        }
        return true;
    }

    /** Whether entry {@code e}'s applied set is a subset of {@code applied}. */
    private boolean isSubset(int e, long[] applied, int appliedWords) {
        int words = (int) arena[e];
        int base = e + 2 + (int) (arena[e] >>> 32);
        for (int i = 0; i < words; i++) {
            long mine = arena[base + i];
            long theirs = i < appliedWords ? applied[i] : 0;
            if ((mine & ~theirs) != 0) {
                return false;
            }
        }
        return true;
    }

    private void grow() {
        int[] oldSlots = slots;
        int[] oldHashes = slotHashes;
        slots = new int[oldSlots.length * 2];
        slotHashes = new int[oldSlots.length * 2];
        int mask = slots.length - 1;
        for (int i = 0; i < oldSlots.length; i++) {
            if (oldSlots[i] != 0) {
                int slot = oldHashes[i] & mask;
                while (slots[slot] != 0) {
                    slot = (slot + 1) & mask;
                }
                slots[slot] = oldSlots[i];
                slotHashes[slot] = oldHashes[i];
            }
        }
    }

    private static int hash(long[] words, int n) {
        long h = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < n; i++) {
            h = (h ^ words[i]) * 0xBF58476D1CE4E5B9L;
            h ^= h >>> 31;
        }
        return (int) (h ^ (h >>> 32));
    }
}
