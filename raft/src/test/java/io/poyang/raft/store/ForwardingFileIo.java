package io.poyang.raft.store;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Tests: a {@link FileIo} that forwards every call to another; the files it opens for writing pass
 * through {@link #wrap}, which wrappers override to watch them (with a {@link ForwardingLogFile}).
 */
class ForwardingFileIo implements FileIo {
    protected final FileIo inner;

    ForwardingFileIo(FileIo inner) {
        this.inner = inner;
    }

    /** The file a writable open returns; the inner one by default. */
    protected LogFile wrap(LogFile f) {
        return f;
    }

    @Override
    public LogFile open(Path path) throws IOException {
        return wrap(inner.open(path));
    }

    @Override
    public LogFile openExisting(Path path) throws IOException {
        return wrap(inner.openExisting(path));
    }

    @Override
    public LogFile openForRead(Path path) throws IOException {
        return inner.openForRead(path);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        inner.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        inner.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        inner.delete(path);
    }
}
