package io.poyang.common;

/** An operation did not finish before its deadline; it may or may not have taken effect. */
public class PoyangTimeoutException extends PoyangException {

    public PoyangTimeoutException(String message) {
        super(ErrorCode.TIMEOUT, message);
    }

    public PoyangTimeoutException(String message, Throwable cause) {
        super(ErrorCode.TIMEOUT, message, cause);
    }
}
