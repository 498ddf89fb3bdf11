package io.poyang.raft.store;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The store's only way to touch the file system. Production uses {@link #DEFAULT}; tests wrap it
 * to delay or fail a chosen write, fsync, rename or directory sync, so fault handling is tested
 * through this seam rather than through timing. Every method blocks and is called on an I/O
 * executor thread, never on a dispatcher thread.
 */
public interface FileIo {

    /** Plain {@link java.nio.channels.FileChannel}s. */
    FileIo DEFAULT = new DefaultFileIo();

    /** Opens (creating if missing) a file for positional reads and writes. */
    LogFile open(Path path) throws IOException;

    /** Makes the directory's entries (created, renamed, deleted files) durable. */
    void syncDirectory(Path dir) throws IOException;

    /** Renames {@code from} to {@code to} atomically, replacing {@code to}. */
    void atomicMove(Path from, Path to) throws IOException;

    /** Deletes the file if it exists. */
    void delete(Path path) throws IOException;
}
