package io.poyang.raft.store;

import io.poyang.fiber.FiberFuture;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Where each index's item lives: 8 bytes (its log position) per index, in files of
 * {@code indexEntriesPerFile} entries named by their first index. Positions of recent items are
 * kept in memory ({@link PositionRing}) and written to the files lazily, in batches of
 * {@code indexFlushEntries}, each batch followed by one fsync of the file, so the index adds no
 * fsync per append. The files are only trusted up to the index recorded in the status file;
 * recovery rebuilds everything after it from the log.
 *
 * <p>State is touched on the dispatcher thread; the file handles (opened lazily) are shared with
 * I/O threads.
 */
final class IndexFiles {

    private static final PoyangLog log = PoyangLogs.get(IndexFiles.class);
    static final int ENTRY_BYTES = 8;
    /** Flushed positions kept in memory anyway, so reads of recent items need no index-file read. */
    private static final int KEEP_FLUSHED_IN_MEMORY = 4096;

    private final LogStore store;
    private final Path idxDir;
    private final int entriesPerFile;
    private final int flushEntries;
    private final Map<Long, LogFile> files = new ConcurrentHashMap<>();
    final PositionRing ring = new PositionRing(1024);
    /** Every index up to this one has its position in an index file, fsynced. */
    private long flushedIndex;
    private boolean flushing;
    /** Consecutive failed flushes (ENOSPC, EIO); reset by a successful one. */
    private int flushFailures;
    /** A failed flush's retry waits out its back-off: appends do not start flushes meanwhile. */
    private boolean retryWaiting;
    /** Bumped by truncation, so a flush that was in flight does not claim truncated entries. */
    private long truncateGeneration;

    IndexFiles(LogStore store, Path idxDir, int entriesPerFile, int flushEntries) {
        this.store = store;
        this.idxDir = idxDir;
        this.entriesPerFile = entriesPerFile;
        this.flushEntries = flushEntries;
    }

    /** After recovery: indexes up to {@code flushedIndex} are in the files, the ring starts after. */
    void init(long flushedIndex) {
        this.flushedIndex = flushedIndex;
    }

    long flushedIndex() {
        return flushedIndex;
    }

    boolean isFlushing() {
        return flushing;
    }

    /** The first index of the file holding {@code index}. */
    long fileFirstIndex(long index) {
        return ((index - 1) / entriesPerFile) * entriesPerFile + 1;
    }

    /** The position of {@code index} if it is in memory, else -1 (read it with {@link #readPositionBlocking}). */
    long positionInMemory(long index) {
        return ring.contains(index) ? ring.get(index) : -1;
    }

    /** Index entries per index file (its size is this times {@link #ENTRY_BYTES}). */
    int entriesPerFile() {
        return entriesPerFile;
    }

    /** Reads the position of {@code index} from its index file. Blocking: I/O executor only. */
    long readPositionBlocking(long index) throws IOException {
        LogFile f = file(fileFirstIndex(index));
        ByteBuffer b = ByteBuffer.allocate(ENTRY_BYTES);
        long off = (index - fileFirstIndex(index)) * ENTRY_BYTES;
        if (f.readFully(b, off) != ENTRY_BYTES) {
            throw new LogCorruptedException(f.path(), off, "index file too short for index " + index);
        }
        return b.getLong(0);
    }

    private LogFile file(long firstIndex) throws IOException {
        LogFile f = files.get(firstIndex);
        if (f != null) {
            return f;
        }
        synchronized (files) {  // cold path: once per index file
            f = files.get(firstIndex);
            if (f == null) {
                Path p = idxDir.resolve(LogSegment.fileName(firstIndex));
                f = store.fileIo().open(p);
                long fullBytes = (long) entriesPerFile * ENTRY_BYTES;
                try {
                    // A new file, or one whose sizing failed before (a full disk): sized and made durable
                    // now, not grown by each flush with its length left unsynced.
                    if (f.size() < fullBytes) {
                        f.setLength(fullBytes);
                        f.force(true);
                        store.fileIo().syncDirectory(idxDir);
                    }
                } catch (IOException | RuntimeException e) {
                    try {
                        f.close();   // the flush is retried and opens it again
                    } catch (IOException closing) {
                        e.addSuppressed(closing);
                    }
                    throw e;
                }
                files.put(firstIndex, f);
            }
            return f;
        }
    }

    /** Called as items are appended: starts a batch flush once enough positions wait. Dispatcher thread. */
    void maybeFlush() {
        if (!flushing && !retryWaiting && ring.endIndex() - 1 - flushedIndex >= flushEntries) {
            flush();
        }
    }

