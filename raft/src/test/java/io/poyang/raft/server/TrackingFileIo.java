package io.poyang.raft.server;

import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.LogFile;
import io.poyang.raft.store.OpenFilesIo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link FileIo} over {@link FileIo#DEFAULT} that knows which of the files it opened are still
 * open (for leak checks after a group stopped or failed to start), and can hold one read under a
 * chosen directory until the test releases it (a recovery caught in the middle of its scan),
 * counting the reads there after the release, or one new file just opened (a log segment being
 * preallocated). Any thread.
 */
final class TrackingFileIo implements FileIo {

    /** The files opened and not closed; every read goes through {@link #beforeRead} first. */
    private final OpenFilesIo files = new OpenFilesIo(FileIo.DEFAULT, this::beforeRead);
    private volatile Path holdUnder;
    private volatile Path holdOpenUnder;
    private volatile Path countUnder;
    final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger readsAfterRelease = new AtomicInteger();
    /** One read or open only is held. */
    private final java.util.concurrent.atomic.AtomicBoolean holding = new java.util.concurrent.atomic.AtomicBoolean();

    /** The next read of a file under {@code dir} waits until {@link #release()}. */
    void holdNextReadUnder(Path dir) {
        holdUnder = dir.toAbsolutePath();
    }

    /**
     * The next file opened under {@code dir} (open, counted in {@link #openUnder}) waits before
     * {@link #open} returns until {@link #release()}: under a log directory, a new segment's
     * preallocation.
     */
    void holdNextOpenUnder(Path dir) {
        holdOpenUnder = dir.toAbsolutePath();
    }

    /** Lets the held read or open go on; from now on the reads under a held read's directory are counted. */
    void release() {
        holdOpenUnder = null;
        Path held = holdUnder;
        holdUnder = null;
        if (held != null && countUnder == null) {
            countUnder = held;
        }
        release.countDown();
    }

    /** Reads under the held read's directory since {@link #release()} (the held one not counted). */
    int readsAfterRelease() {
        return readsAfterRelease.get();
    }

    /** The files under {@code dir} opened and not closed yet. */
    List<Path> openUnder(Path dir) {
        Path d = dir.toAbsolutePath();
        List<Path> l = new ArrayList<>();
        for (Path p : files.openFiles()) {
            if (p.toAbsolutePath().startsWith(d)) {
                l.add(p);
            }
        }
        return l;
    }

    private void beforeRead(Path file) throws IOException {
        Path p = file.toAbsolutePath();
        Path counted = countUnder;
        if (counted != null && p.startsWith(counted)) {
            readsAfterRelease.incrementAndGet();
        }
        Path hold = holdUnder;
        if (hold != null && p.startsWith(hold) && holding.compareAndSet(false, true)) {
            waitForRelease("read of " + file);
        }
    }

    private void waitForRelease(String what) throws IOException {
        reached.countDown();
        try {
            if (!release.await(60, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the held " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Override
    public LogFile open(Path path) throws IOException {
        LogFile f = files.open(path);
        Path hold = holdOpenUnder;
        if (hold != null && path.toAbsolutePath().startsWith(hold) && holding.compareAndSet(false, true)) {
            try {
                waitForRelease("open of " + path);   // the file stays open: the caller gets it after the release
            } catch (IOException e) {
                f.close();
                throw e;
            }
        }
        return f;
    }

    @Override
    public LogFile openForRead(Path path) throws IOException {
        return files.openForRead(path);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        files.syncDirectory(dir);
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        files.atomicMove(from, to);
    }

    @Override
    public void delete(Path path) throws IOException {
        files.delete(path);
    }
}
