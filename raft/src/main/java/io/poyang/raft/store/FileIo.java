package io.poyang.raft.store;

import java.io.IOException;
import java.nio.file.Path;

/**
 * How a group's log store and its snapshot files touch the file system: every read, write, fsync,
 * rename, directory sync and delete of them goes through here (listing a directory, creating it and
 * asking a file's size do not). Production uses {@link #DEFAULT}; tests wrap it to delay or fail a
 * chosen write, fsync, rename or directory sync, so fault handling is tested through this seam
 * rather than through timing. Every method blocks and is called on an I/O executor thread, never
 * on a dispatcher thread.
 */
public interface FileIo {

    /** Plain {@link java.nio.channels.FileChannel}s. */
    FileIo DEFAULT = new DefaultFileIo();

    /** Opens (creating if missing) a file for positional reads and writes. */
    LogFile open(Path path) throws IOException;

    /**
     * Opens an existing file for reading only: snapshot data and meta files. {@link #DEFAULT} fails
     * with {@link java.nio.file.NoSuchFileException} when it is missing; this default, for wrappers
     * that do not override it, opens it with {@link #open} (which would create it), so the wrapper
     * sees these reads as its own files' reads.
     */
    default LogFile openForRead(Path path) throws IOException {
        return open(path);
    }

    /**
     * Opens a file that must already exist for positional reads and writes, without creating it:
     * the log journal's replay and checkpoints, which must not bring back a file the log deleted.
     * Fails with {@link java.nio.file.NoSuchFileException} when it is missing.
     */
    default LogFile openExisting(Path path) throws IOException {
        if (!java.nio.file.Files.exists(path)) {
            throw new java.nio.file.NoSuchFileException(path.toString());
        }
        return open(path);
    }

    /**
     * Opens an existing file like {@link #openExisting}, for a writer that only ever writes whole
     * blocks of {@code alignment} bytes at multiples of it, from buffers whose address is a multiple
     * of it (the log journal). {@link #DEFAULT} then opens it so that writes bypass the page cache
     * (O_DIRECT), when the file system takes that and its block size divides {@code alignment}, and
     * else like {@link #openExisting}; {@link LogFile#bypassesPageCache()} tells which. This default,
     * for wrappers, opens it with {@link #openExisting}.
     */
    default LogFile openExistingForAlignedWrites(Path path, int alignment) throws IOException {
        return openExisting(path);
    }

    /** Makes the directory's entries (created, renamed, deleted files) durable. */
    void syncDirectory(Path dir) throws IOException;

    /** Renames {@code from} to {@code to} atomically, replacing {@code to}. */
    void atomicMove(Path from, Path to) throws IOException;

    /** Deletes the file if it exists. */
    void delete(Path path) throws IOException;
}
