package io.poyang.dtkv;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

/**
 * A DtKV operation failed for a reason the state machine named: {@link #kvCode()} says which
 * ({@link KvCode#NOT_FOUND}, {@link KvCode#CAS_MISMATCH} …), the message names the key and what to do.
 * Transport failures (timeouts, flow control, a stopped client) are other {@link PoyangException}s.
 * Its {@link #code()} is {@link ErrorCode#BUSINESS}.
 */
public class KvException extends PoyangException {

    private final int kvCodeNumber;
    private final String key;
    private int failedPosition;

    public KvException(KvCode code, String key, String message) {
        this(code.number(), key, message);
    }

    /** For a code number received from a server that may be newer than this client. */
    public KvException(int kvCodeNumber, String key, String message) {
        super(ErrorCode.BUSINESS, KvCode.nameOf(kvCodeNumber) + (key == null ? "" : " [" + key + "]") + ": "
                + (message == null || message.isEmpty() ? meaningOf(kvCodeNumber) : message));
        this.kvCodeNumber = kvCodeNumber;
        this.key = key;
    }

    private static String meaningOf(int number) {
        KvCode c = KvCode.of(number);
        return c == null ? "a code this client version does not know; upgrade the client" : c.meaning();
    }

    /** The code, or null when the server sent a number this client does not know (see {@link #kvCodeNumber()}). */
    public KvCode kvCode() {
        return KvCode.of(kvCodeNumber);
    }

    public int kvCodeNumber() {
        return kvCodeNumber;
    }

    /** For a batch: the 1-based position of the key that failed (0: not a batch, or not known). */
    public int failedPosition() {
        return failedPosition;
    }

    /** Sets {@link #failedPosition()}; returns this. */
    public KvException failedPosition(int oneBasedPosition) {
        this.failedPosition = oneBasedPosition;
        return this;
    }

    /** The key the failure is about, or null. */
    public String key() {
        return key;
    }
}
