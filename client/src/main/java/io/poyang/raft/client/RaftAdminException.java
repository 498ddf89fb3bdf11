package io.poyang.raft.client;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

/**
 * A raft node refused an admin command for a reason of its own ({@link #error()}); the message,
 * written by the node, names what is wrong and what to do. Nothing was changed by the refused
 * command.
 */
public class RaftAdminException extends PoyangException {

    private final AdminError error;
    private final int nodeId;

    public RaftAdminException(AdminError error, int nodeId, String message) {
        super(ErrorCode.BUSINESS, message);
        this.error = error;
        this.nodeId = nodeId;
    }

    public AdminError error() {
        return error;
    }

    /** The node that refused (0 when unknown). */
    public int nodeId() {
        return nodeId;
    }
}
