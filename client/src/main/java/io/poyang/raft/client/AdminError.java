package io.poyang.raft.client;

/**
 * Why a raft node refused an admin command (the biz_code of a BIZ_ERROR answer to commands
 * 203-214). Each says what to do about it; the exception's message names the nodes, groups and
 * configurations involved. Numbers are never reused.
 */
public enum AdminError {

    /** Something this version does not know (a newer server): read the message. */
    UNKNOWN(0),
    /**
     * The request itself is wrong: no voters, a node listed twice or both voter and observer, a
     * node id that is not positive, a transfer to a node that is not a voter, a preferred leader
     * that is not a voter, an address that is not host:port. Fix the arguments.
     */
    BAD_ARGUMENT(1),
    /**
     * The group's state does not allow it now: another membership change is prepared (commit or
     * abort it first), nothing is prepared to commit, the prepared change leads elsewhere, a leader
     * transfer is under way. Check the group's status, then retry or resolve the conflict.
     */
    CONFLICT(2),
    /** The node does not host the group: add the group there first, or ask a node that hosts it. */
    NO_SUCH_GROUP(3),
    /**
     * A node the command needs has no known address on the answering node (a member of a change,
     * the node to remove): add the node there first ({@code addNode}).
     */
    UNKNOWN_NODE(4),
    /**
     * The node to forget is still a member of a group hosted on the answering node: take it out of
     * the group's configuration first (prepare and commit a change without it).
     */
    NODE_IN_USE(5),
    /**
     * The server cannot do it as configured: adding a group at runtime needs a state machine
     * factory (RaftServerConfig.Builder.stateMachineFactory).
     */
    UNSUPPORTED(6),
    /**
     * The group failed on the node (a log or state machine error) and needs a restart there:
     * {@link AdminClient#restartGroup} once the cause is fixed, or a restart of the node.
     */
    GROUP_FAILED(7);

    private final int code;

    AdminError(int code) {
        this.code = code;
    }

    /** The number on the wire (biz_code). */
    public int code() {
        return code;
    }

    /** The error with this number; UNKNOWN for numbers this version does not know. */
    public static AdminError of(int code) {
        for (AdminError e : values()) {
            if (e.code == code) {
                return e;
            }
        }
        return UNKNOWN;
    }
}
