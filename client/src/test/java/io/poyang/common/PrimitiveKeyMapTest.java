package io.poyang.common;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link IntObjMap} and {@link LongObjMap} checked against {@link HashMap} under the same operations. */
class PrimitiveKeyMapTest {

    /** The operations both maps share, over long keys (the int map sees them cast). */
    interface MapUnderTest {
        String put(long k, String v);

        String get(long k);

        String remove(long k);

        boolean containsKey(long k);

        int size();

        void clear();

        /** Visits all entries, removing those the predicate rejects; returns the keys visited. */
        List<Long> forEachRemoving(LongPredicate keep);

        long keyOf(long k);
    }

    static final class IntAdapter implements MapUnderTest {
        final IntObjMap<String> m;

        IntAdapter(int expected) {
            m = new IntObjMap<>(expected);
        }

        public String put(long k, String v) {
            return m.put((int) k, v);
        }

        public String get(long k) {
            return m.get((int) k);
        }

        public String remove(long k) {
            return m.remove((int) k);
        }

        public boolean containsKey(long k) {
            return m.containsKey((int) k);
        }

        public int size() {
            return m.size();
        }

        public void clear() {
            m.clear();
        }

        public List<Long> forEachRemoving(LongPredicate keep) {
            List<Long> seen = new ArrayList<>();
            m.forEach((k, v) -> {
                assertEquals(String.valueOf(k), v.substring(0, v.indexOf('#')), "value stored under its key");
                seen.add((long) k);
                return keep.test(k);
            });
            return seen;
        }

        public long keyOf(long k) {
            return (int) k;
        }

        public String toString() {
            return "IntObjMap";
        }
    }

    static final class LongAdapter implements MapUnderTest {
        final LongObjMap<String> m;

        LongAdapter(int expected) {
            m = new LongObjMap<>(expected);
        }

        public String put(long k, String v) {
            return m.put(k, v);
        }

        public String get(long k) {
            return m.get(k);
        }

        public String remove(long k) {
            return m.remove(k);
        }

        public boolean containsKey(long k) {
            return m.containsKey(k);
        }

        public int size() {
            return m.size();
        }

        public void clear() {
            m.clear();
        }

        public List<Long> forEachRemoving(LongPredicate keep) {
            List<Long> seen = new ArrayList<>();
            m.forEach((k, v) -> {
                assertEquals(String.valueOf(k), v.substring(0, v.indexOf('#')), "value stored under its key");
                seen.add(k);
                return keep.test(k);
            });
            return seen;
        }

        public long keyOf(long k) {
            return k;
        }

        public String toString() {
            return "LongObjMap";
        }
    }

    /** Each map with key spaces from tiny (constant collisions and wrap-around runs) to the full range. */
    static Stream<Arguments> maps() {
        List<Arguments> out = new ArrayList<>();
        long[] keySpaces = {8, 50, 1_000, 100_000, 0};
        for (long space : keySpaces) {
            out.add(Arguments.of("IntObjMap", space));
            out.add(Arguments.of("LongObjMap", space));
        }
        return out.stream();
    }

    static MapUnderTest create(String kind, int expected) {
        return kind.equals("IntObjMap") ? new IntAdapter(expected) : new LongAdapter(expected);
    }

    static long randomKey(Random r, long space) {
        if (space == 0) {
            return r.nextLong();
        }
        // Negative keys too, so sign handling in the hash is exercised.
        return r.nextInt(2) == 0 ? (long) r.nextInt((int) space) : -1 - (long) r.nextInt((int) space);
    }

