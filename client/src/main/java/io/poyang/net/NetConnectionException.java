package io.poyang.net;

/**
 * The connection a request needed is not there: no connected peer, a connect failure, or the
 * connection closed while the request was pending (it may or may not have been processed).
 */
public class NetConnectionException extends NetException {

    public NetConnectionException(String message) {
        super(message);
    }

    public NetConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
