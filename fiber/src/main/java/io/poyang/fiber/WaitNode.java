package io.poyang.fiber;

/** A fiber's place in one {@link WaitQueue}. A fiber owns at most two (it may await two conditions). */
final class WaitNode {
    final Fiber fiber;
    WaitNode prev;
    WaitNode next;
    WaitQueue queue;

    WaitNode(Fiber fiber) {
        this.fiber = fiber;
    }
}
