package io.poyang.raft.store;

import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/** Settings of one group's log store. Setters return this; the defaults suit production. */
public final class LogStoreConfig {

    /**
     * Segment files compaction frees that are kept for reuse by default: a new sparse segment costs
     * a page-cache page and a delayed block allocation for every 4 KiB appended, a recycled one
     * neither. With the node's log journal, where the journal's one writer thread makes every
     * group's segment writes, four DtKV groups on three nodes did 8-13 % more puts per second with
     * it (nine pairs of runs), one group no fewer (docs/benchmarks.md, seventeenth session).
     */
    public static final int DEFAULT_RECYCLED_SEGMENTS = 4;

    private final Path dir;
    private final ExecutorService ioExecutor;
    private long segmentBytes = 64L << 20;
    private int indexEntriesPerFile = 1 << 20;
    private int indexFlushEntries = 16 * 1024;
    private int maxWriteBytes = 1 << 20;
    private boolean syncForce = true;
    private boolean zeroFillSegments = false;
    private int recycledSegments = DEFAULT_RECYCLED_SEGMENTS;
    private int writeRetryLimit = 5;
    private long writeRetryInitialBackoffMillis = 10;
    private long writeRetryMaxBackoffMillis = 1000;
    private long bufferPoolBytes = 64L << 20;
    private FileIo fileIo = FileIo.DEFAULT;
    private FsyncGate fsyncGate;
    private LogJournal journal;
    private Supplier<String> bootId = BootId::current;
    private long failedCloseIoWaitMillis = DEFAULT_FAILED_CLOSE_IO_WAIT_MILLIS;

    /**
     * How long a failed store's close waits for the file operations already running (default 10 s):
     * long enough for a slow disk to answer, short enough that a hung one does not hang the stop of
     * its group. The node waits longer for a stopped group's files to be released (30 s), so a
     * restart still sees them end.
     */
    static final long DEFAULT_FAILED_CLOSE_IO_WAIT_MILLIS = 10_000;

    /**
     * @param dir        the group's directory ({@code log/}, {@code idx/}, {@code snapshot/} and
     *                   {@code status} live in it); created when missing
     * @param ioExecutor where the blocking file I/O runs. Needs at least two threads so writes go on
     *                   while an fsync blocks (see {@link #newIoExecutor}); may be shared by groups
     */
    public LogStoreConfig(Path dir, ExecutorService ioExecutor) {
        if (dir == null || ioExecutor == null) {
            throw new NullPointerException("a log store needs a directory and an I/O executor");
        }
        this.dir = dir;
        this.ioExecutor = ioExecutor;
    }

