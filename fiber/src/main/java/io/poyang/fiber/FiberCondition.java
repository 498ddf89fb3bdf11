package io.poyang.fiber;

/**
 * A place where fibers wait for something to change ("new entries appended", "commit index
 * moved"). There is no lock: the group is single-threaded, so a fiber checks the state, and if it
 * must wait it awaits the condition; whoever changes the state signals it. Waiters are woken first
 * come, first served.
 *
 * <p>Waiting on a condition is waiting for an event, not a value: a timed await resumes normally
 * with TRUE when signalled and FALSE on timeout (no exception); an untimed one resumes with null.
 * Either way, re-check the state after resuming. Interrupts fail the wait with
 * {@link FiberInterruptedException}.
 *
 * <p>Dispatcher thread only, except {@link #fireSignal()} and {@link #fireSignalAll()}.
 */
public final class FiberCondition {

    private final String name;
    private final FiberGroup group;
    private final WaitQueue waiters = new WaitQueue();

    FiberCondition(String name, FiberGroup group) {
        this.name = name;
        this.group = group;
    }

    public String getName() {
        return name;
    }

    /** Wakes the longest-waiting fiber, if any. */
    public void signal() {
        group.checkThread("FiberCondition.signal");
        Fiber f = waiters.peekFiber();
        if (f != null) {
            wakeSignalled(f);
        }
    }

    /** Wakes every waiting fiber. */
    public void signalAll() {
        group.checkThread("FiberCondition.signalAll");
        Fiber f;
        while ((f = waiters.peekFiber()) != null) {
            wakeSignalled(f);
        }
    }

    /** {@link #signal()} from any thread. */
    public void fireSignal() {
        if (group.dispatcher.isInDispatcherThread()) {
            signal();
        } else {
            group.dispatcher.post(this::signal);
        }
    }

    /** {@link #signalAll()} from any thread. */
    public void fireSignalAll() {
        if (group.dispatcher.isInDispatcherThread()) {
            signalAll();
        } else {
            group.dispatcher.post(this::signalAll);
        }
    }

    private static void wakeSignalled(Fiber f) {
        // wake() also unlinks the fiber from a second condition it may be waiting on.
        f.wake(f.timedWait ? Boolean.TRUE : null, null);
    }

    /** Suspends the running fiber until signalled; resumes with null. */
    public FrameCallResult await(FrameCall<Void> resumePoint) {
        return await0(-1, null, resumePoint);
    }

    /** Suspends the running fiber until signalled (TRUE) or {@code timeoutMillis} passed (FALSE). */
    public FrameCallResult await(long timeoutMillis, FrameCall<Boolean> resumePoint) {
        Fiber.checkTimeout(timeoutMillis);
        return await0(timeoutMillis, null, resumePoint);
    }

    /** Suspends the running fiber until this condition or {@code another} is signalled; resumes with null. */
    public FrameCallResult await(FiberCondition another, FrameCall<Void> resumePoint) {
        return await0(-1, another, resumePoint);
    }

    /**
     * Suspends the running fiber until this condition or {@code another} is signalled (TRUE) or the
     * timeout passed (FALSE). The fiber leaves both conditions when either fires.
     */
    public FrameCallResult await(long timeoutMillis, FiberCondition another, FrameCall<Boolean> resumePoint) {
        Fiber.checkTimeout(timeoutMillis);
        return await0(timeoutMillis, another, resumePoint);
    }

    private FrameCallResult await0(long timeoutMillis, FiberCondition another, FrameCall<?> resumePoint) {
        Fiber f = Fiber.current(group, "FiberCondition.await");
        if (another != null && another.group.dispatcher != group.dispatcher) {
            throw new FiberException("cannot await " + this + " and " + another
                    + " together: they belong to groups on different dispatchers");
        }
        f.beginCall(Fiber.ACTION_WAIT, "await", resumePoint);
        if (timeoutMillis == 0) {
            return f.resumeNow(Boolean.FALSE);
        }
        Object source = another == null || another == this ? this : new PairSource(this, another);
        if (f.consumeInterrupt(source)) {
            return FrameCallResult.SUSPEND;
        }
        f.waitOn(source, Fiber.WAIT_CONDITION, waiters, timeoutMillis);
        if (another != null && another != this) {
            f.alsoWaitOn(another.waiters);
        }
        return FrameCallResult.SUSPEND;
    }

    /** Number of fibers waiting (for tests and metrics). Dispatcher thread. */
    public int waiterCount() {
        group.checkThread("FiberCondition.waiterCount");
        return waiters.size();
    }

    @Override
    public String toString() {
        return "condition '" + name + "'";
    }

    /** What a fiber awaiting two conditions waits on, for snapshots. Only allocated for that case. */
    private static final class PairSource {
        final FiberCondition first;
        final FiberCondition second;

        PairSource(FiberCondition first, FiberCondition second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public String toString() {
            return first + " or " + second;
        }
    }
}
