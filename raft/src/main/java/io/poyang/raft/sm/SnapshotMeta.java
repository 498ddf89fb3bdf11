package io.poyang.raft.sm;

import java.util.Arrays;

/** What a snapshot covers: everything up to {@link #lastIndex()} (of term {@link #lastTerm()}), and the members then. */
public final class SnapshotMeta {

    private final long lastIndex;
    private final int lastTerm;
    private final int[] members;

    public SnapshotMeta(long lastIndex, int lastTerm, int[] members) {
        this.lastIndex = lastIndex;
        this.lastTerm = lastTerm;
        this.members = members.clone();
    }

    /** The last log index the snapshot includes. */
    public long lastIndex() {
        return lastIndex;
    }

    public int lastTerm() {
        return lastTerm;
    }

    /** The voting members of the group as of {@link #lastIndex()}. */
    public int[] members() {
        return members.clone();
    }

    @Override
    public String toString() {
        return "snapshot(index " + lastIndex + ", term " + lastTerm + ", members " + Arrays.toString(members) + ")";
    }
}
