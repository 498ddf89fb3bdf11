package io.poyang.raft.client;

/**
 * The messages of raft's admin commands (203-214, replication port; docs/proto/raft.proto), as
 * {@link FieldMessage} schemas shared by {@link AdminClient} and the server's processors. Field
 * numbers are listed with each schema; every other field is a varint.
 */
public final class AdminMessages {

    /** NodeStatusRequest (ADMIN_NODE_STATUS): no fields. */
    public static final FieldMessage.Schema NODE_STATUS_REQUEST = new FieldMessage.Schema("NodeStatusRequest",
            new int[0], new int[0]);
    /**
     * NodeStatus: 1 node_id, 2 group_ids (packed), 3 node_ids (packed: every node this one knows,
     * itself included), 4 node_addresses (repeated string, "host:port" in node_ids order).
     */
    public static final FieldMessage.Schema NODE_STATUS = new FieldMessage.Schema("NodeStatus", new int[]{2, 3},
            new int[0], new int[]{4});

    /** GroupStatusRequest (ADMIN_GROUP_STATUS): 1 group_id. The answer is {@link GroupStatus}. */
    public static final FieldMessage.Schema GROUP_STATUS_REQUEST = new FieldMessage.Schema("GroupStatusRequest",
            new int[0], new int[0]);

    /** TransferLeaderRequest (ADMIN_TRANSFER_LEADER): 1 group_id, 2 target_id, 3 timeout_millis. */
    public static final FieldMessage.Schema TRANSFER_LEADER_REQUEST = new FieldMessage.Schema(
            "TransferLeaderRequest", new int[0], new int[0]);
    /** TransferLeaderResponse: 1 term, 2 leader_id (the new leader). */
    public static final FieldMessage.Schema TRANSFER_LEADER_RESPONSE = new FieldMessage.Schema(
            "TransferLeaderResponse", new int[0], new int[0]);

    /**
     * ChangeMembersRequest (ADMIN_PREPARE_MEMBERS, ADMIN_COMMIT_MEMBERS, ADMIN_ABORT_MEMBERS): 1
     * group_id, 2 voters (packed), 3 observers (packed), 4 timeout_millis. Abort reads only 1 and 4.
     * The answer is a MembersConfig ({@link GroupMembers}).
     */
    public static final FieldMessage.Schema CHANGE_MEMBERS_REQUEST = new FieldMessage.Schema("ChangeMembersRequest",
            new int[]{2, 3}, new int[0]);
    /**
     * MembersConfig: 1 voters, 2 new_voters, 3 observers, 4 old_observers (all packed), 5 joint —
     * the same message a config-change log entry carries.
     */
    public static final FieldMessage.Schema MEMBERS_CONFIG = new FieldMessage.Schema("MembersConfig",
            new int[]{1, 2, 3, 4}, new int[0]);

    /** AddGroupRequest (ADMIN_ADD_GROUP): 1 group_id, 2 voters (packed), 3 observers (packed). */
    public static final FieldMessage.Schema ADD_GROUP_REQUEST = new FieldMessage.Schema("AddGroupRequest",
            new int[]{2, 3}, new int[0]);
    /** RemoveGroupRequest (ADMIN_REMOVE_GROUP): 1 group_id, 2 delete_data. */
    public static final FieldMessage.Schema REMOVE_GROUP_REQUEST = new FieldMessage.Schema("RemoveGroupRequest",
            new int[0], new int[0]);
    /** RestartGroupRequest (ADMIN_RESTART_GROUP): 1 group_id. */
    public static final FieldMessage.Schema RESTART_GROUP_REQUEST = new FieldMessage.Schema("RestartGroupRequest",
            new int[0], new int[0]);
    /** AddNodeRequest (ADMIN_ADD_NODE): 1 node_id, 2 address ("host:port" of its replication port). */
    public static final FieldMessage.Schema ADD_NODE_REQUEST = new FieldMessage.Schema("AddNodeRequest",
            new int[0], new int[]{2});
    /** RemoveNodeRequest (ADMIN_REMOVE_NODE): 1 node_id. */
    public static final FieldMessage.Schema REMOVE_NODE_REQUEST = new FieldMessage.Schema("RemoveNodeRequest",
            new int[0], new int[0]);
    /**
     * SetPreferredLeaderRequest (ADMIN_SET_PREFERRED_LEADER): 1 group_id, 2 node_id (0: no preferred
     * leader). The answer is the group's {@link GroupStatus} on the node, after the setting.
     */
    public static final FieldMessage.Schema SET_PREFERRED_LEADER_REQUEST = new FieldMessage.Schema(
            "SetPreferredLeaderRequest", new int[0], new int[0]);
    /** AdminAck: the answer of the commands that return nothing (add/remove group, add/remove node). No fields. */
    public static final FieldMessage.Schema ACK = new FieldMessage.Schema("AdminAck", new int[0], new int[0]);

    private AdminMessages() {
    }
}
