package io.poyang.fiber;

/**
 * A resume point: the step of a frame that runs when a suspending call ends. Almost always a
 * method reference on the frame, {@code this::afterWrite}; {@code input} is the value the call
 * produced (the sub-frame's result, the future's value, the item taken …).
 */
@FunctionalInterface
public interface FrameCall<I> {
    FrameCallResult execute(I input) throws Throwable;
}
