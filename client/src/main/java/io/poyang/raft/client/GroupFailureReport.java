package io.poyang.raft.client;

/**
 * A node's report, in its RAFT_STATUS answer, that a raft group failed there (it takes no further
 * part until the node restarts). A {@link RaftClient} keeps the latest per group, so a write that
 * ends at its deadline without ever reaching a node can still say why no leader was found.
 * Immutable.
 */
final class GroupFailureReport {
    final int nodeId;
    final String failure;

    GroupFailureReport(int nodeId, String failure) {
        this.nodeId = nodeId;
        this.failure = failure;
    }

    @Override
    public String toString() {
        return "node " + nodeId + " reports that the group failed there and needs a restart: " + failure;
    }
}
