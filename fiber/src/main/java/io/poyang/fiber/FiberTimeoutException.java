package io.poyang.fiber;

import io.poyang.common.PoyangTimeoutException;

/**
 * A fiber waited for a value (a {@link FiberFuture}) longer than its timeout. Delivered to the
 * waiting frame's {@link FiberFrame#handle(Throwable)}. Waits for an event rather than a value
 * (conditions, joins, channel takes) do not throw it; they resume normally and say whether the
 * event happened.
 *
 * <p>Created on the dispatcher thread, whose stack says nothing about the waiter, so it carries no
 * stack trace; the message names the fiber and what it waited for.
 */
public class FiberTimeoutException extends PoyangTimeoutException {

    public FiberTimeoutException(String message) {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
