package io.poyang.common;

/**
 * What went wrong, as a stable number that survives the wire (the response code of a frame) and
 * logs, so callers and other languages can branch on it without parsing messages. Numbers are
 * never reused; new codes are added at the end.
 */
public enum ErrorCode {

    /** A bug or an unexpected state inside Poyang; the message and the log have the details. */
    INTERNAL(1),
    /** An operation did not finish before its deadline; it may or may not have taken effect. */
    TIMEOUT(2),
    /** A bounded queue is full; retry later, slow down, or raise the limit named in the message. */
    FLOW_CONTROL(3),
    /** The component is stopping or stopped and takes no more work. */
    STOPPED(4),
    /** Malformed or oversized protobuf input. */
    CODEC(5),
    /**
     * The operation was refused for a reason of its own domain, named by the exception's own code
     * (for DtKV, {@code KvException.kvCode()}: NOT_FOUND, CAS_MISMATCH …); not a fault of Poyang.
     */
    BUSINESS(6),
    /** A raft write went to a node that is not the group's leader; it was not applied. */
    NOT_LEADER(7);

    private static final ErrorCode[] BY_CODE;

    static {
        int max = 0;
        for (ErrorCode c : values()) {
            max = Math.max(max, c.code);
        }
        BY_CODE = new ErrorCode[max + 1];
        for (ErrorCode c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    /** The number sent on the wire. */
    public int code() {
        return code;
    }

    /** The error code with this number, or null when this version does not know it. */
    public static ErrorCode of(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