    /** An executor of daemon threads named {@code name-N}, for {@link #LogStoreConfig(Path, ExecutorService)}. */
    public static ExecutorService newIoExecutor(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public Path dir() {
        return dir;
    }

    public ExecutorService ioExecutor() {
        return ioExecutor;
    }

    public long segmentBytes() {
        return segmentBytes;
    }

    /** Size of each preallocated log segment (default 64 MiB; 1 GiB suits busy production groups). */
    public LogStoreConfig segmentBytes(long segmentBytes) {
        if (segmentBytes < 4096 || segmentBytes > (1L << 40)) {
            throw new IllegalArgumentException("segmentBytes must be between 4 KiB and 1 TiB: " + segmentBytes);
        }
        this.segmentBytes = segmentBytes;
        return this;
    }

    public int indexEntriesPerFile() {
        return indexEntriesPerFile;
    }

    /** Entries (8 bytes each) per index file (default 1 Mi, an 8 MiB file). */
    public LogStoreConfig indexEntriesPerFile(int entries) {
        if (entries < 16) {
            throw new IllegalArgumentException("indexEntriesPerFile must be at least 16: " + entries);
        }
        this.indexEntriesPerFile = entries;
        return this;
    }

    public int indexFlushEntries() {
        return indexFlushEntries;
    }

    /**
     * Index entries gathered before they are written to the index file in one batch (default 16 Ki).
     * Bigger batches mean fewer writes and status saves, and a longer scan on recovery.
     */
    public LogStoreConfig indexFlushEntries(int entries) {
        if (entries < 1) {
            throw new IllegalArgumentException("indexFlushEntries must be positive: " + entries);
        }
        this.indexFlushEntries = entries;
        return this;
    }

    public int maxWriteBytes() {
        return maxWriteBytes;
    }

    /** Largest single positional write (default 1 MiB); a bigger append is split into several writes in flight. */
    public LogStoreConfig maxWriteBytes(int bytes) {
        if (bytes < 4096) {
            throw new IllegalArgumentException("maxWriteBytes must be at least 4 KiB: " + bytes);
        }
        this.maxWriteBytes = bytes;
        return this;
    }

    public boolean syncForce() {
        return syncForce;
    }

    /**
     * true (default): an index is reported persisted after the fsync that covers it. false: after its
     * write completed, before fsync (fsyncs still run behind it) — safe unless a majority of the group
     * loses power together.
     */
    public LogStoreConfig syncForce(boolean syncForce) {
        this.syncForce = syncForce;
        return this;
    }

    public boolean zeroFillSegments() {
        return zeroFillSegments;
    }

    /**
     * false (default): a new segment is created at its full size as a sparse file and fsynced with
     * its directory before it is used; the blocks are allocated by the appends themselves (fdatasync
     * then also commits that allocation). true: the segment is also filled with zeros, so the disk
     * space is really reserved (a full disk shows up when the segment is made, not in an append)
     * and appends overwrite allocated blocks — at the price of writing every segment twice, which
     * halves the append bandwidth when the disk is the bound.
     */
    public LogStoreConfig zeroFillSegments(boolean zeroFill) {
        this.zeroFillSegments = zeroFill;
        return this;
    }

    public int recycledSegments() {
        return recycledSegments;
    }

    /**
     * How many segment files freed by compaction ({@link LogStore#deleteBelow}) are kept to become
     * the next spares instead of being deleted (default {@link #DEFAULT_RECYCLED_SEGMENTS}; 0 deletes
     * every one). A recycled file is renamed to its new start position and its first header zeroed;
     * appends then overwrite blocks (and, while cached, page-cache pages) written before, which costs
     * less than appending into a new sparse file, where each page is allocated anew in the page
     * cache and on disk. The files count against the disk like spares: at most this many segments
     * more than the live ones.
     */
    public LogStoreConfig recycledSegments(int count) {
        if (count < 0 || count > 1024) {
            throw new IllegalArgumentException("recycledSegments must be between 0 and 1024: " + count);
        }
        this.recycledSegments = count;
        return this;
    }

    public int writeRetryLimit() {
        return writeRetryLimit;
    }

    public long writeRetryInitialBackoffMillis() {
        return writeRetryInitialBackoffMillis;
    }

    public long writeRetryMaxBackoffMillis() {
        return writeRetryMaxBackoffMillis;
    }

    /**
     * How often a failed write is retried (default 5), with a back-off doubling from
     * {@code initialBackoffMillis} up to {@code maxBackoffMillis}, before the store gives up and fails.
     */
    public LogStoreConfig writeRetry(int limit, long initialBackoffMillis, long maxBackoffMillis) {
        if (limit < 0 || initialBackoffMillis < 1 || maxBackoffMillis < initialBackoffMillis) {
            throw new IllegalArgumentException("bad write retry settings: " + limit + ", " + initialBackoffMillis
                    + ", " + maxBackoffMillis);
        }
        this.writeRetryLimit = limit;
        this.writeRetryInitialBackoffMillis = initialBackoffMillis;
        this.writeRetryMaxBackoffMillis = maxBackoffMillis;
        return this;
    }

    public long bufferPoolBytes() {
        return bufferPoolBytes;
    }

    /** Cap on pooled direct write buffers kept by the store (default 64 MiB). */
    public LogStoreConfig bufferPoolBytes(long bytes) {
        this.bufferPoolBytes = bytes;
        return this;
    }

    public FileIo fileIo() {
        return fileIo;
    }

    public FsyncGate fsyncGate() {
        return fsyncGate;
    }

    /**
     * Shares a bound on fsyncs in flight with the other logs on the same disk (default: none, each
     * log syncs on its own). See {@link FsyncGate}.
     */
    public LogStoreConfig fsyncGate(FsyncGate gate) {
        this.fsyncGate = gate;
        return this;
    }

    /** The node's log journal this store writes through, or null (none set, or {@code syncForce} off). */
    public LogJournal journal() {
        return syncForce ? journal : null;
    }

    /**
     * Writes through the node's log journal, shared by the node's logs: a write is reported
     * persisted once the journal fsynced it, and the store never fsyncs its own segments on the
     * write path (default: none, each log fsyncs its own files). Only with {@link #syncForce}; the
     * journal's checkpoints fsync the segments. See {@link LogJournal}.
     */
    public LogStoreConfig journal(LogJournal journal) {
        this.journal = journal;
        return this;
    }

    /** The file-system seam (tests inject faults through it). */
    public LogStoreConfig fileIo(FileIo fileIo) {
        if (fileIo == null) {
            throw new NullPointerException("fileIo");
        }
        this.fileIo = fileIo;
        return this;
    }

    long failedCloseIoWaitMillis() {
        return failedCloseIoWaitMillis;
    }

    /**
     * How long the close of a failed store waits for the log writes, fsyncs, index flush and status
     * save already running before it closes the files under them (default
     * {@value #DEFAULT_FAILED_CLOSE_IO_WAIT_MILLIS} ms). Tests shorten it to play a hung disk.
     */
    LogStoreConfig failedCloseIoWaitMillis(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("failedCloseIoWaitMillis must not be negative: " + millis);
        }
        this.failedCloseIoWaitMillis = millis;
        return this;
    }

    Supplier<String> bootId() {
        return bootId;
    }

    /**
     * Where the id of the machine's current boot comes from (default {@link BootId#current}; null from
     * it: unknown). Tests inject one to play a restart of the machine.
     */
    LogStoreConfig bootId(Supplier<String> source) {
        if (source == null) {
            throw new NullPointerException("bootId");
        }
        this.bootId = source;
        return this;
    }
}