    /** Writes every position in memory not yet flushed, then fsyncs. Returns null when there is nothing to do or a flush runs. */
    FiberFuture<Void> flush() {
        long from = flushedIndex + 1;
        long to = ring.endIndex() - 1;
        if (flushing || to < from || from < ring.firstIndex() || store.isClosed() || store.isFailed()) {
            // closed: the retry of a flush that failed in close would open a file again; failed: nothing
            // is appended any more, and the store's close waits for a flush in flight
            return null;
        }
        flushing = true;
        long generation = truncateGeneration;
        int n = (int) (to - from + 1);
        ByteBuffer entries = ByteBuffer.allocate(n * ENTRY_BYTES);
        for (long i = from; i <= to; i++) {
            entries.putLong(ring.get(i));
        }
        entries.flip();
        FiberFuture<Void> f = store.group().executeBlocking("index-flush", store.ioExecutor(), () -> {
            writeBlocking(from, to, entries);
            return null;
        });
        f.whenComplete((v, e) -> {
            flushing = false;
            store.checkIdle();
            if (e != null) {
                onFlushFailed(from, to, e);
                return;
            }
            flushFailures = 0;
            long done = to;
            if (generation != truncateGeneration) {
                done = Math.min(done, flushedIndex);  // truncated meanwhile: claim nothing new
            }
            if (done > flushedIndex) {
                flushedIndex = done;
                ring.removeBefore(Math.max(ring.firstIndex(), flushedIndex + 1 - KEEP_FLUSHED_IN_MEMORY));
                store.onIndexFlushed();
            }
            maybeFlush();
        });
        return f;
    }

    /**
     * Retrying is safe (the entries are only trusted after a later status save), but not at the
     * pace of appends: under load every append batch would start another failing flush and log it.
     * Retries wait out the store's back-off; past the write retry limit the store fails, as for a
     * failing log write: the positions pile up in memory meanwhile and nothing would bound them.
     */
    private void onFlushFailed(long from, long to, Throwable e) {
        if (store.isFailed()) {
            return;
        }
        flushFailures++;
        int limit = store.config().writeRetryLimit();
        if (flushFailures > limit) {
            store.fail(new LogStoreFailedException(store.name() + ": writing index entries " + from + ".." + to
                    + " to " + idxDir + " failed " + flushFailures + " times; giving up. Free space on the disk of "
                    + idxDir + " (or fix the I/O error: " + e + ") and restart the group or its node", e));
            return;
        }
        long delay = store.backoffMillis(flushFailures);
        log.warn("{}: writing index entries {}..{} to {} failed (attempt {} of {}); they stay in memory, retrying in {} ms:"
                + " {}", store.name(), from, to, idxDir, flushFailures, limit + 1, delay, e.toString());
        retryWaiting = true;
        store.runLater(delay, () -> {
            retryWaiting = false;
            maybeFlush();
        });
    }

    private void writeBlocking(long from, long to, ByteBuffer entries) throws IOException {
        List<LogFile> touched = new ArrayList<>(2);
        long i = from;
        while (i <= to) {
            long fileFirst = fileFirstIndex(i);
            long lastInFile = Math.min(to, fileFirst + entriesPerFile - 1);
            int bytes = (int) (lastInFile - i + 1) * ENTRY_BYTES;
            ByteBuffer part = entries.duplicate();
            part.limit(part.position() + bytes);
            LogFile f = file(fileFirst);
            f.writeFully(part, (i - fileFirst) * ENTRY_BYTES);
            entries.position(entries.position() + bytes);
            touched.add(f);
            i = lastInFile + 1;
        }
        for (LogFile f : touched) {
            f.force(false);
        }
    }

    /** The tail from {@code index} was truncated. */
    void truncateFrom(long index) {
        ring.truncateFrom(index);
        if (flushedIndex >= index) {
            flushedIndex = index - 1;
        }
        truncateGeneration++;
    }

    /** The log now starts at {@code first}: entries before it are never needed again. */
    void onFirstIndexMoved(long first) {
        if (flushedIndex < first - 1) {
            flushedIndex = first - 1;
        }
        if (ring.firstIndex() < first) {
            ring.removeBefore(Math.min(first, ring.endIndex()));
        }
    }

    /** Deletes the index files whose entries are all below {@code firstIndex}. Blocking. */
    void deleteBelowBlocking(long firstIndex) throws IOException {
        long keepFrom = fileFirstIndex(firstIndex);
        List<Path> doomed = new ArrayList<>();
        try (Stream<Path> s = Files.list(idxDir)) {
            s.forEach(p -> {
                Long first = parseName(p);
                if (first != null && first < keepFrom) {
                    doomed.add(p);
                }
            });
        }
        for (Path p : doomed) {
            LogFile f = files.remove(parseName(p));
            if (f != null) {
                f.close();
            }
            store.fileIo().delete(p);
        }
        if (!doomed.isEmpty()) {
            store.fileIo().syncDirectory(idxDir);
        }
    }

    static Long parseName(Path p) {
        String n = p.getFileName().toString();
        if (n.length() != 20) {
            return null;
        }
        for (int i = 0; i < n.length(); i++) {
            if (n.charAt(i) < '0' || n.charAt(i) > '9') {
                return null;
            }
        }
        return Long.parseLong(n);
    }

    void closeBlocking() {
        for (LogFile f : files.values()) {
            try {
                f.close();
            } catch (IOException e) {
                log.warn("closing {} failed", f.path(), e);
            }
        }
        files.clear();
    }
}
