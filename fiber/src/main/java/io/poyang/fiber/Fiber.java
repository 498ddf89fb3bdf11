package io.poyang.fiber;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A lightweight thread of a {@link FiberGroup}: a stack of {@link FiberFrame}s kept on the heap
 * and run step by step by the group's {@link Dispatcher}. A suspended fiber holds no Java stack
 * and no thread; it costs its frames and a few dozen bytes.
 *
 * <p>The static methods are the suspending calls and the frame exits; they act on the fiber that
 * is running, so call them only from a frame step and return their token at once. Instance
 * methods other than {@link #getName()}, {@link #isDaemon()} and {@link #getGroup()} must be
 * called on the group's dispatcher thread.
 */
public final class Fiber {

    static final byte STATE_NEW = 0;
    static final byte STATE_READY = 1;
    static final byte STATE_RUNNING = 2;
    static final byte STATE_WAITING = 3;
    static final byte STATE_FINISHED = 4;

    /** What the running step asked for; exactly one per step. */
    static final byte ACTION_NONE = 0;
    static final byte ACTION_CALL = 1;
    static final byte ACTION_RESUME = 2;
    static final byte ACTION_WAIT = 3;
    static final byte ACTION_YIELD = 4;
    static final byte ACTION_RETURN = 5;

    static final byte WAIT_NONE = 0;
    static final byte WAIT_FUTURE = 1;
    static final byte WAIT_CONDITION = 2;
    static final byte WAIT_TAKE = 3;
    static final byte WAIT_TAKE_ALL = 4;
    static final byte WAIT_SLEEP = 5;
    static final byte WAIT_JOIN = 6;

    private static final String SLEEP_SOURCE = "sleep";

    private final String name;
    final FiberGroup group;
    private final boolean daemon;
    final FiberFrame<?> entryFrame;

    FiberFrame<?> top;
    byte state = STATE_NEW;
    byte stepAction;
    /** The operation behind stepAction, for misuse messages. */
    String stepActionName;
    Object resumeInput;
    Throwable resumeError;

    /** Next fiber in the group's ready queue. */
    Fiber nextReady;
    /** The group's list of live fibers. */
    Fiber prevLive;
    Fiber nextLive;

    /** What the fiber waits on (a primitive, a fiber, or SLEEP_SOURCE); null unless waiting. */
    Object waitSource;
    byte waitKind;
    /** A timed wait resumes with TRUE/FALSE where an untimed one resumes with null. */
    boolean timedWait;
    long waitTimeoutMillis;
    long waitSinceNanos;
    private WaitNode waitNode;
    private WaitNode secondWaitNode;

    /** Timer heap bookkeeping, owned by the dispatcher. */
    long deadlineNanos;
    long timerSeq;
    int timerIndex = -1;

    /** Set while the fiber waits in takeAll: the items go here when it resumes. */
    Collection<Object> drainTarget;
    FiberChannel<?> drainChannel;

    private boolean interrupted;
    private WaitQueue joiners;

    /** A normal (non-daemon) fiber. */
    public Fiber(String name, FiberGroup group, FiberFrame<?> entryFrame) {
        this(name, group, entryFrame, false);
    }

    /**
     * A fiber that will run {@code entryFrame}. A daemon fiber does not keep its group alive:
     * when the group shuts down it is dropped wherever it is.
     */
    public Fiber(String name, FiberGroup group, FiberFrame<?> entryFrame, boolean daemon) {
        if (name == null || group == null || entryFrame == null) {
            throw new IllegalArgumentException("a fiber needs a name, a group and an entry frame");
        }
        this.name = name;
        this.group = group;
        this.entryFrame = entryFrame;
        this.daemon = daemon;
    }

    public String getName() {
        return name;
    }

    public FiberGroup getGroup() {
        return group;
    }

    public boolean isDaemon() {
        return daemon;
    }

    /** Starts the fiber in its group. Dispatcher thread only; from other threads use {@link FiberGroup#fireFiber}. */
    public void start() {
        group.checkThread("Fiber.start");
        if (state != STATE_NEW) {
            throw new FiberException("fiber '" + name + "' was already started");
        }
        group.startFiber(this);
    }

    /** True once the entry frame has left the stack (returned, failed, or the fiber was dropped). */
    public boolean isFinished() {
        group.checkThread("Fiber.isFinished");
        return state == STATE_FINISHED;
    }

    public boolean isStarted() {
        group.checkThread("Fiber.isStarted");
        return state != STATE_NEW;
    }

    /**
     * Wakes the fiber with a {@link FiberInterruptedException} if it is waiting (on a future,
     * condition, channel, sleep or join); otherwise its next wait fails at once. Yield and
     * {@link #resume} are not waits. Dispatcher thread only.
     */
    public void interrupt() {
        group.checkThread("Fiber.interrupt");
        if (state == STATE_FINISHED) {
            return;
        }
        if (state == STATE_WAITING) {
            wake(null, new FiberInterruptedException("fiber '" + name + "' was interrupted while it waited on "
                    + describeWait()));
        } else {
            interrupted = true;
        }
    }

    /** Whether an interrupt is pending (it is consumed by the next wait). */
    public boolean isInterrupted() {
        group.checkThread("Fiber.isInterrupted");
        return interrupted;
    }

    /** Suspends the running fiber until this one finishes; resumes with null. */
    public FrameCallResult join(FrameCall<Void> resumePoint) {
        return join0(-1, resumePoint);
    }

    /**
     * Suspends the running fiber until this one finishes or the timeout passes; resumes with TRUE
     * when it finished, FALSE on timeout.
     */
    public FrameCallResult join(long timeoutMillis, FrameCall<Boolean> resumePoint) {
        checkTimeout(timeoutMillis);
        return join0(timeoutMillis, resumePoint);
    }

    private FrameCallResult join0(long timeoutMillis, FrameCall<?> resumePoint) {
        Fiber current = current(group, "Fiber.join");
        if (current == this) {
            throw new FiberException("fiber '" + name + "' tried to join itself; it would wait forever");
        }
        current.beginCall(ACTION_WAIT, "join", resumePoint);
        if (state == STATE_FINISHED) {
            return current.resumeNow(timeoutMillis >= 0 ? Boolean.TRUE : null);
        }
        if (timeoutMillis == 0) {
            return current.resumeNow(Boolean.FALSE);
        }
        if (current.consumeInterrupt(this)) {
            return FrameCallResult.SUSPEND;
        }
        if (joiners == null) {
            joiners = new WaitQueue();
        }
        current.waitOn(this, WAIT_JOIN, joiners, timeoutMillis);
        return FrameCallResult.SUSPEND;
    }

    // ---------------------------------------------------------------- static calls for frame steps

    /** The fiber running on this thread, or null outside a fiber step. */
    public static Fiber currentFiber() {
        Thread t = Thread.currentThread();
        return t instanceof DispatcherThread ? ((DispatcherThread) t).dispatcher.currentFiber : null;
    }

    /**
     * Calls {@code subFrame} on the running fiber; when it returns, {@code resumePoint} runs with
     * its result (or the caller's {@code handle} with its error).
     */
    public static <O> FrameCallResult call(FiberFrame<O> subFrame, FrameCall<O> resumePoint) {
        Fiber f = runningFiber("Fiber.call");
        if (subFrame == null) {
            throw new IllegalArgumentException("Fiber.call needs a frame to call");
        }
        if (subFrame.fiber != null) {
            throw new FiberException("frame " + subFrame + " is already on the stack of fiber '"
                    + subFrame.fiber.getName() + "'; a frame object runs on one stack at a time (create a new one)");
        }
        f.beginCall(ACTION_CALL, "call", resumePoint);
        subFrame.enter(f, f.top);
        f.top = subFrame;
        return FrameCallResult.SUSPEND;
    }

    /** Continues at {@code resumePoint} with {@code input} in the same run, without suspending. */
    public static <I> FrameCallResult resume(I input, FrameCall<I> resumePoint) {
        Fiber f = runningFiber("Fiber.resume");
        f.beginCall(ACTION_RESUME, "resume", resumePoint);
        f.resumeInput = input;
        return FrameCallResult.SUSPEND;
    }

    /** Ends the current frame; its result is whatever {@link FiberFrame#setResult} set (null by default). */
    public static FrameCallResult frameReturn() {
        Fiber f = runningFiber("Fiber.frameReturn");
        f.beginAction(ACTION_RETURN, "frameReturn");
        return FrameCallResult.RETURN;
    }

    /** Ends the current frame with {@code result}. */
    @SuppressWarnings("unchecked")
    public static <O> FrameCallResult frameReturn(O result) {
        Fiber f = runningFiber("Fiber.frameReturn");
        f.beginAction(ACTION_RETURN, "frameReturn");
        ((FiberFrame<Object>) f.top).result = result;
        return FrameCallResult.RETURN;
    }

    /** Lets the other ready fibers of the group run, then continues at {@code resumePoint}. */
    public static FrameCallResult yield(FrameCall<Void> resumePoint) {
        Fiber f = runningFiber("Fiber.yield");
        f.beginCall(ACTION_YIELD, "yield", resumePoint);
        return FrameCallResult.SUSPEND;
    }

    /**
     * Suspends the running fiber for {@code millis} (measured on the dispatcher's clock); 0 is a
     * yield. Interruptible.
     */
    public static FrameCallResult sleep(long millis, FrameCall<Void> resumePoint) {
        checkTimeout(millis);
        Fiber f = runningFiber("Fiber.sleep");
        if (millis == 0) {
            f.beginCall(ACTION_YIELD, "sleep", resumePoint);
            return FrameCallResult.SUSPEND;
        }
        f.beginCall(ACTION_WAIT, "sleep", resumePoint);
        if (f.consumeInterrupt(SLEEP_SOURCE)) {
            return FrameCallResult.SUSPEND;
        }
        f.waitOn(SLEEP_SOURCE, WAIT_SLEEP, null, millis);
        f.timedWait = false;
        return FrameCallResult.SUSPEND;
    }

    // ---------------------------------------------------------------- internals

    static void checkTimeout(long timeoutMillis) {
        if (timeoutMillis < 0) {
            throw new IllegalArgumentException("a timeout cannot be negative: " + timeoutMillis + " ms");
        }
    }

    /** The running fiber of the calling dispatcher thread, or a FiberException explaining why there is none. */
    static Fiber runningFiber(String op) {
        Thread t = Thread.currentThread();
        if (t instanceof DispatcherThread) {
            Fiber f = ((DispatcherThread) t).dispatcher.currentFiber;
            if (f != null) {
                return f;
            }
            throw new FiberException(op + " was called on dispatcher thread '" + t.getName()
                    + "' outside a fiber step (in a callback or task?); suspending calls belong in frame steps");
        }
        throw new FiberException(op + " was called on thread '" + t.getName()
                + "', which is not a fiber dispatcher; suspending calls belong in frame steps");
    }

    /**
     * The running fiber, which must be on the dispatcher of {@code owner} (the group of the
     * primitive being used). A call from another thread stops {@code owner}.
     */
    static Fiber current(FiberGroup owner, String op) {
        Dispatcher d = owner.dispatcher;
        if (Thread.currentThread() != d.thread) {
            throw owner.wrongThread(op);
        }
        Fiber f = d.currentFiber;
        if (f == null) {
            throw new FiberException(op + " on group '" + owner.getName()
                    + "' was called outside a fiber step (in a callback or task?); suspending calls belong in frame steps");
        }
        return f;
    }

    /**
     * Records the one suspending call of this step and where the frame resumes. Argument errors
     * are thrown before anything is recorded, so they reach the frame's handle like any error.
     */
    @SuppressWarnings("unchecked")
    void beginCall(byte action, String opName, FrameCall<?> resumePoint) {
        if (resumePoint == null) {
            throw new IllegalArgumentException(opName + " needs a resume point (this::nextStep)");
        }
        beginAction(action, opName);
        top.resumePoint = (FrameCall<Object>) resumePoint;
    }

    /** Records the one action of this step; a second one is a fatal misuse. */
    void beginAction(byte action, String opName) {
        if (stepAction != ACTION_NONE) {
            throw group.misuse(this, "made two suspending calls in one step (" + stepActionName + ", then "
                    + opName + "); a step must return the token of its one suspending call at once");
        }
        stepAction = action;
        stepActionName = opName;
    }

    /** Turns the current wait action into a resume-now with this value. */
    FrameCallResult resumeNow(Object input) {
        stepAction = ACTION_RESUME;
        resumeInput = input;
        return FrameCallResult.SUSPEND;
    }

    FrameCallResult failNow(Throwable error) {
        stepAction = ACTION_RESUME;
        resumeError = error;
        return FrameCallResult.SUSPEND;
    }

    /** If an interrupt is pending, consumes it and makes the step resume with the error. */
    boolean consumeInterrupt(Object source) {
        if (!interrupted) {
            return false;
        }
        interrupted = false;
        failNow(new FiberInterruptedException("fiber '" + name + "' was interrupted before it waited on "
                + describeSource(source)));
        return true;
    }

    /** Parks this (running) fiber on a primitive. */
    void waitOn(Object source, byte kind, WaitQueue queue, long timeoutMillis) {
        state = STATE_WAITING;
        waitSource = source;
        waitKind = kind;
        timedWait = timeoutMillis >= 0;
        waitTimeoutMillis = timeoutMillis;
        Dispatcher d = group.dispatcher;
        waitSinceNanos = d.timestamp.nanoTime();
        if (queue != null) {
            if (waitNode == null) {
                waitNode = new WaitNode(this);
            }
            queue.add(waitNode);
        }
        if (timeoutMillis > 0) {
            d.addTimer(this, timeoutMillis);
        }
    }

    /** Adds the fiber, already waiting, to a second queue (awaiting two conditions). */
    void alsoWaitOn(WaitQueue queue) {
        if (secondWaitNode == null) {
            secondWaitNode = new WaitNode(this);
        }
        queue.add(secondWaitNode);
    }

    /** Ends the current wait and makes the fiber ready with the given outcome. */
    void wake(Object input, Throwable error) {
        if (state != STATE_WAITING) {
            io.poyang.log.ImpossibleStates.report("fiber '{}' woken while in state {}", name, state);
            return;
        }
        clearWait();
        resumeInput = input;
        resumeError = error;
        group.makeReady(this);
    }

    void clearWait() {
        if (waitNode != null && waitNode.queue != null) {
            waitNode.queue.remove(waitNode);
        }
        if (secondWaitNode != null && secondWaitNode.queue != null) {
            secondWaitNode.queue.remove(secondWaitNode);
        }
        if (timerIndex >= 0) {
            group.dispatcher.removeTimer(this);
        }
        waitSource = null;
        waitKind = WAIT_NONE;
        drainTarget = null;
        drainChannel = null;
    }

    /** The timer of the current wait fired. */
    void onTimeout() {
        switch (waitKind) {
            case WAIT_FUTURE:
                wake(null, new FiberTimeoutException("fiber '" + name + "' waited " + waitTimeoutMillis
                        + " ms on " + describeWait() + " and it did not complete"));
                break;
            case WAIT_CONDITION:
            case WAIT_JOIN:
                wake(Boolean.FALSE, null);
                break;
            case WAIT_TAKE:
            case WAIT_TAKE_ALL:
            case WAIT_SLEEP:
                wake(null, null);
                break;
            default:
                io.poyang.log.ImpossibleStates.report("timer fired for fiber '{}' that waits on nothing", name);
        }
    }

    /** The fiber ended; wakes its joiners. */
    void finished() {
        state = STATE_FINISHED;
        top = null;
        resumeInput = null;
        resumeError = null;
        WaitQueue q = joiners;
        if (q != null) {
            Fiber j;
            while ((j = q.peekFiber()) != null) {
                j.wake(j.timedWait ? Boolean.TRUE : null, null);
            }
        }
    }

    /** Drops the fiber without running anything more (daemons at shutdown, fatal stops). */
    void drop() {
        if (state == STATE_WAITING) {
            clearWait();
        }
        for (FiberFrame<?> f = top; f != null; ) {
            FiberFrame<?> next = f.caller;
            f.leave();
            f = next;
        }
        finished();
    }

    String describeWait() {
        return describeSource(waitSource);
    }

    private static String describeSource(Object source) {
        if (source instanceof Fiber) {
            return "join of fiber '" + ((Fiber) source).name + "'";
        }
        return String.valueOf(source);
    }

    String stateName() {
        switch (state) {
            case STATE_NEW:
                return "new";
            case STATE_READY:
                return "ready";
            case STATE_RUNNING:
                return "running";
            case STATE_WAITING:
                return "waiting";
            default:
                return "finished";
        }
    }

    /** Frame names, innermost first. */
    List<String> frameNames() {
        List<String> names = new ArrayList<>();
        for (FiberFrame<?> f = top; f != null && names.size() < 64; f = f.caller) {
            names.add(String.valueOf(f));
        }
        return names;
    }

    @Override
    public String toString() {
        return "fiber '" + name + "'";
    }
}
