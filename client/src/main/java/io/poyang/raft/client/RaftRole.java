package io.poyang.raft.client;

/** The role of a node in a raft group, as RaftStatusResponse reports it (enum RaftRole in raft.proto). */
public enum RaftRole {
    FOLLOWER(1),
    CANDIDATE(2),
    LEADER(3),
    /** The group is not running on the node (starting, stopped, or not hosted there). */
    NONE(4);

    private final int code;

    RaftRole(int code) {
        this.code = code;
    }

    /** The number on the wire. */
    public int code() {
        return code;
    }

    /** The role with this wire number; NONE for numbers this version does not know. */
    public static RaftRole of(int code) {
        switch (code) {
            case 1:
                return FOLLOWER;
            case 2:
                return CANDIDATE;
            case 3:
                return LEADER;
            default:
                return NONE;
        }
    }
}
