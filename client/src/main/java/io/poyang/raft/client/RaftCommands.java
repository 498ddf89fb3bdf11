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

    /** RaftWriteRequest → the state machine's result, service port. */
    public static final int RAFT_WRITE = 201;
    /** RaftStatusRequest → RaftStatusResponse, service and replication ports. */
    public static final int RAFT_STATUS = 202;

    private RaftCommands() {
    }
}
