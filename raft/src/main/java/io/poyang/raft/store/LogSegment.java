package io.poyang.raft.store;

import java.nio.file.Path;

/**
 * One preallocated log file covering the log positions [{@link #startPos}, {@link #endPos()}).
 * Named by its start position (20 digits), so the files of a group sort in log order. State is
 * touched on the store's dispatcher thread only; the file itself is used from I/O threads.
 */
final class LogSegment {

    final long startPos;
    final long sizeBytes;
    final LogFile file;
    /** The index of the first item in this segment, or -1 while it holds none. */
    long firstIndex = -1;
    /** Reads in progress; the file is not deleted while there are any. */
    int readers;
    /** Set when the segment fell below the first index while being read; deleted when the last reader leaves. */
    boolean deleteWhenUnread;
    /** With {@link #deleteWhenUnread}: compaction freed it, so its file may be recycled (see {@link SegmentQueue#offerRecycled}). */
    boolean recycleWhenUnread;
    /** Written (and in the completed prefix) since the last fsync started. */
    boolean dirty;
    /**
     * Writes to this file issued and not yet completed, plus fsyncs covering it not yet reported
     * back. With {@link #dirty}, what closing the file must wait for. Dispatcher thread.
     */
    int ioPending;
    /** The file's path as the node's log journal records it; made and read by the journal's thread only. */
    byte[] journalPath;

    /** Whether a write or fsync of this file is under way or due: it must not be closed yet. */
    boolean ioBusy() {
        return dirty || ioPending > 0;
    }

    LogSegment(long startPos, long sizeBytes, LogFile file) {
        this.startPos = startPos;
        this.sizeBytes = sizeBytes;
        this.file = file;
    }

    long endPos() {
        return startPos + sizeBytes;
    }

    boolean contains(long pos) {
        return pos >= startPos && pos < startPos + sizeBytes;
    }

    Path path() {
        return file.path();
    }

    static String fileName(long startPos) {
        return String.format("%020d", startPos);
    }

    @Override
    public String toString() {
        return "segment " + file.path().getFileName() + " [" + startPos + ", " + endPos() + ")";
    }
}
