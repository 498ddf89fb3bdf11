package io.poyang.raft.store;

import java.io.IOException;

/**
 * The node's log journal has failed (a failed write, fsync or checkpoint, or a crash of one of its
 * threads) and refuses every record from then on: a failed journal never comes back, so a write
 * refused with this is not retried (its store fails at once), unlike a write whose own segment
 * write failed. Only a restart of the node, once the disk is fixed, helps.
 */
public final class LogJournalFailedException extends IOException {

    public LogJournalFailedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The journal's failure in {@code error} or its causes, or null when it is another failure. */
    static LogJournalFailedException in(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof LogJournalFailedException) {
                return (LogJournalFailedException) t;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
