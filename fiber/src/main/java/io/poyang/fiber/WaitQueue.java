package io.poyang.fiber;

/**
 * The fibers waiting on one primitive, first come first served. Intrusive (the nodes live in the
 * fibers), so waiting and waking allocate nothing and a fiber that leaves early (timeout,
 * interrupt, the other condition fired) unlinks in O(1). Dispatcher thread only.
 */
final class WaitQueue {
    private WaitNode head;
    private WaitNode tail;
    private int size;

    void add(WaitNode node) {
        node.queue = this;
        node.next = null;
        node.prev = tail;
        if (tail == null) {
            head = node;
        } else {
            tail.next = node;
        }
        tail = node;
        size++;
    }

    void remove(WaitNode node) {
        if (node.queue != this) {
            return;
        }
        WaitNode p = node.prev;
        WaitNode n = node.next;
        if (p == null) {
            head = n;
        } else {
            p.next = n;
        }
        if (n == null) {
            tail = p;
        } else {
            n.prev = p;
        }
        node.prev = null;
        node.next = null;
        node.queue = null;
        size--;
    }

    /** The first waiting fiber, still in the queue, or null. */
    Fiber peekFiber() {
        return head == null ? null : head.fiber;
    }

    boolean isEmpty() {
        return head == null;
    }

    int size() {
        return size;
    }
}
