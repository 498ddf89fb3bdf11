package io.poyang.fiber;

import io.poyang.common.MpscLinkedQueue;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Collection;

/**
 * An unbounded queue from which fibers take items: the way work enters a group (raft's leader
 * takes client requests from one) and the way fibers hand work to each other.
 *
 * <p>{@link #takeAll} hands over everything queued when the taker runs, in one resumption: a taker
 * woken by one item also gets the items that arrived before it ran. Batching is opportunistic and
 * never waits for more items.
 *
 * <p>{@link #fireOffer} is the entry for other threads (I/O workers): items go to a lock-free
 * inbox of the channel, and the dispatcher is notified once per burst, not once per item.
 *
 * <p>Waiting on a channel is waiting for an event: a timed take resumes with null on timeout (a
 * timed takeAll with nothing added), with no exception. When the group is shutting down, takes on
 * an empty channel do not wait: they resume with null (takeAll: nothing added), and fibers already
 * waiting are woken that way, so loops can check {@link FiberGroup#isShouldStop()} and end.
 * Interrupts fail the wait with {@link FiberInterruptedException}.
 *
 * <p>Dispatcher thread only, except {@link #fireOffer}.
 */
public final class FiberChannel<T> {

    private static final PoyangLog log = PoyangLogs.get(FiberChannel.class);
    private static final VarHandle DRAIN_POSTED;

