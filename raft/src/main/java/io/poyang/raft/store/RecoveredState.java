package io.poyang.raft.store;

/**
 * What {@link LogStore#init()} found on disk: the extent of the log and raft's durable state from
 * the status file. Raft starts from here.
 */
public final class RecoveredState {

    private final long firstIndex;
    private final long lastIndex;
    private final int lastTerm;
    private final long commitIndex;
    private final int currentTerm;
    private final int votedFor;
    private final long truncatedTailBytes;

    RecoveredState(long firstIndex, long lastIndex, int lastTerm, long commitIndex, int currentTerm, int votedFor,
                   long truncatedTailBytes) {
        this.firstIndex = firstIndex;
        this.lastIndex = lastIndex;
        this.lastTerm = lastTerm;
        this.commitIndex = commitIndex;
        this.currentTerm = currentTerm;
        this.votedFor = votedFor;
        this.truncatedTailBytes = truncatedTailBytes;
    }

    /** The first index still in the log (1 for a new log; after {@link LogStore#deleteBelow} it moves up). */
    public long getFirstIndex() {
        return firstIndex;
    }

    /** The last index in the log (firstIndex - 1 when empty). */
    public long getLastIndex() {
        return lastIndex;
    }

    /** The term of the last index (0 for an empty new log). */
    public int getLastTerm() {
        return lastTerm;
    }

    /** The commit index last saved in the status file (0 if none). */
    public long getCommitIndex() {
        return commitIndex;
    }

    /** The term last saved in the status file (0 if none). */
    public int getCurrentTerm() {
        return currentTerm;
    }

    /** The vote last saved in the status file (0: none). */
    public int getVotedFor() {
        return votedFor;
    }

    /** True when recovery cut off a torn tail (items never reported persisted). */
    public boolean hadTornTail() {
        return truncatedTailBytes > 0;
    }

    @Override
    public String toString() {
        return "RecoveredState(first " + firstIndex + ", last " + lastIndex + " term " + lastTerm + ", commit "
                + commitIndex + ", currentTerm " + currentTerm + ", votedFor " + votedFor + ")";
    }
}
