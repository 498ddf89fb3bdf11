package io.poyang.fiber;

/**
 * One frame of a fiber's virtual stack: a small object with the state of one asynchronous
 * procedure and its steps as methods.
 *
 * <p>A frame runs as a sequence of steps. The first step is {@link #execute(Object)}; every step
 * ends by returning the token of exactly one call: a suspending call that names the next step
 * ({@code return Fiber.call(sub, this::afterSub)}, {@code return future.await(this::afterX)} …) or
 * {@code return Fiber.frameReturn()}. No Java stack is kept between steps, so everything a later
 * step needs lives in the frame's fields.
 *
 * <p>Errors: when a step throws, or a call it waited on fails, the frame's {@link #handle(Throwable)}
 * runs (once per frame; it may suspend too). If {@code handle} returns normally the error is
 * handled and the frame returns its result; if it throws, the error goes on to the caller frame's
 * {@code handle}. Either way {@link #doFinally()} runs exactly once before the frame leaves the
 * stack, like a Java {@code finally}: an error thrown by {@code doFinally} (or by a step it called)
 * replaces the pending one.
 *
 * <p>A frame can be called again after it has returned (useful to avoid allocating on hot paths),
 * but never while it is on a stack.
 *
 * @param <O> the result type, handed to the caller's resume point
 */
public abstract class FiberFrame<O> {

    static final byte STAGE_BODY = 0;
    static final byte STAGE_HANDLE = 1;
    static final byte STAGE_FINALLY = 2;

    /** Whether this frame's class overrides doFinally; saves a step per frame when it does not. */
    private static final ClassValue<Boolean> OVERRIDES_FINALLY = new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            for (Class<?> c = type; c != FiberFrame.class; c = c.getSuperclass()) {
                try {
                    c.getDeclaredMethod("doFinally");
                    return Boolean.TRUE;
                } catch (NoSuchMethodException e) {
                    // keep looking in the superclass
                }
            }
            return Boolean.FALSE;
        }
    };

    final boolean overridesFinally = OVERRIDES_FINALLY.get(getClass());

    /** The fiber whose stack holds this frame; null when the frame is not on a stack. */
    Fiber fiber;
    /** The frame that called this one; null for the entry frame. */
    FiberFrame<?> caller;
    /** Where the next step resumes; null before the first step. */
    FrameCall<Object> resumePoint;
    byte stage;
    /** Set when the body or handle returned and doFinally is the next step. */
    boolean finallyDue;
    /** The error that leaves the frame once doFinally is done. */
    Throwable pendingError;
    O result;

    /**
     * The first step. {@code input} is always null today (a frame gets its arguments through its
     * constructor); it is there so a frame's first step has the same shape as its resume points.
     */
    public abstract FrameCallResult execute(Object input) throws Throwable;

    /**
     * Runs when a step of this frame throws or a call it waited on fails. The default rethrows, so
     * the error goes to the caller frame. Return {@code Fiber.frameReturn()} (after
     * {@link #setResult}) to swallow the error, or make a suspending call to recover
     * asynchronously. Runs at most once per frame: an error in a step resumed from here goes to the
     * caller.
     */
    protected FrameCallResult handle(Throwable ex) throws Throwable {
        throw ex;
    }

    /**
     * Runs exactly once, after the body (and {@code handle}, if it ran) ended, whether the frame
     * returned or failed. May suspend; end with {@code Fiber.frameReturn()}. It is not run for
     * fibers that are dropped (daemon fibers at group shutdown, every fiber of a group stopped by
     * a misuse).
     */
    protected FrameCallResult doFinally() {
        return Fiber.frameReturn();
    }

    /** Sets the value handed to the caller's resume point when this frame returns. */
    protected final void setResult(O result) {
        this.result = result;
    }

    /** The fiber running this frame; null when the frame is not on a stack. */
    protected final Fiber getFiber() {
        return fiber;
    }

    /** The group of the fiber running this frame; null when the frame is not on a stack. */
    protected final FiberGroup getGroup() {
        Fiber f = fiber;
        return f == null ? null : f.group;
    }

    /** Puts this frame on top of the fiber's stack. */
    final void enter(Fiber f, FiberFrame<?> callerFrame) {
        if (fiber != null) {
            throw new FiberException("frame " + this + " is already on the stack of fiber '"
                    + fiber.getName() + "'; a frame object runs on one stack at a time (create a new one)");
        }
        fiber = f;
        caller = callerFrame;
        resumePoint = null;
        stage = STAGE_BODY;
        finallyDue = false;
        pendingError = null;
        result = null;
    }

    /** Takes this frame off its stack so it can be used again. */
    final void leave() {
        fiber = null;
        caller = null;
        resumePoint = null;
        pendingError = null;
        result = null;
    }

    /** How the frame appears in snapshots and misuse messages; override to add state. */
    @Override
    public String toString() {
        String n = getClass().getName();
        int dot = n.lastIndexOf('.');
        return dot < 0 ? n : n.substring(dot + 1);
    }
}
