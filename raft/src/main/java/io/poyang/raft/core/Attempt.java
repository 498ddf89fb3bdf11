package io.poyang.raft.core;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FrameCallResult;

/**
 * Runs a frame (or awaits a future) and returns its outcome — value or error — as a value instead
 * of an exception, so a long-running fiber can go on after a failed step (a disk read, a snapshot
 * transfer) without spending its frame's one {@code handle}.
 */
final class Attempt<T> extends FiberFrame<Attempt<T>> {

    private final FiberFrame<T> frame;
    private final FiberFuture<T> future;
    private final long timeoutMillis;
    T value;
    Throwable error;

    private Attempt(FiberFrame<T> frame, FiberFuture<T> future, long timeoutMillis) {
        this.frame = frame;
        this.future = future;
        this.timeoutMillis = timeoutMillis;
    }

    static <T> Attempt<T> of(FiberFrame<T> frame) {
        return new Attempt<>(frame, null, -1);
    }

    /** Awaits {@code future}, failing with a timeout after {@code timeoutMillis} (negative: no timeout). */
    static <T> Attempt<T> of(FiberFuture<T> future, long timeoutMillis) {
        return new Attempt<>(null, future, timeoutMillis);
    }

    boolean ok() {
        return error == null;
    }

    @Override
    public FrameCallResult execute(Object input) {
        if (frame != null) {
            return Fiber.call(frame, this::done);
        }
        return timeoutMillis < 0 ? future.await(this::done) : future.await(timeoutMillis, this::done);
    }

    private FrameCallResult done(T v) {
        value = v;
        return Fiber.frameReturn(this);
    }

    @Override
    protected FrameCallResult handle(Throwable ex) {
        error = ex;
        return Fiber.frameReturn(this);
    }

    @Override
    public String toString() {
        return "Attempt[" + (frame != null ? frame : future) + "]";
    }
}
