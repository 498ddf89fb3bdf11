package io.poyang.raft.client;

/**
 * An exactly-once write (one with a session id and seq) was in the log of a node that stopped
 * leading its group before the write committed there: the outcome is unknown — the new leader may
 * still commit the entry, or overwrite it — but a copy is safe, since the group applies a (session,
 * seq) at most once. Send it again with the same session id and seq to the new leader, which
 * applies it, or answers with the first copy's result if that one committed. What
 * {@code RaftGroup.submit(bizType, body, timeout, sessionId, seq)} fails with, as soon as the node
 * steps down, instead of waiting for the write's deadline (a leader cut off from its peers would
 * learn the entry's fate only when the partition heals). Over the network the same answer is
 * SYS_ERROR with detail {@link RaftCommands#SYS_ERROR_STEPPED_DOWN}.
 */
public class LeaderSteppedDownException extends RaftOutcomeUnknownException {

    private final int nodeId;

    public LeaderSteppedDownException(int groupId, int nodeId, String message) {
        super(groupId, message, null);
        this.nodeId = nodeId;
    }

    /** The node that stopped leading with the write in its log. */
    public int nodeId() {
        return nodeId;
    }
}