    @ParameterizedTest(name = "{0} keys in {1}")
    @MethodSource("maps")
    void randomOperationsMatchHashMap(String kind, long space) {
        Random r = new Random(42 + space);
        MapUnderTest m = create(kind, 4);
        Map<Long, String> ref = new HashMap<>();
        int serial = 0;
        for (int op = 0; op < 60_000; op++) {
            long k = m.keyOf(randomKey(r, space));
            int dice = r.nextInt(100);
            if (dice < 45) {
                String v = k + "#" + serial++;
                assertEquals(ref.put(k, v), m.put(k, v), "put " + k);
            } else if (dice < 80) {
                assertEquals(ref.remove(k), m.remove(k), "remove " + k);
            } else if (dice < 98) {
                assertEquals(ref.get(k), m.get(k), "get " + k);
                assertEquals(ref.containsKey(k), m.containsKey(k));
            } else if (dice < 99) {
                Set<Long> doomed = new HashSet<>();
                List<Long> seen = m.forEachRemoving(key -> {
                    if (r.nextInt(3) == 0) {
                        doomed.add(key);
                        return false;
                    }
                    return true;
                });
                assertEquals(ref.size(), seen.size(), "forEach visits every entry once");
                assertEquals(ref.keySet(), new HashSet<>(seen));
                ref.keySet().removeAll(doomed);
            } else if (r.nextInt(20) == 0) {
                m.clear();
                ref.clear();
            }
            assertEquals(ref.size(), m.size());
        }
        for (Map.Entry<Long, String> e : ref.entrySet()) {
            assertEquals(e.getValue(), m.get(e.getKey()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void growsFromTinyThroughManyResizesAndShrinksBackToEmpty(String kind) {
        MapUnderTest m = create(kind, 0);
        int n = 50_000;
        for (int i = 0; i < n; i++) {
            assertNull(m.put(i * 7919L, i * 7919L + "#" + i));
        }
        assertEquals(n, m.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i * 7919L + "#" + i, m.get(i * 7919L));
        }
        for (int i = 0; i < n; i += 2) {
            assertEquals(i * 7919L + "#" + i, m.remove(i * 7919L));
        }
        for (int i = 0; i < n; i++) {
            assertEquals(i % 2 == 0 ? null : i * 7919L + "#" + i, m.get(i * 7919L));
        }
        for (int i = 1; i < n; i += 2) {
            m.remove(i * 7919L);
        }
        assertEquals(0, m.size());
        assertTrue(m.forEachRemoving(k -> true).isEmpty());
    }

    static Stream<String> kinds() {
        return Stream.of("IntObjMap", "LongObjMap");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void removingEveryEntryDuringForEachEmptiesTheMap(String kind) {
        MapUnderTest m = create(kind, 16);
        for (long k = -500; k < 500; k++) {
            m.put(k, k + "#");
        }
        List<Long> seen = m.forEachRemoving(k -> false);
        assertEquals(1000, seen.size());
        assertEquals(0, m.size());
        for (long k = -500; k < 500; k++) {
            assertFalse(m.containsKey(k));
        }
    }

    /**
     * Keys that all hash to the last slots of the table, so their probe run wraps around to slot 0;
     * then deleting from the middle of the run must shift the wrapped entries back correctly.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void backwardShiftDeletionAcrossTheWrapAround(String kind) {
        int capacity = 32; // what new ...(16) allocates: 16 / 0.6 -> 26 -> 32
        int mask = capacity - 1;
        List<Long> nearEnd = new ArrayList<>();
        List<Long> atZero = new ArrayList<>();
        for (long k = 0; nearEnd.size() < 4 || atZero.size() < 3; k++) {
            long key = kind.equals("IntObjMap") ? (int) k : k * 1_000_003L;
            int home = homeSlot(key, mask);
            if (home == mask - 1 && nearEnd.size() < 4) {
                nearEnd.add(key);
            } else if (home == 0 && atZero.size() < 3) {
                atZero.add(key);
            }
        }
        for (long s = 0; s < 1000; s++) {
            MapUnderTest m = create(kind, 16);
            Map<Long, String> ref = new HashMap<>();
            List<Long> keys = new ArrayList<>(nearEnd);
            keys.addAll(atZero);
            java.util.Collections.shuffle(keys, new Random(s));
            for (long k : keys) {
                m.put(k, k + "#");
                ref.put(k, k + "#");
            }
            java.util.Collections.shuffle(keys, new Random(s + 1));
            for (long k : keys) {
                assertEquals(ref.remove(k), m.remove(k));
                for (long other : nearEnd) {
                    assertEquals(ref.get(other), m.get(other), "seed " + s + " after removing " + k);
                }
                for (long other : atZero) {
                    assertEquals(ref.get(other), m.get(other), "seed " + s + " after removing " + k);
                }
            }
            assertEquals(0, m.size());
        }
    }

    /** The maps' hash, reproduced to build collisions on purpose. */
    static int homeSlot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    @org.junit.jupiter.api.Test
    void impossibleExpectedSizesAreRefusedClearly() {
        assertThrows(IllegalArgumentException.class, () -> new IntObjMap<String>(-1));
        assertThrows(IllegalArgumentException.class, () -> new IntObjMap<String>(Integer.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> new LongObjMap<String>(-1));
        assertThrows(IllegalArgumentException.class, () -> new LongObjMap<String>(1 << 30));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void nullValuesAreRefused(String kind) {
        MapUnderTest m = create(kind, 4);
        assertThrows(IllegalArgumentException.class, () -> m.put(1, null));
        assertEquals(0, m.size());
    }
}
