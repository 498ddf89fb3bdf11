package io.poyang.common;

/** The component the call went to is stopping or stopped, so it no longer takes work. */
public class StoppedException extends PoyangException {

    public StoppedException(String message) {
        super(ErrorCode.STOPPED, message);
    }

    public StoppedException(String message, Throwable cause) {
        super(ErrorCode.STOPPED, message, cause);
    }
}
