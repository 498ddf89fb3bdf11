package io.poyang.net;

import io.poyang.common.PoyangException;

/** A failure of the network layer; subclasses say which kind. */
public class NetException extends PoyangException {

    public NetException(String message) {
        super(message);
    }

    public NetException(String message, Throwable cause) {
        super(message, cause);
    }
}
