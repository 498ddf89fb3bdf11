package io.poyang.fiber;

import io.poyang.common.PoyangException;

/**
 * A fiber was used in a way the model forbids (two suspending calls in one step, a group touched
 * from a thread that is not its dispatcher, a frame started twice …) or a group was stopped because
 * of such a misuse. The message names the group, the fiber and its frames, innermost first.
 */
public class FiberException extends PoyangException {

    public FiberException(String message) {
        super(message);
    }

    public FiberException(String message, Throwable cause) {
        super(message, cause);
    }
}
