package io.poyang.dtkv.cluster;

import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.LogFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A raft log {@link FileIo} whose disk is "full" on demand: while it is, writes, growing a file,
 * fsyncs and renames under the chosen directory fail with ENOSPC as Linux reports it. Reads,
 * deletes and everything outside the directory pass through. Any thread.
 */
final class FullDiskIo implements FileIo {

    static final String ENOSPC = "No space left on device";

    private volatile Path fullUnder;
    final AtomicLong refused = new AtomicLong();

    void fill(Path dir) {
        fullUnder = dir.toAbsolutePath();
    }

    void free() {
        fullUnder = null;
    }

    private void check(Path file) throws IOException {
        Path under = fullUnder;
        if (under != null && file.toAbsolutePath().startsWith(under)) {
            refused.incrementAndGet();
            throw new IOException(ENOSPC + " (injected, " + file + ")");
        }
    }

    @Override
    public LogFile open(Path path) throws IOException {
        LogFile f = FileIo.DEFAULT.open(path);
        return new LogFile() {
            @Override
            public Path path() {
                return path;
            }

            @Override
            public int write(ByteBuffer src, long position) throws IOException {
                check(path);
                return f.write(src, position);
            }

            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                return f.read(dst, position);
            }

            @Override
            public void force(boolean metadata) throws IOException {
                check(path);
                f.force(metadata);
            }

            @Override
            public long size() throws IOException {
                return f.size();
            }

            @Override
            public void setLength(long length) throws IOException {
                if (length > f.size()) {
                    check(path);
                }
                f.setLength(length);
            }

            @Override
            public void close() throws IOException {
                f.close();
            }
        };
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        FileIo.DEFAULT.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        check(from);
        FileIo.DEFAULT.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        FileIo.DEFAULT.delete(path);
    }
}
