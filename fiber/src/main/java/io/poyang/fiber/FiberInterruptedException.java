package io.poyang.fiber;

/**
 * A waiting fiber was woken by {@link Fiber#interrupt()}. Delivered to the waiting frame's
 * {@link FiberFrame#handle(Throwable)}; when the fiber was not waiting, the next wait it starts
 * fails with it instead.
 *
 * <p>Carries no stack trace: it is created on the dispatcher thread, whose stack says nothing
 * about the interrupted fiber; the message names the fiber and what it waited for.
 */
public class FiberInterruptedException extends FiberException {

    public FiberInterruptedException(String message) {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
