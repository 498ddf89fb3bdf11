package io.poyang.net;

import io.poyang.common.PoyangTimeoutException;

/**
 * A request got no response before its deadline. The request may or may not have been processed
 * by the remote side; retry only when the command is idempotent or deduplicated.
 */
public class NetTimeoutException extends PoyangTimeoutException {

    public NetTimeoutException(String message) {
        super(message);
    }
}
