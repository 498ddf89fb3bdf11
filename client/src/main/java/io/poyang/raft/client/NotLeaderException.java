package io.poyang.raft.client;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

/**
 * A write reached a node that is not the leader of its group, so it was not applied (and will not
 * be): it is safe to send it again to the leader. {@link #leaderId()} is the leader the node knows
 * of, or 0.
 */
public class NotLeaderException extends PoyangException {

    private final int groupId;
    private final int leaderId;

    public NotLeaderException(int groupId, int leaderId, String message) {
        super(ErrorCode.NOT_LEADER, message);
        this.groupId = groupId;
        this.leaderId = leaderId;
    }

    public int groupId() {
        return groupId;
    }

    /** The node id of the leader as the answering node knows it; 0 when it knows none. */
    public int leaderId() {
        return leaderId;
    }
}
