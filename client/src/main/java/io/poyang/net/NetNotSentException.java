package io.poyang.net;

/**
 * The request never left this process: the connection closed (or was never made) while the request
 * still waited in its queue, so the server cannot have received it. Unlike other
 * {@link NetConnectionException}s, it is certainly not applied, and a caller may send it again.
 */
public class NetNotSentException extends NetConnectionException {

    public NetNotSentException(String message) {
        super(message);
    }

    public NetNotSentException(String message, Throwable cause) {
        super(message, cause);
    }
}
