package io.poyang.raft.core;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

/**
 * A group cannot start because it cannot load a snapshot: its newest snapshot cannot be read (a
 * chunk fails its CRC, the data file is truncated, the state machine's {@code readSnapshot}
 * throws, the disk gives an I/O error), and no older snapshot can stand in for it, because there is
 * none or because the log no longer holds the entries from it up to the newest one. No snapshot
 * file is changed or deleted; the message names them and says how to rebuild the node.
 */
public class SnapshotUnreadableException extends PoyangException {

    private final Path groupDir;
    private final List<Path> unreadable;

    SnapshotUnreadableException(String message, Path groupDir, List<Path> unreadable, Throwable cause) {
        super(ErrorCode.INTERNAL, message, cause);
        this.groupDir = groupDir;
        this.unreadable = Collections.unmodifiableList(unreadable);
    }

    /** The group's directory, which an operator moves aside to rebuild the node from the other members. */
    public Path groupDir() {
        return groupDir;
    }

    /** The files of the snapshots that could not be read (data files, or meta files found damaged). */
    public List<Path> unreadable() {
        return unreadable;
    }
}
