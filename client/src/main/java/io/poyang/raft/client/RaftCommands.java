package io.poyang.raft.client;

/**
 * Command numbers of raft (docs/proto/raft.proto): 100-199 replication between servers, 200-299
 * client and admin commands. The replication commands are listed here so one table holds every
 * raft number; clients only send the 2xx ones.
 */
public final class RaftCommands {

    /** VoteRequest → VoteResponse (pre-vote and vote), replication port. */
    public static final int VOTE = 101;
    /** AppendEntriesRequest → AppendEntriesResponse, replication port. */
    public static final int APPEND_ENTRIES = 102;
    /** InstallSnapshotRequest → InstallSnapshotResponse, replication port. */
    public static final int INSTALL_SNAPSHOT = 103;
    /** ReadIndexRequest → ReadIndexResponse: a follower asks the leader for a confirmed read index, replication port. */
    public static final int READ_INDEX = 104;
    /** TimeoutNowRequest → TimeoutNowResponse: a leader hands over to the target (leader transfer), replication port. */
    public static final int TIMEOUT_NOW = 105;
    /**
     * AppendEntriesBatch → AppendEntriesBatchAnswer: the AppendEntries that one dispatcher round of
     * a node sends to another node, for several groups, in one frame; replication port. A node that
     * answers COMMAND_NOT_FOUND (an older version) gets its appends one by one.
     */
    public static final int APPEND_ENTRIES_BATCH = 106;

    /** RaftWriteRequest → the state machine's result, service port. */
    public static final int RAFT_WRITE = 201;
    /** RaftStatusRequest → RaftStatusResponse, service and replication ports. */
    public static final int RAFT_STATUS = 202;

    // admin commands (AdminClient), replication port; messages in AdminMessages
    /** NodeStatusRequest → NodeStatus: the groups a node hosts and the nodes it knows. */
    public static final int ADMIN_NODE_STATUS = 203;
    /** GroupStatusRequest → GroupStatus: where a group stands on the node, per-follower lag on the leader. */
    public static final int ADMIN_GROUP_STATUS = 204;
    /** TransferLeaderRequest → TransferLeaderResponse (leader only). */
    public static final int ADMIN_TRANSFER_LEADER = 205;
    /** ChangeMembersRequest → MembersConfig: prepare a membership change (leader only). */
    public static final int ADMIN_PREPARE_MEMBERS = 206;
    /** ChangeMembersRequest → MembersConfig: commit the prepared change (leader only). */
    public static final int ADMIN_COMMIT_MEMBERS = 207;
    /** ChangeMembersRequest → MembersConfig: abort the prepared change (leader only). */
    public static final int ADMIN_ABORT_MEMBERS = 208;
    /** AddGroupRequest → AdminAck: host a group on the node. */
    public static final int ADMIN_ADD_GROUP = 209;
    /** RemoveGroupRequest → AdminAck: stop hosting a group on the node (optionally deleting its data). */
    public static final int ADMIN_REMOVE_GROUP = 210;
    /** AddNodeRequest → AdminAck: tell the node another node's replication address. */
    public static final int ADMIN_ADD_NODE = 211;
    /** RemoveNodeRequest → AdminAck: make the node forget another node. */
    public static final int ADMIN_REMOVE_NODE = 212;
    /** RestartGroupRequest → AdminAck: stop a group on the node and start it again from its files. */
    public static final int ADMIN_RESTART_GROUP = 213;
    /**
     * SetPreferredLeaderRequest → GroupStatus: set the node's preferred leader of a group (0: none);
     * answered with the group's status on the node after it.
     */
    public static final int ADMIN_SET_PREFERRED_LEADER = 214;

    /**
     * The largest body a raft write may carry: 8 MiB less 64 KiB. An entry travels to the followers
     * in one AppendEntries frame, whose limit is the nodes' {@code NioConfig.maxFrameBytes} (8 MiB);
     * the 64 KiB leave room for the request's and the entry's own headers. A larger body could be
     * written to the leader's log but never sent, so the leader refuses it when it is proposed
     * (FLOW_CONTROL, like a body larger than a log segment) and nothing else of the group waits on it.
     */
    public static final int MAX_WRITE_BODY_BYTES = 8 * 1024 * 1024 - 64 * 1024;

    /**
     * The detail (biz_code) of a SYS_ERROR answer to an exactly-once write whose session no longer
     * remembers that seq (it moved more than sessionWindow writes past it): resending cannot tell
     * whether it was applied.
     */
    public static final int SYS_ERROR_SESSION_WINDOW_PASSED = 1;

    /**
     * The detail (biz_code) of a SYS_ERROR answer from a leader that stepped down (it lost its
     * majority, saw a higher term, or handed over) while the write was in its log above the commit
     * index it knew: the outcome is unknown — the entry may still be committed by the new leader, or
     * be overwritten. Only writes that are applied at most once get it — exactly-once writes with a
     * raft session, and writes the state machine deduplicates itself (DtKV writes with a seq, see
     * {@code RaftGroup.acceptDeduplicatedWrite}): the client sends such a write again, same session
     * and seq, to the new leader (RaftClient does for its exactly-once writes, KvClient for its
     * writes). Other writes stay in the old leader's list until their index is applied there or their
     * deadline passes.
     */
    public static final int SYS_ERROR_STEPPED_DOWN = 2;

    /**
     * The detail (packet field 5) of a BAD_REQUEST answer from a node that does not host the group the
     * request names: nothing was applied there. A client that took that node for the leader — the group
     * was moved off it by a membership change and removed — looks for the leader again; if no other node
     * leads the group, the group id is wrong and the client reports the answer.
     */
    public static final int DETAIL_NO_SUCH_GROUP = 1;

    private RaftCommands() {
    }
}
