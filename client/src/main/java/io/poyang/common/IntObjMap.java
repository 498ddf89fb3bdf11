package io.poyang.common;

import java.util.Arrays;

/**
 * A hash map from {@code int} to objects without boxing: open addressing, linear probing,
 * backward-shift deletion, power-of-two capacity. Null values are not allowed (a null slot means
 * empty). Not thread safe.
 */
public final class IntObjMap<V> {

    /** Visits an entry; returning false removes it. */
    public interface Visitor<V> {
        boolean visit(int key, V value);
    }

    private static final float LOAD_FACTOR = 0.6f;
    /** Beyond this the power-of-two table would pass 2^30 slots. */
    private static final int MAX_EXPECTED_SIZE = 1 << 29;

    private int[] keys;
    private Object[] values;
    private int mask;
    private int size;
    private int resizeAt;

    public IntObjMap() {
        this(16);
    }

    public IntObjMap(int expectedSize) {
        if (expectedSize < 0 || expectedSize > MAX_EXPECTED_SIZE) {
            throw new IllegalArgumentException("expectedSize must be 0 to " + MAX_EXPECTED_SIZE + ", got " + expectedSize);
        }
        int cap = Integer.highestOneBit(Math.max(4, (int) (expectedSize / LOAD_FACTOR)) - 1) << 1;
        allocate(cap);
    }

    private void allocate(int capacity) {
        keys = new int[capacity];
        values = new Object[capacity];
        mask = capacity - 1;
        resizeAt = (int) (capacity * LOAD_FACTOR);
    }

    private int slot(int key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    @SuppressWarnings("unchecked")
    public V get(int key) {
        int i = slot(key);
        Object v;
        while ((v = values[i]) != null) {
            if (keys[i] == key) {
                return (V) v;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    public boolean containsKey(int key) {
        return get(key) != null;
    }

    /** Associates the value with the key; returns the previous value or null. */
    @SuppressWarnings("unchecked")
    public V put(int key, V value) {
        if (value == null) {
            throw new IllegalArgumentException("null values are not allowed");
        }
        int i = slot(key);
        Object v;
        while ((v = values[i]) != null) {
            if (keys[i] == key) {
                values[i] = value;
                return (V) v;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        if (++size > resizeAt) {
            rehash(values.length << 1);
        }
        return null;
    }

    /** Removes the key; returns its value or null when absent. */
    @SuppressWarnings("unchecked")
    public V remove(int key) {
        int i = slot(key);
        Object v;
        while ((v = values[i]) != null) {
            if (keys[i] == key) {
                deleteSlot(i);
                return (V) v;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** Backward-shift deletion: moves later entries of the probe run into the gap. */
    private void deleteSlot(int gap) {
        size--;
        int i = (gap + 1) & mask;
        while (values[i] != null) {
            int home = slot(keys[i]);
            // The entry at i may move to the gap when its home is not in (gap, i] (cyclically).
            boolean movable = gap <= i ? (home <= gap || home > i) : (home <= gap && home > i);
            if (movable) {
                keys[gap] = keys[i];
                values[gap] = values[i];
                gap = i;
            }
            i = (i + 1) & mask;
        }
        values[gap] = null;
    }

    private void rehash(int newCapacity) {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        allocate(newCapacity);
        for (int j = 0; j < oldValues.length; j++) {
            Object v = oldValues[j];
            if (v != null) {
                int i = slot(oldKeys[j]);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = v;
            }
        }
    }

    /**
     * Visits every entry; entries for which the visitor returns false are removed after the walk.
     * The visitor must not modify the map itself.
     */
    @SuppressWarnings("unchecked")
    public void forEach(Visitor<V> visitor) {
        int[] doomed = null;
        int doomedCount = 0;
        Object[] vs = values;
        int[] ks = keys;
        for (int i = 0; i < vs.length; i++) {
            Object v = vs[i];
            if (v != null && !visitor.visit(ks[i], (V) v)) {
                if (doomed == null) {
                    doomed = new int[8];
                } else if (doomedCount == doomed.length) {
                    doomed = Arrays.copyOf(doomed, doomedCount * 2);
                }
                doomed[doomedCount++] = ks[i];
            }
        }
        for (int i = 0; i < doomedCount; i++) {
            remove(doomed[i]);
        }
    }

    public void clear() {
        Arrays.fill(values, null);
        size = 0;
    }
}
