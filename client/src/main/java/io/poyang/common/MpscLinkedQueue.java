package io.poyang.common;

import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * An unbounded lock-free queue for many producers and one consumer (an I/O worker's or a
 * dispatcher's inbox). {@link #offer} may be called from any thread; {@link #poll} and
 * {@link #relaxedPoll} only from the one consumer thread.
 *
 * <p>Producers swap themselves in at the tail with one atomic exchange and then link the previous
 * node, so an offer is wait-free. Between those two steps the element is counted by
 * {@link #isEmpty()} but not yet reachable; {@link #poll()} spins over that short window while
 * {@link #relaxedPoll()} returns null and leaves it for the next call.
 */
public final class MpscLinkedQueue<E> {

    private static final class Node<E> {
        E value;
        volatile Node<E> next;

        Node(E value) {
            this.value = value;
        }
    }

    @SuppressWarnings("rawtypes")
    private static final AtomicReferenceFieldUpdater<MpscLinkedQueue, Node> TAIL =
            AtomicReferenceFieldUpdater.newUpdater(MpscLinkedQueue.class, Node.class, "tail");
    @SuppressWarnings("rawtypes")
    private static final AtomicReferenceFieldUpdater<Node, Node> NEXT =
            AtomicReferenceFieldUpdater.newUpdater(Node.class, Node.class, "next");

    /** Consumer side: the node whose successor is the first element. */
    private Node<E> head;
    /** Producer side: the last node offered. */
    private volatile Node<E> tail;

    public MpscLinkedQueue() {
        Node<E> stub = new Node<>(null);
        head = stub;
        tail = stub;
    }

    /** Adds an element; any thread, never blocks. */
    @SuppressWarnings("unchecked")
    public void offer(E e) {
        if (e == null) {
            throw new NullPointerException("null elements are not allowed");
        }
        Node<E> n = new Node<>(e);
        Node<E> prev = TAIL.getAndSet(this, n);
        NEXT.lazySet(prev, n);
    }

    /**
     * Removes the first element, or returns null when the queue is empty. Consumer thread only. If
     * a producer is between its two steps, this spins until the element becomes reachable.
     */
    public E poll() {
        Node<E> h = head;
        Node<E> next = h.next;
        if (next == null) {
            if (h == tail) {
                return null;
            }
            while ((next = h.next) == null) {
                // Java 8 has no onSpinWait; the window is a few instructions of another thread.
                Thread.yield();
            }
        }
        return take(h, next);
    }

    /** Like {@link #poll()} but never spins: may return null while an offer is completing. */
    public E relaxedPoll() {
        Node<E> h = head;
        Node<E> next = h.next;
        return next == null ? null : take(h, next);
    }

    /**
     * Moves past {@code h}, the node before the element taken, and unlinks it. Unlinking matters
     * to the collector: a node that stayed in a queue across a few young collections (an idle
     * inbox's head) is promoted to the old generation, and were it still to point at its successor
     * once dropped, that dead old node would keep every node offered after it alive through the
     * next young collection, which copies them, ages them and in time promotes them too: a chain
     * that never ends. Raw raft with four groups on three nodes had 40 MB of such nodes surviving
     * each young collection, in pauses of 45-50 ms; unlinked, 4 MB and 3-4 ms (docs/benchmarks.md,
     * twelfth session). No producer writes {@code h} again: each links only the node it swapped
     * out of the tail, and {@code h}'s link was already made.
     */
    private E take(Node<E> h, Node<E> next) {
        E v = next.value;
        next.value = null;
        head = next;
        NEXT.lazySet(h, null);
        return v;
    }

    /** True when nothing has been offered since the last element was taken. Consumer thread only. */
    public boolean isEmpty() {
        return head == tail;
    }
}
