package io.poyang.raft.store;

/**
 * A request to truncate the log at or below the commit index. Committed entries are never
 * removed; a leader asking for it has a bug (or the caller declared a wrong commit index).
 */
public class TruncateBelowCommitException extends LogStoreException {

    public TruncateBelowCommitException(long truncateIndex, long commitIndex) {
        super("refusing to truncate the log from index " + truncateIndex + ": the commit index is " + commitIndex
                + " and committed entries are never removed; only indexes above the commit index can be truncated");
    }
}
