package io.poyang.raft.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link FileIo} (over another) that knows which files it opened are not closed yet, for leak
 * checks; a hook may run before each read (tests that hold a read). Tests of other packages use it
 * too.
 */
public final class OpenFilesIo implements FileIo {

    /** Runs before a read of {@code file} through a file this opened (any thread). */
    public interface ReadHook {
        void beforeRead(Path file) throws IOException;
    }

    private final FileIo io;
    private final ReadHook beforeRead;
    private final Map<Path, AtomicInteger> open = new ConcurrentHashMap<>();

    public OpenFilesIo(FileIo io) {
        this(io, file -> { });
    }

    public OpenFilesIo(FileIo io, ReadHook beforeRead) {
        this.io = io;
        this.beforeRead = beforeRead;
    }

    /** The files opened and not closed (a file opened twice and closed once is listed). */
    public List<Path> openFiles() {
        List<Path> l = new ArrayList<>();
        open.forEach((p, n) -> {
            if (n.get() > 0) {
                l.add(p);
            }
        });
        l.sort(null);
        return l;
    }

    @Override
    public LogFile open(Path path) throws IOException {
        return counted(io.open(path));
    }

    @Override
    public LogFile openForRead(Path path) throws IOException {
        return counted(io.openForRead(path));
    }

    private LogFile counted(LogFile f) {
        open.computeIfAbsent(f.path(), p -> new AtomicInteger()).incrementAndGet();
        return new ForwardingLogFile(f) {
            private boolean closed;

            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                beforeRead.beforeRead(f.path());
                return f.read(dst, position);
            }

            @Override
            public void close() throws IOException {
                synchronized (this) {
                    if (!closed) {
                        closed = true;
                        open.get(f.path()).decrementAndGet();
                    }
                }
                f.close();
            }
        };
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        io.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        io.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        io.delete(path);
    }
}