    static {
        try {
            DRAIN_POSTED = MethodHandles.lookup().findVarHandle(FiberChannel.class, "drainPosted", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final FiberGroup group;
    private final ArrayDeque<T> queue = new ArrayDeque<>();
    private final WaitQueue takers = new WaitQueue();
    /** Items offered from other threads, moved to {@link #queue} by the dispatcher. */
    private final MpscLinkedQueue<T> foreignItems = new MpscLinkedQueue<>();
    /** 1 while a drain task is in the dispatcher's inbox; saves a task per item under load. */
    @SuppressWarnings("unused") // accessed through DRAIN_POSTED
    private volatile int drainPosted;
    private final Runnable drainForeign = this::drainForeign;
    /** Set by {@link #close}: takes every item offered from then on. Dispatcher thread. */
    private java.util.function.Consumer<? super T> rejecter;

    FiberChannel(String name, FiberGroup group) {
        this.name = name;
        this.group = group;
    }

    public String getName() {
        return name;
    }

    /** Adds an item, waking one taker. Dispatcher thread. */
    public void offer(T item) {
        group.checkThread("FiberChannel.offer");
        offer0(item);
    }

    /**
     * Adds an item from any thread. Items from one thread arrive in the order offered. One dispatcher
     * task drains a burst of offers from all threads, so the item is not ordered against this
     * thread's later {@code fire*} calls on other objects: a fiber those wake may find the channel
     * still without the item (its drain task may not be posted yet). Wait for items with a take.
     */
    public void fireOffer(T item) {
        if (item == null) {
            throw new IllegalArgumentException("a channel carries items, not null");
        }
        if (group.dispatcher.isInDispatcherThread()) {
            offer0(item);
            return;
        }
        foreignItems.offer(item);
        if ((int) DRAIN_POSTED.getVolatile(this) == 0 && DRAIN_POSTED.compareAndSet(this, 0, 1)) {
            if (!group.dispatcher.post(drainForeign)) {
                // Nothing will drain them: drop what is queued (the offerers' own timeouts end them)
                // and clear the flag, so later offers do not pile up unseen.
                int dropped = 0;
                while (foreignItems.poll() != null) {
                    dropped++;
                }
                DRAIN_POSTED.setVolatile(this, 0);
                log.warn("{} item(s) offered to {} after dispatcher '{}' stopped are dropped", dropped, this,
                        group.dispatcher.getName());
            }
        }
    }

    private void drainForeign() {
        // Clear the flag before draining: an item offered after this point either is seen by the
        // drain below or posts a new drain task.
        DRAIN_POSTED.setVolatile(this, 0);
        T item;
        while ((item = foreignItems.poll()) != null) {
            offer0(item);
        }
    }

    /**
     * Closes the channel: the items still queued, and every item offered from now on (an offer
     * from another thread may land late), go to {@code rejecter}, which typically fails them, so no
     * request waits forever on a channel nobody reads; a taker still waiting resumes with nothing.
     * Items offered from another thread after the dispatcher stopped cannot reach the rejecter
     * (it runs on the dispatcher thread) and are dropped with a warning. Dispatcher thread.
     */
    public void close(java.util.function.Consumer<? super T> rejecter) {
        group.checkThread("FiberChannel.close");
        this.rejecter = rejecter;
        // A taker still waiting would never get anything now: it resumes with nothing, as at shutdown.
        Fiber taker;
        while ((taker = takers.peekFiber()) != null) {
            taker.wake(null, null);
        }
        T item;
        while ((item = queue.poll()) != null) {
            rejecter.accept(item);
        }
        drainForeign();
    }

    private void offer0(T item) {
        if (item == null) {
            throw new IllegalArgumentException("a channel carries items, not null");
        }
        if (rejecter != null) {
            rejecter.accept(item);
            return;
        }
        if (queue.isEmpty()) {
            Fiber taker = takers.peekFiber();
            if (taker != null) {
                if (taker.waitKind == Fiber.WAIT_TAKE) {
                    // Hand the item straight to the taker: no other fiber can take it first.
                    taker.wake(item, null);
                    return;
                }
                // The takeAll taker gets this item now (another fiber's take could otherwise get it
                // first and leave the taker with nothing), and drains what arrives meanwhile when it runs.
                Collection<Object> target = taker.drainTarget;
                target.add(item);
                taker.wake(null, null);
                taker.drainTarget = target;
                taker.drainChannel = this;
                return;
            }
        }
        queue.add(item);
    }

    /** Called by the dispatcher when a takeAll taker woken by an item runs again. */
    void drainAfterWake(Fiber fiber) {
        Collection<Object> target = fiber.drainTarget;
        fiber.drainTarget = null;
        fiber.drainChannel = null;
        drainTo(target);
    }

    @SuppressWarnings("unchecked")
    private void drainTo(Collection<? super T> target) {
        T item;
        while ((item = queue.poll()) != null) {
            target.add(item);
        }
    }

    /**
     * Suspends the running fiber until an item is there; resumes with it (null at shutdown, or at
     * once on a closed channel: {@link #isClosed}).
     */
    public FrameCallResult take(FrameCall<T> resumePoint) {
        return take0(-1, resumePoint);
    }

    /** Like {@link #take(FrameCall)}, resuming with null after {@code timeoutMillis}. */
    public FrameCallResult take(long timeoutMillis, FrameCall<T> resumePoint) {
        Fiber.checkTimeout(timeoutMillis);
        return take0(timeoutMillis, resumePoint);
    }

    /**
     * A take that finds the channel empty returns at once, with nothing, instead of waiting: when
     * the channel is closed (every offer goes to the rejecter, so nothing could wake it), and during
     * a shutdown of the channel's group or of the taker's own (the group's one-time wake-up of its
     * takers has run already, and a taker from another group is not among them).
     */
    private boolean nothingWillCome(Fiber taker) {
        return rejecter != null || group.isShouldStop() || taker.group.isShouldStop();
    }

    /** Whether {@link #close} has run: takes return at once with nothing, offers go to the rejecter. Dispatcher thread. */
    public boolean isClosed() {
        return rejecter != null;
    }

    private FrameCallResult take0(long timeoutMillis, FrameCall<T> resumePoint) {
        Fiber f = Fiber.current(group, "FiberChannel.take");
        f.beginCall(Fiber.ACTION_WAIT, "take", resumePoint);
        T item = queue.poll();
        if (item != null) {
            return f.resumeNow(item);
        }
        if (timeoutMillis == 0 || nothingWillCome(f)) {
            return f.resumeNow(null);
        }
        if (f.consumeInterrupt(this)) {
            return FrameCallResult.SUSPEND;
        }
        f.waitOn(this, Fiber.WAIT_TAKE, takers, timeoutMillis);
        return FrameCallResult.SUSPEND;
    }

    /**
     * Moves every queued item into {@code target} and resumes; if none is queued, suspends until
     * one arrives and then moves all that are queued when the fiber runs. Resumes with null.
     */
    public FrameCallResult takeAll(Collection<? super T> target, FrameCall<Void> resumePoint) {
        return takeAll0(target, -1, resumePoint);
    }

    /** Like {@link #takeAll(Collection, FrameCall)}, resuming with nothing added after {@code timeoutMillis}. */
    public FrameCallResult takeAll(Collection<? super T> target, long timeoutMillis, FrameCall<Void> resumePoint) {
        Fiber.checkTimeout(timeoutMillis);
        return takeAll0(target, timeoutMillis, resumePoint);
    }

    @SuppressWarnings("unchecked")
    private FrameCallResult takeAll0(Collection<? super T> target, long timeoutMillis, FrameCall<Void> resumePoint) {
        if (target == null) {
            throw new IllegalArgumentException("takeAll needs a collection to put the items in");
        }
        Fiber f = Fiber.current(group, "FiberChannel.takeAll");
        f.beginCall(Fiber.ACTION_WAIT, "takeAll", resumePoint);
        if (!queue.isEmpty()) {
            drainTo(target);
            return f.resumeNow(null);
        }
        if (timeoutMillis == 0 || nothingWillCome(f)) {
            return f.resumeNow(null);
        }
        if (f.consumeInterrupt(this)) {
            return FrameCallResult.SUSPEND;
        }
        f.waitOn(this, Fiber.WAIT_TAKE_ALL, takers, timeoutMillis);
        f.drainTarget = (Collection<Object>) target;
        // timedWait is irrelevant here: takeAll always resumes with null.
        return FrameCallResult.SUSPEND;
    }

    /** Items queued on the dispatcher side (not counting fireOffer items still in transit). */
    public int size() {
        group.checkThread("FiberChannel.size");
        return queue.size();
    }

    public boolean isEmpty() {
        group.checkThread("FiberChannel.isEmpty");
        return queue.isEmpty();
    }

    @Override
    public String toString() {
        return "channel '" + name + "'";
    }
}
