package io.poyang.raft.store;

import java.nio.ByteBuffer;

/**
 * What the node's {@link LogJournal} writes as one record: bytes written into a group's log file
 * (a {@link WriteTask}), or zeros written over a truncated range. The journal calls
 * {@link #journaled} once the record is on disk (written and fsynced) or failed.
 */
abstract class JournalRecord {

    /** The log file the record's bytes went to. */
    abstract LogSegment target();

    /** Where in {@link #target()}'s file the bytes went (from the start of the file). */
    abstract long filePosition();

    /** The bytes written (from position 0 to the limit; not consumed), or null for zeros. */
    abstract ByteBuffer payload();

    /** How many bytes: the payload's, or the zeros'. */
    abstract int length();

    /**
     * Journal thread, just before the record is staged: puts the bytes into {@link #target()}'s file
     * when that was left to the journal's writer (a {@link WriteTask} on a node with the journal).
     * False when that write failed: the record is then not journalled, and {@link #journaled}
     * reports the write's own error. By default the bytes are there already.
     */
    boolean writeIntoTarget() {
        return true;
    }

    /** Journal thread: the record is durable ({@code error} null), or will never be. */
    abstract void journaled(Throwable error);
}
