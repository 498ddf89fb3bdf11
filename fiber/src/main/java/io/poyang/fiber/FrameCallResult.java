package io.poyang.fiber;

/**
 * The token a frame step returns. It carries no data: the suspending call that produced it has
 * already recorded where the fiber goes next. A step must return the token of exactly one call,
 * at once: {@code return future.await(this::afterWrite);} or {@code return Fiber.frameReturn();}.
 */
public enum FrameCallResult {
    /** The fiber continues at the recorded resume point, now or when what it waits for happens. */
    SUSPEND,
    /** The frame is done; its result (or error) goes to the caller frame. */
    RETURN
}
