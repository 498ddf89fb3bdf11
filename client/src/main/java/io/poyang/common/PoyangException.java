package io.poyang.common;

/**
 * The root of Poyang's unchecked exceptions. Each carries an {@link ErrorCode} that callers can
 * branch on; subclasses name the failure (timeout, flow control, a stopped component, malformed
 * input …) and messages say what happened and what the caller can do about it.
 */
public class PoyangException extends RuntimeException {

    private final ErrorCode code;

    /** An {@link ErrorCode#INTERNAL} error. */
    public PoyangException(String message) {
        this(ErrorCode.INTERNAL, message, null);
    }

    /** An {@link ErrorCode#INTERNAL} error. */
    public PoyangException(String message, Throwable cause) {
        this(ErrorCode.INTERNAL, message, cause);
    }

    public PoyangException(ErrorCode code, String message) {
        this(code, message, null);
    }

    public PoyangException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        if (code == null) {
            throw new NullPointerException("code");
        }
        this.code = code;
    }

    public final ErrorCode code() {
        return code;
    }
}
