package io.poyang.dtkv.server;

import java.util.Arrays;

/**
 * A binary min-heap of items ordered by deadline, where each item remembers its own position so
 * it can be moved or removed in O(log n) without searching and without garbage entries. Used for
 * TTL deadlines (temp nodes) and lease deadlines (locks).
 */
final class DeadlineHeap<T extends DeadlineHeap.Item> {

    /** An item that can sit in one heap at a time. */
    abstract static class Item {
        /** Position in the heap array; -1 when not in a heap. */
        int heapIndex = -1;
        long deadlineMillis;
        /** Leader only: local time the expiry was last proposed (0: not proposed since the deadline was set). */
        long proposedAtMillis;
    }

    private Item[] items = new Item[64];
    private int size;

    int size() {
        return size;
    }

    boolean contains(Item item) {
        return item.heapIndex >= 0;
    }

    /** Adds the item or moves it to its new deadline. */
    void set(T item, long deadlineMillis) {
        item.proposedAtMillis = 0;
        if (item.heapIndex >= 0) {
            long old = item.deadlineMillis;
            item.deadlineMillis = deadlineMillis;
            if (deadlineMillis < old) {
                up(item.heapIndex);
            } else {
                down(item.heapIndex);
            }
            return;
        }
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        item.deadlineMillis = deadlineMillis;
        item.heapIndex = size;
        items[size++] = item;
        up(size - 1);
    }

    void remove(T item) {
        int i = item.heapIndex;
        if (i < 0) {
            return;
        }
        item.heapIndex = -1;
        size--;
        if (i == size) {
            items[size] = null;
            return;
        }
        Item last = items[size];
        items[size] = null;
        items[i] = last;
        last.heapIndex = i;
        up(i);
        down(last.heapIndex);
    }

    void clear() {
        for (int i = 0; i < size; i++) {
            items[i].heapIndex = -1;
            items[i] = null;
        }
        size = 0;
    }

    /**
     * Moves every deadline later by {@code deltaMillis} (at least 0). The order stays, so the heap
     * needs no repair. The items' own copies of their deadlines are the caller's to move.
     */
    void shiftAll(long deltaMillis) {
        if (deltaMillis < 0) {
            throw new IllegalArgumentException("deadlines only move later; got " + deltaMillis + " ms");
        }
        for (int i = 0; i < size; i++) {
            items[i].deadlineMillis += deltaMillis;
        }
    }

    /** The earliest deadline, or Long.MAX_VALUE when empty. */
    long firstDeadline() {
        return size == 0 ? Long.MAX_VALUE : items[0].deadlineMillis;
    }

    /**
     * Visits items whose deadline is at most {@code dueMillis}, in heap order (not sorted), until the
     * visitor returns false. Only due items and their direct children are looked at.
     */
    @SuppressWarnings("unchecked")
    void forEachDue(long dueMillis, Visitor<T> visitor) {
        if (size == 0) {
            return;
        }
        int[] stack = new int[32];
        int top = 0;
        stack[top++] = 0;
        while (top > 0) {
            int i = stack[--top];
            Item it = items[i];
            if (it.deadlineMillis > dueMillis) {
                continue;
            }
            if (!visitor.visit((T) it)) {
                return;
            }
            int l = 2 * i + 1;
            if (l < size) {
                if (top + 2 > stack.length) {
                    stack = Arrays.copyOf(stack, stack.length * 2);
                }
                stack[top++] = l;
                if (l + 1 < size) {
                    stack[top++] = l + 1;
                }
            }
        }
    }

    interface Visitor<T> {
        boolean visit(T item);
    }

    private void up(int i) {
        Item it = items[i];
        while (i > 0) {
            int p = (i - 1) >>> 1;
            Item parent = items[p];
            if (parent.deadlineMillis <= it.deadlineMillis) {
                break;
            }
            items[i] = parent;
            parent.heapIndex = i;
            i = p;
        }
        items[i] = it;
        it.heapIndex = i;
    }

    private void down(int i) {
        Item it = items[i];
        int half = size >>> 1;
        while (i < half) {
            int c = 2 * i + 1;
            Item child = items[c];
            int r = c + 1;
            if (r < size && items[r].deadlineMillis < child.deadlineMillis) {
                c = r;
                child = items[r];
            }
            if (it.deadlineMillis <= child.deadlineMillis) {
                break;
            }
            items[i] = child;
            child.heapIndex = i;
            i = c;
        }
        items[i] = it;
        it.heapIndex = i;
    }
}
