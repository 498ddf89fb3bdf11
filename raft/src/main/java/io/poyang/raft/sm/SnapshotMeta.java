package io.poyang.raft.sm;

import java.util.Arrays;

/**
 * What a snapshot covers: everything up to {@link #lastIndex()} (of term {@link #lastTerm()}), and
 * the group's configuration then (voters; during a membership change also the new voters and the
 * observers before it; observers).
 */
public final class SnapshotMeta {

    /** Data format: the state machine's data only (snapshots written before sessions existed). */
    public static final int FORMAT_STATE_MACHINE_ONLY = 0;
    /** Data format: raft's section (the session table), then the state machine's data. */
    public static final int FORMAT_WITH_RAFT_SECTION = 1;

    private static final int[] NONE = new int[0];

    private final long lastIndex;
    private final int lastTerm;
    private final int[] members;
    private final int[] newVoters;
    private final int[] observers;
    private final int[] oldObservers;
    private final int format;

    public SnapshotMeta(long lastIndex, int lastTerm, int[] members) {
        this(lastIndex, lastTerm, members, null, NONE, NONE, FORMAT_STATE_MACHINE_ONLY);
    }

    public SnapshotMeta(long lastIndex, int lastTerm, int[] members, int[] newVoters, int[] observers,
                        int[] oldObservers, int format) {
        this.lastIndex = lastIndex;
        this.lastTerm = lastTerm;
        this.members = members.clone();
        this.newVoters = newVoters == null ? null : newVoters.clone();
        this.observers = observers == null ? NONE : observers.clone();
        this.oldObservers = oldObservers == null ? NONE : oldObservers.clone();
        this.format = format;
    }

    /** The last log index the snapshot includes. */
    public long lastIndex() {
        return lastIndex;
    }

    public int lastTerm() {
        return lastTerm;
    }

    /** The voting members of the group as of {@link #lastIndex()} (the old ones during a membership change). */
    public int[] members() {
        return members.clone();
    }

    /** The new voting members when a membership change was prepared at {@link #lastIndex()}, else null. */
    public int[] newVoters() {
        return newVoters == null ? null : newVoters.clone();
    }

    /** The observers (non-voting members) as of {@link #lastIndex()}. */
    public int[] observers() {
        return observers.clone();
    }

    /** During a prepared membership change, the observers before it; else empty. */
    public int[] oldObservers() {
        return oldObservers.clone();
    }

    /** How the data file is laid out ({@link #FORMAT_STATE_MACHINE_ONLY} or {@link #FORMAT_WITH_RAFT_SECTION}). */
    public int format() {
        return format;
    }

    @Override
    public String toString() {
        return "snapshot(index " + lastIndex + ", term " + lastTerm + ", members " + Arrays.toString(members)
                + (newVoters != null ? " -> " + Arrays.toString(newVoters) : "")
                + (observers.length > 0 ? ", observers " + Arrays.toString(observers) : "") + ")";
    }
}
