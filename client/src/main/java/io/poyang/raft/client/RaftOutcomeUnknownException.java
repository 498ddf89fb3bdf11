package io.poyang.raft.client;

import io.poyang.common.PoyangTimeoutException;

/**
 * A write was sent but no answer came before the caller's deadline (or the connection was lost,
 * or the server failed with the write in its log): it may have been applied or not, and it may
 * still be applied later. Without a dedup id the client cannot tell and does not retry it; read
 * the state to find out, or make the write idempotent. {@link AdminClient} fails a command that is
 * not idempotent (restarting a group) with it when the connection was lost after the command was sent.
 */
public class RaftOutcomeUnknownException extends PoyangTimeoutException {

    private final int groupId;

    public RaftOutcomeUnknownException(int groupId, String message, Throwable cause) {
        super(message, cause);
        this.groupId = groupId;
    }

    public int groupId() {
        return groupId;
    }
}
