package io.poyang.common;

/**
 * The root of Poyang's unchecked exceptions. Subclasses name the failure (timeout, flow control,
 * a stopped component, a remote error …); messages say what happened and what the caller can do.
 */
public class PoyangException extends RuntimeException {

    public PoyangException(String message) {
        super(message);
    }

    public PoyangException(String message, Throwable cause) {
        super(message, cause);
    }
}
