package io.poyang.raft.store;

import java.nio.file.Path;

/**
 * Data the store must trust is damaged: an item at or below the commit index fails its CRC or
 * breaks the index or term chain, or the log ends before the commit index. The store refuses to
 * start (or the read fails, and the store with it) and leaves every file untouched, so an operator can copy them away,
 * restore the node from a snapshot or a peer, and keep the damaged files for analysis.
 */
public class LogCorruptedException extends LogStoreException {

    private final Path file;
    private final long fileOffset;

    public LogCorruptedException(Path file, long fileOffset, String what) {
        super(what + " in " + file + " at offset " + fileOffset + ". The store does not repair data it has reported"
                + " as persisted: stop the node, copy its data directory aside, and rebuild it from a snapshot or"
                + " from the other members of the group (remove the node's data directory and let it catch up).");
        this.file = file;
        this.fileOffset = fileOffset;
    }

    /** The damaged file. */
    public Path file() {
        return file;
    }

    /** The byte offset of the damage within {@link #file()}. */
    public long fileOffset() {
        return fileOffset;
    }
}
