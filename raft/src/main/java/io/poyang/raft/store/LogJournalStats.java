package io.poyang.raft.store;

/**
 * What a node's {@link LogJournal} has done since it opened, read at one moment: for metrics, so
 * that callers see the journal's figures without holding the journal itself (whose other methods
 * write). The counts are read one after the other while the journal runs, so they are each exact
 * but not of one instant.
 */
public final class LogJournalStats {

    private final long fsyncCount;
    private final long recordCount;
    private final long checkpointCount;
    private final boolean failed;

    public LogJournalStats(long fsyncCount, long recordCount, long checkpointCount, boolean failed) {
        this.fsyncCount = fsyncCount;
        this.recordCount = recordCount;
        this.checkpointCount = checkpointCount;
        this.failed = failed;
    }

    /** The journal's figures now. */
    public static LogJournalStats of(LogJournal journal) {
        return new LogJournalStats(journal.fsyncCount(), journal.recordCount(), journal.checkpointCount(),
                journal.failure() != null);
    }

    /** fdatasyncs of the journal's files: one per round of records, and one more on going into the next file. */
    public long fsyncCount() {
        return fsyncCount;
    }

    /** Records journaled: the groups' log writes (and truncations' zeros) made durable through the journal. */
    public long recordCount() {
        return recordCount;
    }

    /** Checkpoints saved: each fsynced the groups' files written before its position in the journal. */
    public long checkpointCount() {
        return checkpointCount;
    }

    /**
     * Whether the journal failed (a failed write, fsync or checkpoint, or a crash of its threads):
     * every group's log on the node fails with it until the node restarts ({@code RaftServer.ioProblem()}
     * says why).
     */
    public boolean failed() {
        return failed;
    }
}
