package io.poyang.net;

import io.poyang.common.PoyangTimeoutException;

/**
 * A request got no response before its deadline. The request may or may not have been processed
 * by the remote side; retry only when the command is idempotent or deduplicated.
 */
public class NetTimeoutException extends PoyangTimeoutException {

    private final boolean neverSent;

    public NetTimeoutException(String message) {
        this(message, false);
    }

    public NetTimeoutException(String message, boolean neverSent) {
        super(message);
        this.neverSent = neverSent;
    }

    /**
     * True when the request certainly never left this process: its deadline passed while it waited
     * for a connection, or in its connection's queue before a byte of it was encoded. The remote
     * side cannot have received it, so it is not applied, as with {@link NetNotSentException}.
     */
    public boolean neverSent() {
        return neverSent;
    }
}
