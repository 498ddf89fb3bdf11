package io.poyang.raft.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A {@link FileIo} whose operations pass through a {@link Hook} first (delay or fail them). Public
 * for the cluster tests of other packages (snapshot files on a full disk).
 */
public final class FaultyFileIo implements FileIo {

    /** Called on the I/O thread before each operation; may block or throw. */
    public interface Hook {
        default void beforeWrite(Path file, long position, int length) throws IOException {
        }

        default void beforeRead(Path file, long position) throws IOException {
        }

        default void beforeForce(Path file, boolean metadata) throws IOException {
        }

        /** After a write returned ({@code error} null) or threw {@code error} (a closed file, say). */
        default void afterWrite(Path file, long position, IOException error) {
        }

        /** After an fsync returned ({@code error} null) or threw {@code error}. */
        default void afterForce(Path file, IOException error) {
        }

        default void beforeMove(Path from, Path to) throws IOException {
        }

        /** Before a file's length is set (a new segment or index file is sized). */
        default void beforeSetLength(Path file, long length) throws IOException {
        }

        default void beforeDelete(Path file) throws IOException {
        }

        default void beforeSyncDirectory(Path dir) throws IOException {
        }
    }

    public volatile Hook hook = new Hook() {
    };

    /**
     * A hook that holds the first read of {@code file}: it counts {@code entered} down, then waits
     * for {@code release}.
     */
    static Hook holdingFirstRead(Path file, java.util.concurrent.CountDownLatch entered,
                                 java.util.concurrent.CountDownLatch release) {
        java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean(true);
        return new Hook() {
            @Override
            public void beforeRead(Path f, long position) throws IOException {
                if (f.equals(file) && hold.compareAndSet(true, false)) {
                    entered.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                }
            }
        };
    }

    @Override
    public LogFile open(Path path) throws IOException {
        return withHook(path, FileIo.DEFAULT.open(path));
    }

    @Override
    public LogFile openForRead(Path path) throws IOException {
        return withHook(path, FileIo.DEFAULT.openForRead(path));
    }

    private LogFile withHook(Path path, LogFile f) {
        return new LogFile() {
            @Override
            public Path path() {
                return path;
            }

            @Override
            public int write(ByteBuffer src, long position) throws IOException {
                Hook h = hook;
                h.beforeWrite(path, position, src.remaining());
                int n;
                try {
                    n = f.write(src, position);
                } catch (IOException e) {
                    h.afterWrite(path, position, e);
                    throw e;
                }
                h.afterWrite(path, position, null);
                return n;
            }

            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                hook.beforeRead(path, position);
                return f.read(dst, position);
            }

            @Override
            public void force(boolean metadata) throws IOException {
                Hook h = hook;
                h.beforeForce(path, metadata);
                try {
                    f.force(metadata);
                } catch (IOException e) {
                    h.afterForce(path, e);
                    throw e;
                }
                h.afterForce(path, null);
            }

            @Override
            public long size() throws IOException {
                return f.size();
            }

            @Override
            public void setLength(long length) throws IOException {
                hook.beforeSetLength(path, length);
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
        hook.beforeSyncDirectory(dir);
        FileIo.DEFAULT.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        hook.beforeMove(from, to);
        FileIo.DEFAULT.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        hook.beforeDelete(path);
        FileIo.DEFAULT.delete(path);
    }
}
