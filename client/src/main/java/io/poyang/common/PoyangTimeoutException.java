package io.poyang.common;

/** An operation did not finish before its deadline. */
public class PoyangTimeoutException extends PoyangException {

    public PoyangTimeoutException(String message) {
        super(message);
    }

    public PoyangTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
