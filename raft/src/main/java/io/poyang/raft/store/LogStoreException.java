package io.poyang.raft.store;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

/** The root of the log store's errors. Messages say what happened and what the caller or operator can do. */
public class LogStoreException extends PoyangException {

    public LogStoreException(String message) {
        super(ErrorCode.INTERNAL, message);
    }

    public LogStoreException(String message, Throwable cause) {
        super(ErrorCode.INTERNAL, message, cause);
    }

    public LogStoreException(ErrorCode code, String message, Throwable cause) {
        super(code, message, cause);
    }
}
