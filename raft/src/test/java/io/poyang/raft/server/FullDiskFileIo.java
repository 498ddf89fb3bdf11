package io.poyang.raft.server;

import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.ForwardingLogFile;
import io.poyang.raft.store.LogFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link FileIo} shared by every node of an in-process cluster that makes the disk of the nodes
 * whose files lie under a chosen directory "full": while full, positional writes, growing a file,
 * fsyncs of written data (optional), renames and directory syncs there fail with ENOSPC, as Linux
 * reports it. Everything else passes to {@link FileIo#DEFAULT}. Any thread. Public (raft's test-jar)
 * for the tests of dtkv and the node.
 */
public final class FullDiskFileIo implements FileIo {

    public static final String ENOSPC = "No space left on device";

    /**
     * What fails while the disk is full; each kind can be chosen on its own. {@code JOURNAL_WRITE}:
     * a write into the node's log journal ({@code log-journal/}: its files and its checkpoint).
     * {@code JOURNAL_GROWTH}: only those of them that need a new block (a write past a file's end,
     * or growing a file, there): the journal's files are zero-filled when made, so its appends and
     * checkpoints write over blocks it has.
     */
    public enum Op { LOG_WRITE, INDEX_WRITE, STATUS_WRITE, SEGMENT_CREATE, FSYNC, MOVE, JOURNAL_WRITE, JOURNAL_GROWTH }

    /** The directory whose disk is full, or null: none. */
    private volatile Path fullUnder;
    private volatile java.util.EnumSet<Op> failing = java.util.EnumSet.allOf(Op.class);
    /** Operations refused with ENOSPC so far: what tests check the fault actually hit. */
    public final AtomicLong refused = new AtomicLong();

    /** From now on the disk holding {@code dir} is full for the operations {@code ops}. */
    public void fill(Path dir, Op... ops) {
        java.util.EnumSet<Op> set = ops.length == 0 ? java.util.EnumSet.allOf(Op.class)
                : java.util.EnumSet.copyOf(java.util.Arrays.asList(ops));
        failing = set;
        fullUnder = dir.toAbsolutePath();
    }

    /** Space is free again. */
    public void free() {
        fullUnder = null;
    }

    private void check(Path file, Op op) throws IOException {
        Path under = fullUnder;
        if (under != null && failing.contains(op) && file.toAbsolutePath().startsWith(under)) {
            refused.incrementAndGet();
            throw new IOException(ENOSPC + " (injected, " + op + " of " + file + ")");
        }
    }

    /** Which kind of write a write to {@code file} is (the store's layout: log/, idx/, status*; the node's log-journal/). */
    private static Op writeKind(Path file) {
        Path parent = file.getParent();
        String dir = parent == null ? "" : parent.getFileName().toString();
        if (dir.equals("log")) {
            return Op.LOG_WRITE;
        }
        if (dir.equals("idx")) {
            return Op.INDEX_WRITE;
        }
        if (dir.equals(io.poyang.raft.store.LogJournal.DIR_NAME)) {
            return Op.JOURNAL_WRITE;
        }
        return Op.STATUS_WRITE;
    }

    @Override
    public LogFile open(Path path) throws IOException {
        LogFile f = FileIo.DEFAULT.open(path);
        Op kind = writeKind(path);
        return new ForwardingLogFile(f) {
            @Override
            public int write(ByteBuffer src, long position) throws IOException {
                check(path, kind);
                if (kind == Op.JOURNAL_WRITE && position + src.remaining() > f.size()) {
                    check(path, Op.JOURNAL_GROWTH);
                }
                return f.write(src, position);
            }

            @Override
            public void force(boolean metadata) throws IOException {
                check(path, Op.FSYNC);
                f.force(metadata);
            }

            @Override
            public void setLength(long length) throws IOException {
                if (length > f.size()) {
                    // growing a file (a new segment or index file) needs a block for its last byte
                    check(path, kind == Op.LOG_WRITE ? Op.SEGMENT_CREATE : kind);
                    if (kind == Op.JOURNAL_WRITE) {
                        check(path, Op.JOURNAL_GROWTH);
                    }
                }
                f.setLength(length);
            }
        };
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        FileIo.DEFAULT.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        check(from, Op.MOVE);
        FileIo.DEFAULT.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        FileIo.DEFAULT.delete(path);
    }
}
