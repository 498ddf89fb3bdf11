package io.poyang.raft.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Tests: a {@link LogFile} that forwards every call to another; wrappers override what they watch
 * (here and in the server tests' {@code FullDiskFileIo}).
 */
public class ForwardingLogFile implements LogFile {
    protected final LogFile f;

    public ForwardingLogFile(LogFile f) {
        this.f = f;
    }

    @Override
    public Path path() {
        return f.path();
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        return f.write(src, position);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return f.read(dst, position);
    }

    @Override
    public void force(boolean metadata) throws IOException {
        f.force(metadata);
    }

    @Override
    public long size() throws IOException {
        return f.size();
    }

    @Override
    public void setLength(long length) throws IOException {
        f.setLength(length);
    }

    @Override
    public void close() throws IOException {
        f.close();
    }
}
