package io.poyang.raft.core;

import java.util.Arrays;

/**
 * A group's configuration: who votes. Immutable; a membership change (joint consensus, a later
 * issue) replaces the object rather than editing it, so code holding one sees a consistent set.
 * Observers (members that replicate without voting) will join the voters here.
 */
public final class Members {

    private final int[] voters;

    public Members(int... voters) {
        if (voters.length == 0) {
            throw new IllegalArgumentException("a raft group needs at least one voting member");
        }
        int[] v = voters.clone();
        Arrays.sort(v);
        for (int i = 0; i < v.length; i++) {
            if (v[i] <= 0) {
                throw new IllegalArgumentException("node ids are positive: " + Arrays.toString(voters));
            }
            if (i > 0 && v[i] == v[i - 1]) {
                throw new IllegalArgumentException("node " + v[i] + " is listed twice: " + Arrays.toString(voters));
            }
        }
        this.voters = v;
    }

    /** The voting members, sorted. */
    public int[] voters() {
        return voters.clone();
    }

    public int voterCount() {
        return voters.length;
    }

    int voterAt(int i) {
        return voters[i];
    }

    /** Votes (or persisted copies) needed for a decision: a majority of the voters. */
    public int quorum() {
        return voters.length / 2 + 1;
    }

    public boolean isVoter(int nodeId) {
        return Arrays.binarySearch(voters, nodeId) >= 0;
    }

    /** The position of {@code nodeId} among the voters, or -1. */
    int voterIndex(int nodeId) {
        int i = Arrays.binarySearch(voters, nodeId);
        return i < 0 ? -1 : i;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Members && Arrays.equals(voters, ((Members) o).voters);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(voters);
    }

    @Override
    public String toString() {
        return Arrays.toString(voters);
    }
}
