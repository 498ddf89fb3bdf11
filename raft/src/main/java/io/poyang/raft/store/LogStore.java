package io.poyang.raft.store;

import io.poyang.buf.SharedBufferPool;
import io.poyang.buf.ThreadBufferPool;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberCondition;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberFuture;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCallResult;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.LongConsumer;

/**
 * The raft log of one group: append, read, truncate, delete, and the group's status file.
 *
 * <p>A store lives in its group's {@link FiberGroup}: every method is called on the group's
 * dispatcher thread (the frames from a fiber of the group), so its state needs no locks. Blocking
 * file I/O runs on the configured I/O executor and comes back through fiber futures.
 *
 * <p>Indexes: {@code commit ≤ persisted ≤ written ≤ last}. {@link #lastIndex()} moves when
 * {@link #append} returns; {@link #writtenIndex()} when every write up to it completed;
 * {@link #persistedIndex()} when the fsync covering it returned (or with {@code syncForce=false},
 * when the write completed). Raft hears of persisted progress through
 * {@link #persistedCondition()} and {@link #setPersistedListener}.
 *
 * <p>Typical use by raft:
 * <pre>{@code
 * LogStore store = new LogStore("group-1", group, new LogStoreConfig(dir, ioExecutor));
 * return Fiber.call(store.init(), this::afterInit);          // RecoveredState
 * ...
 * store.append(items);                                        // returns at once; writes are in flight
 * store.setCommitIndex(commit);                               // truncation below it is refused
 * return store.persistedCondition().await(this::afterPersist);
 * return Fiber.call(store.load(next, 64, 1 << 20), this::send);
 * return Fiber.call(store.saveStatus(term, votedFor, commit), this::afterSave);
 * }</pre>
 */
public final class LogStore {

    private static final PoyangLog log = PoyangLogs.get(LogStore.class);
    /** The trusted point moves (and the status file is saved for it) every this many index flushes. */
    static final int TRUSTED_STEP_FLUSHES = 8;
    /** At most this much of a truncated tail is zeroed on disk. */
    static final long MAX_TRUNCATE_ZERO_BYTES = 4L << 20;
    /**
     * The advice when log items may be in the page cache only, marked clean (after a failed fsync), and
     * nothing on disk stops a start on the same boot from reading them back as persisted.
     */
    static final String RESTART_THE_MACHINE = "restart the machine, not only the node, before this group runs again:"
            + " the page cache may hold log items the disk never got";

    private final String name;
    private final FiberGroup group;
    private final LogStoreConfig config;
    private final Path logDir;
    private final Path idxDir;
    private final StatusFile statusFile;
    private final SegmentQueue segments;
    private final IndexFiles index;
    private final TermIndex terms = new TermIndex();
    private final FsyncScheduler fsync;
    private final FiberCondition persistedCondition;
    private final FiberCondition idleCondition;
    private LogAppender appender;
    private ThreadBufferPool bufferPool;
    private LongConsumer persistedListener;
    private java.util.function.Consumer<LogStoreFailedException> failureListener;

    private boolean initialized;
    /**
     * Who owns the files recovery opens: {@link #RECOVERY_RUNNING} (the recovery task, which closes
     * them on failure), {@link #RECOVERY_HANDED_OVER} (this store, from the moment the task ended
     * with them) or {@link #RECOVERY_ABANDONED} (the start was stopped: the task closes them at its
     * next safe point and hands over nothing). Set from any thread, hence atomic.
     */
    private final java.util.concurrent.atomic.AtomicInteger recoveryOwner = new java.util.concurrent.atomic.AtomicInteger();
    private static final int RECOVERY_RUNNING = 0;
    private static final int RECOVERY_HANDED_OVER = 1;
    private static final int RECOVERY_ABANDONED = 2;
    /** The future the opening fiber waits on for recovery's outcome, once submitted; failed by {@link #abandonRecovery}. */
    private volatile FiberFuture<LogRecovery.Result> recoveryFuture;
    private boolean closing;
    private boolean closed;
    private boolean truncating;
    /** Truncations and resets started: a read that overlapped one may find zeros where items were. */
    private long truncations;
    private LogStoreFailedException failure;
    /**
     * Log writes and fsyncs handed to the I/O executor and not yet ended (queued or running): counted
     * up on the dispatcher just before each is handed over, down on the I/O thread once its file
     * operation returned. Only a failed store's close reads it: a healthy close learns of its I/O
     * from the appender and the fsync scheduler, but after a failure their bookkeeping no longer
     * settles (a write that failed for good stays in the appender's list) while tasks already handed
     * over still run. One atomic add per task each way and no lock, so the write path stays cheap.
     */
    private final java.util.concurrent.atomic.AtomicInteger logIoTasks = new java.util.concurrent.atomic.AtomicInteger();

    private long firstIndex = 1;
    private long firstIndexPos;
    /** The term of the entry just before {@link #firstIndex} (in a snapshot, or 0). */
    private int firstPrevTerm;
    private long persistedIndex;
    private long commitIndex;
    private long trustedIndex;
    /** {@link #onFsyncFailed}: the last index an fsync covered before one failed, or -1. */
    private long fsyncFailedAfter = -1;
    /** {@link #onFsyncFailed} without syncForce: the boot it happened on, or null. */
    private String fsyncFailedOnBoot;
    /** The machine's current boot as recovery read it (null: unknown). */
    private String bootId;
    private long trustedNextPos;
    private int trustedTerm;
    private int currentTerm;
    private int votedFor;

    public LogStore(String name, FiberGroup group, LogStoreConfig config) {
        this.name = name;
        this.group = group;
        this.config = config;
        this.logDir = config.dir().resolve("log");
        this.idxDir = config.dir().resolve("idx");
        this.statusFile = new StatusFile(config.dir(), config.fileIo(), config.ioExecutor(), group, this::statusContent,
                this::onStatusSaved);
        this.segments = new SegmentQueue(this, logDir, config.segmentBytes(), config.zeroFillSegments());
        this.index = new IndexFiles(this, idxDir, config.indexEntriesPerFile(), config.indexFlushEntries());
        this.fsync = new FsyncScheduler(this);
        this.persistedCondition = group.newCondition(name + "-persisted");
        this.idleCondition = group.newCondition(name + "-io-idle");
    }

    // ---------------------------------------------------------------- init

    /**
     * Opens the store: creates the directory layout for a new group, or recovers an existing one
     * (see {@link LogRecovery}); fails with {@link LogCorruptedException} when data at or below the
     * saved commit index is damaged. Call once, from a fiber of the group.
     */
    public FiberFrame<RecoveredState> init() {
        return new InitFrame();
    }

    private final class InitFrame extends FiberFrame<RecoveredState> {
        @Override
        public FrameCallResult execute(Object input) {
            checkThread();
            if (initialized) {
                throw new IllegalStateException(name + " is already initialised");
            }
            if (closing) {
                throw new IllegalStateException(name + " was closed before it was opened; make a new LogStore"
                        + " to open " + config.dir());
            }
            if (recoveryAbandoned()) {
                throw abandonedError();
            }
            FiberFuture<LogRecovery.Result> f = group.executeBlocking("log-recovery", config.ioExecutor(),
                    LogStore.this::recoverBlocking);
            recoveryFuture = f;
            if (recoveryAbandoned()) {
                // abandoned between the check above and publishing the future: it may not have seen it
                f.completeExceptionally(abandonedError());
            }
            return f.await(this::afterRecovery);
        }

        /** What recovery handed over, once it did: the files this frame closes when it fails. */
        private LogRecovery.Result taken;

        private FrameCallResult afterRecovery(LogRecovery.Result r) {
            taken = r;
            if (closing) {
                // closed after the recovery handed its files over, before they reached us: handle closes them
                throw abandonedError();
            }
            SharedBufferPool shared = new SharedBufferPool(true, config.bufferPoolBytes());
            bufferPool = new ThreadBufferPool(Thread.currentThread(), group.getDispatcher().timestamp(),
                    config.bufferPoolBytes(), shared, ThreadBufferPool.DEFAULT_IDLE_NANOS);
            appender = new LogAppender(LogStore.this, segments, index, fsync, bufferPool, config.maxWriteBytes(),
                    config.syncForce());
            segments.init(r.live, r.spares);
            firstIndex = r.firstIndex;
            firstIndexPos = r.firstIndexPos;
            firstPrevTerm = r.firstPrevTerm;
            trustedIndex = r.trustedIndex;
            trustedNextPos = r.trustedNextPos;
            trustedTerm = r.trustedTerm;
            commitIndex = r.commitIndex;
            currentTerm = r.currentTerm;
            votedFor = r.votedFor;
            bootId = r.bootId;
            terms.clear();
            for (int i = 0; i < r.terms.size(); i++) {
                terms.onAppend(r.terms.startIndexAt(i), r.terms.termAt(i));
            }
            index.ring.reset(r.scanStartIndex);
            for (int i = 0; i < r.positionCount; i++) {
                index.ring.add(r.positions[i]);
            }
            index.init(r.scanStartIndex - 1);
            appender.reset(r.lastIndex, r.lastTerm, r.nextPos);
            persistedIndex = r.lastIndex;
            fsync.init(r.lastIndex);
            initialized = true;
            segments.prepareSpare();
            log.info("{}: opened {} (first index {}, last index {} term {}, commit {}, trusted {}{})", name,
                    config.dir(), firstIndex, r.lastIndex, r.lastTerm, commitIndex, trustedIndex,
                    r.tornBytes > 0 ? ", torn tail cut" : "");
            recovered = r;
            if (r.fsyncFailedAfter >= 0) {
                // the cut is done: saved without the mark before anything new is appended, or a
                // crash would have the next recovery cut items appended (and reported persisted) since
                return statusFile.save().await(this::opened);
            }
            return opened(null);
        }

        private LogRecovery.Result recovered;

        private FrameCallResult opened(Void v) {
            LogRecovery.Result r = recovered;
            return Fiber.frameReturn(new RecoveredState(firstIndex, r.lastIndex, r.lastTerm, commitIndex, currentTerm,
                    votedFor, r.tornBytes));
        }

        /**
         * Opening failed after the recovered files were taken (the status save after a cut, say):
         * they are closed before the error goes on, so the failed start leaves no file open (and
         * the directory can be removed or the start retried). Before that, recovery closed its own.
         */
        @Override
        protected FrameCallResult handle(Throwable ex) throws Throwable {
            LogRecovery.Result r = taken;
            if (r == null || closed) {
                throw ex;
            }
            closing = true;
            closed = true;
            List<LogSegment> all = segments.takeAllForClose();
            return group.executeBlocking("log-close", config.ioExecutor(), () -> {
                r.closeAll();
                for (LogSegment s : all) {
                    SegmentQueue.closeQuietly(s);
                }
                index.closeBlocking();
                return null;
            }).await(ignored -> {
                throw ex;
            });
        }
    }

    /**
     * The recovery task: runs {@link LogRecovery} and hands its open files to the store, unless the
     * start was abandoned meanwhile; then it closes them itself, as nobody will take them.
     */
    private LogRecovery.Result recoverBlocking() throws IOException {
        LogRecovery.Result r = new LogRecovery(this, logDir, idxDir).run();
        if (!recoveryOwner.compareAndSet(RECOVERY_RUNNING, RECOVERY_HANDED_OVER)) {
            r.closeAll();
            throw abandonedError();
        }
        return r;
    }

    /**
     * Gives up the opening of this store if its recovery still runs (the group is stopped while it
     * starts): the recovery ends at its next safe point (between segments or read chunks), closes
     * the files it opened, and {@link #init()} fails at once with a {@link StoppedException} rather
     * than when the recovery would have ended. Returns false when there is nothing to abandon (the
     * recovery ended and handed its files to the store, which a {@link #close()} then closes). Any
     * thread.
     */
    public boolean abandonRecovery() {
        if (!recoveryOwner.compareAndSet(RECOVERY_RUNNING, RECOVERY_ABANDONED)) {
            return false;
        }
        FiberFuture<LogRecovery.Result> f = recoveryFuture;
        if (f != null) {
            f.fireCompleteExceptionally(abandonedError());
        }
        return true;
    }

    /** Whether {@link #abandonRecovery} was called while the recovery ran: its safe points check this. Any thread. */
    boolean recoveryAbandoned() {
        return recoveryOwner.get() == RECOVERY_ABANDONED;
    }

    StoppedException abandonedError() {
        return new StoppedException(name + ": opening " + config.dir() + " was abandoned: the group was stopped"
                + " (or the store closed) while it recovered its log");
    }

    /** Whether the store is open: initialised, and not closing or closed. Dispatcher thread. */
    public boolean isOpen() {
        return initialized && !closing && !closed;
    }

    // ---------------------------------------------------------------- append

    /**
     * Appends items with consecutive indexes from {@code lastIndex() + 1}, each with prevLogTerm
     * equal to the term before it. Returns at once: the items are encoded into write buffers and
     * their writes issued before this returns (unless the next segment is still being
     * preallocated). Throws {@link LogStoreFailedException} after an unrecoverable I/O error, and
     * when encoding an item fails (its {@code Encodable} writes other than its
     * {@code encodedSize()} bytes, or the direct memory runs out): the store then fails, and
     * {@link #lastIndex()} tells which items of the batch were written; throws
     * {@link IllegalArgumentException} for items that do not follow the log, and
     * {@link IllegalStateException} while closing or truncating. Dispatcher thread.
     */
    public void append(List<LogItem> items) {
        checkReady();
        if (items.isEmpty()) {
            return;
        }
        appender.checkAppendable(items);
        appender.append(items);
        checkFailed();  // encoding an item failed: the store failed in append
    }

    public long firstIndex() {
        return firstIndex;
    }

    /** The live segments, oldest first (tests in this package check their first indexes). Dispatcher thread. */
    List<LogSegment> segmentsForTest() {
        return segments.live();
    }

    public long lastIndex() {
        return appender.lastIndex();
    }

    public int lastTerm() {
        return appender.lastTerm();
    }

    public long writtenIndex() {
        return appender.writtenIndex();
    }

    public long persistedIndex() {
        return persistedIndex;
    }

    /** Signalled (signalAll) whenever {@link #persistedIndex()} advances, and when the store fails. */
    public FiberCondition persistedCondition() {
        return persistedCondition;
    }

    /** Called on the dispatcher thread with the new persisted index each time it advances. */
    public void setPersistedListener(LongConsumer listener) {
        this.persistedListener = listener;
    }

    /**
     * Called on the dispatcher thread, in a fiber of its own, once the store fails: raft must stop
     * at once (a leader step down, the writes in its log be answered), not when it next appends.
     */
    public void setFailureListener(java.util.function.Consumer<LogStoreFailedException> listener) {
        this.failureListener = listener;
    }

    /** The commit index raft has declared; truncation at or below it is refused. */
    public long commitIndex() {
        return commitIndex;
    }

    /** Declares raft's commit index (it only grows). It must not pass the persisted index. Dispatcher thread. */
    public void setCommitIndex(long commit) {
        checkThread();
        if (commit > commitIndex) {
            commitIndex = commit;
        }
    }

    /** The error that failed the store, or null. */
    public LogStoreFailedException failure() {
        return failure;
    }

    // ---------------------------------------------------------------- reads

    /**
     * Reads up to {@code maxItems} items from {@code startIndex}, stopping before {@code maxBytes}
     * (but returning at least one item), never past {@link #writtenIndex()} or a segment boundary.
     * Items come from disk (raft keeps its own cache of recent items); their header and body are
     * {@link ByteBody}s. Fails with {@link IllegalArgumentException} below {@link #firstIndex()} (the
     * entries are in a snapshot) and with {@link LogCorruptedException} when an item fails its CRC;
     * the store then fails too ({@link #onReadCorrupted}), unless a truncation overlapped the read.
     */
    public FiberFrame<List<LogItem>> load(long startIndex, int maxItems, int maxBytes) {
        return new LogReader(this, startIndex, maxItems, maxBytes);
    }

    /**
     * The term of {@code index}, for {@code firstIndex() - 1 ≤ index ≤ lastIndex()} (0 for index 0).
     * No disk I/O.
     */
    public int termOf(long index) {
        checkThread();
        if (index == 0) {
            return 0;
        }
        if (index == firstIndex - 1) {
            return firstPrevTerm;
        }
        if (index < firstIndex || index > lastIndex()) {
            throw new IllegalArgumentException(name + ": no term for index " + index + "; the log holds "
                    + firstIndex + ".." + lastIndex());
        }
        return terms.termOf(index);
    }

    /**
     * The conflict search a follower needs: the largest index ≤ {@code maxIndex} whose term is ≤
     * {@code term}, with its term; null when even {@code firstIndex() - 1} has a larger term (the
     * leader must send a snapshot). No disk I/O.
     */
    public IndexTerm findLastMatch(int term, long maxIndex) {
        checkThread();
        long max = Math.min(maxIndex, lastIndex());
        if (max < firstIndex - 1) {
            return null;
        }
        if (max == firstIndex - 1) {
            return firstPrevTerm <= term ? new IndexTerm(max, firstPrevTerm) : null;
        }
        long idx = terms.lastIndexWithTermAtMost(term, max, firstIndex);
        if (idx < firstIndex) {
            return firstPrevTerm <= term ? new IndexTerm(firstIndex - 1, firstPrevTerm) : null;
        }
        return new IndexTerm(idx, terms.termOf(idx));
    }

    // ---------------------------------------------------------------- truncate

    /**
     * Removes {@code index} and everything after it (a follower's conflicting tail). Waits for the
     * writes in flight, then zeroes the removed part on disk (up to 4 MiB of it, and the first
     * header of every later segment) and fsyncs, so a
     * restart cannot bring the old items back. Fails with {@link TruncateBelowCommitException} at or
     * below the commit index.
     */
    public FiberFrame<Void> truncateTail(long index) {
        return new TruncateFrame(index);
    }

    private final class TruncateFrame extends FiberFrame<Void> {
        private final long truncIndex;
        private long pos;
        private LogSegment seg;

        TruncateFrame(long index) {
            this.truncIndex = index;
        }

        @Override
        public FrameCallResult execute(Object input) {
            checkReady();
            if (truncIndex <= commitIndex) {
                throw new TruncateBelowCommitException(truncIndex, commitIndex);
            }
            if (truncIndex > lastIndex()) {
                return Fiber.frameReturn();
            }
            truncating = true;
            truncations++;
            return waitQuiet(null);
        }

        private FrameCallResult waitQuiet(Void v) {
            checkFailed();
            // hasDirty: with an fsync gate, written segments may still wait for a permit. An fsync
            // started while the tail is zeroed would cover the old written index and, completing
            // after the truncation, report the cut entries as persisted.
            if (!appender.isIdle() || fsync.isRunning() || fsync.hasDirty()) {
                return idleCondition.await(this::waitQuiet);
            }
            long p = index.positionInMemory(truncIndex);
            if (p >= 0) {
                return afterPosition(p);
            }
            return group.executeBlocking("index-read", config.ioExecutor(), () -> index.readPositionBlocking(truncIndex))
                    .await(this::afterPosition);
        }

        private FrameCallResult afterPosition(Long p) {
            pos = p;
            seg = segments.find(pos);
            if (seg == null) {
                throw new LogCorruptedException(logDir, pos, "position of index " + truncIndex + " is in no segment");
            }
            List<LogSegment> later = new ArrayList<>();
            for (LogSegment s = segments.next(seg); s != null; s = segments.next(s)) {
                later.add(s);
            }
            LogSegment at = seg;
            long offset = pos - seg.startPos;
            // The removed bytes in this segment end where the appender stopped, or at the segment end.
            // (Capped: past that, the index and term chain checks keep stale items out of the log.)
            long removedEnd = Math.min(offset + MAX_TRUNCATE_ZERO_BYTES,
                    (seg == segments.current() ? appender.nextPos() : seg.endPos()) - seg.startPos);
            return group.executeBlocking("log-truncate", config.ioExecutor(), () -> {
                // Zero the removed part of this segment and the first header of every later one, then
                // sync: recovery stops at a zero header, and new items written over the removed part
                // later never sit next to a stale old item.
                ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(1 << 20,
                        Math.max(LogItemCodec.HEADER_BYTES, removedEnd - offset)));
                for (long off = offset; off < Math.max(removedEnd, offset + LogItemCodec.HEADER_BYTES); ) {
                    zeros.clear();
                    zeros.limit((int) Math.min(zeros.capacity(), Math.max(removedEnd, offset + LogItemCodec.HEADER_BYTES) - off));
                    int n = zeros.remaining();
                    at.file.writeFully(zeros, off);
                    off += n;
                }
                at.file.force(false);
                for (LogSegment s : later) {
                    s.file.writeFully(ByteBuffer.allocate(LogItemCodec.HEADER_BYTES), 0);
                    s.file.force(false);
                }
                LogJournal journal = config.journal();
                if (journal != null) {
                    // the journal may still hold the removed items: replayed after a crash, they would
                    // come back unless the zeros are replayed after them
                    journal.recordZeros(at, offset, (int) (Math.max(removedEnd, offset + LogItemCodec.HEADER_BYTES) - offset));
                    for (LogSegment s : later) {
                        journal.recordZeros(s, 0, LogItemCodec.HEADER_BYTES);
                    }
                }
                return null;
            }).await(this::afterZero);
        }

        private FrameCallResult afterZero(Object ignored) {
            int termBefore = termOf(truncIndex - 1);
            appender.truncateTo(truncIndex, termBefore, pos);
            terms.truncateFrom(truncIndex);
            index.truncateFrom(truncIndex);
            segments.truncateAfter(seg);
            if (seg.firstIndex >= truncIndex) {
                seg.firstIndex = -1;
            }
            if (persistedIndex >= truncIndex) {
                persistedIndex = truncIndex - 1;
            }
            fsync.init(Math.min(fsync.syncedIndex(), truncIndex - 1));
            log.info("{}: truncated the log from index {} (position {})", name, truncIndex, pos);
            return Fiber.frameReturn();
        }

        @Override
        protected FrameCallResult doFinally() {
            truncating = false;
            return Fiber.frameReturn();
        }
    }

    // ---------------------------------------------------------------- snapshot reset

    /**
     * Discards the whole log after a follower installed a snapshot ending at
     * {@code snapshotIndex} (of {@code snapshotTerm}) that its log does not match: the log becomes
     * empty, starting at {@code snapshotIndex + 1}, and the next append must carry that index with
     * prevLogTerm {@code snapshotTerm}. The new start is saved in the status file before the old
     * segments are deleted (those being read are deleted when their reads end). Refused with
     * {@link TruncateBelowCommitException} when {@code snapshotIndex} is below the commit index.
     * (When the log does match the snapshot's last entry, keep it and use {@link #deleteBelow}.)
     */
    public FiberFrame<Void> resetAfterSnapshot(long snapshotIndex, int snapshotTerm) {
        return new ResetFrame(snapshotIndex, snapshotTerm);
    }

    private final class ResetFrame extends FiberFrame<Void> {
        private final long snapshotIndex;
        private final int snapshotTerm;
        private List<LogSegment> doomed;
        /** The store's state in memory was changed: from here a failure leaves memory and files apart. */
        private boolean memoryChanged;

        ResetFrame(long snapshotIndex, int snapshotTerm) {
            this.snapshotIndex = snapshotIndex;
            this.snapshotTerm = snapshotTerm;
        }

        @Override
        public FrameCallResult execute(Object input) {
            checkReady();
            if (snapshotIndex < commitIndex) {
                throw new TruncateBelowCommitException(snapshotIndex + 1, commitIndex);
            }
            if (snapshotTerm < 0 || snapshotIndex < 0) {
                throw new IllegalArgumentException("bad snapshot (index " + snapshotIndex + ", term " + snapshotTerm + ")");
            }
            truncating = true;
            truncations++;
            return waitQuiet(null);
        }

        private FrameCallResult waitQuiet(Void v) {
            checkFailed();
            // hasDirty: with an fsync gate, a written segment may still wait for a permit; the reset
            // below closes segments, and an fsync of a closed one would fail the store
            if (!appender.isIdle() || fsync.isRunning() || fsync.hasDirty() || index.isFlushing()) {
                return idleCondition.await(this::waitQuiet);
            }
            // The new log starts where the next byte would have gone: never-written space (when
            // fewer than a header's bytes are left there, recovery and the appender move on).
            long start = appender.nextPos();
            LogSegment cur = segments.current();
            long first = snapshotIndex + 1;
            memoryChanged = true;
            firstIndex = first;
            firstIndexPos = start;
            firstPrevTerm = snapshotTerm;
            trustedIndex = 0;
            trustedNextPos = 0;
            trustedTerm = 0;
            commitIndex = snapshotIndex;
            terms.clear();
            index.truncateFrom(0);
            index.ring.reset(first);
            index.init(snapshotIndex);
            appender.reset(snapshotIndex, snapshotTerm, appender.nextPos());
            persistedIndex = snapshotIndex;
            fsync.init(snapshotIndex);
            doomed = cur == null ? new ArrayList<>() : segments.removeBefore(cur);
            if (cur != null) {
                cur.firstIndex = -1;
            }
            return statusFile.save().await(this::afterSave);
        }

        private FrameCallResult afterSave(Void v) {
            checkFailed();
            deleting = true;
            // no I/O of the doomed segments is under way: waitQuiet waited for it, and appends are
            // refused while the reset runs (unlike deleteBelow, which must wait for it itself)
            List<LogSegment> now = new ArrayList<>();
            for (LogSegment s : doomed) {
                if (s.readers > 0) {
                    s.deleteWhenUnread = true;
                } else {
                    now.add(s);
                }
            }
            long first = firstIndex;
            return group.executeBlocking("log-reset", config.ioExecutor(), () -> {
                deleteSegmentsBlocking(now);
                index.deleteBelowBlocking(first);
                return null;
            }).await(this::done);
        }

        private FrameCallResult done(Object ignored) {
            log.info("{}: reset the log after a snapshot at index {} term {}; it now starts at {}", name,
                    snapshotIndex, snapshotTerm, firstIndex);
            return Fiber.frameReturn();
        }

        /**
         * Once memory describes the new log, a failed status save leaves the files describing the
         * old one: entries appended now would go where a restart's recovery cuts them as a torn
         * tail. The store fails instead; a restart finds the snapshot and redoes the reset.
         */
        @Override
        protected FrameCallResult handle(Throwable ex) throws Throwable {
            if (memoryChanged && failure == null) {
                fail(new LogStoreFailedException(name + ": resetting the log after a snapshot at index " + snapshotIndex
                        + " failed (" + ex + "); the store refuses further appends: check the disk, then restart the"
                        + " group or its node (it finds the snapshot and resets the log again)", ex));
            }
            if (doomed != null && !deleting) {
                keepLeftovers(doomed, firstIndex);  // out of the live list: close must still close them
            }
            throw ex;
        }

        /** The doomed segments were handed to the deletion. */
        private boolean deleting;

        @Override
        protected FrameCallResult doFinally() {
            truncating = false;
            return Fiber.frameReturn();
        }
    }

    // ---------------------------------------------------------------- delete

    /**
     * Deletes the segments (and index files) whose items are all below {@code index}, typically
     * the index after a snapshot; {@code index} must not pass {@code commitIndex() + 1}. The new
     * first index (the first item of the first kept segment) is saved in the status file before
     * any file is removed. A segment being read is deleted when its last reader finishes.
     */
    public FiberFrame<Void> deleteBelow(long index) {
        return new DeleteFrame(index);
    }

    private final class DeleteFrame extends FiberFrame<Void> {
        private final long below;
        private List<LogSegment> doomed;
        private long newFirst;

        DeleteFrame(long below) {
            this.below = below;
        }

        @Override
        public FrameCallResult execute(Object input) {
            checkReady();
            if (below > commitIndex + 1) {
                throw new IllegalArgumentException(name + ": cannot delete below index " + below
                        + ", past the commit index " + commitIndex + " + 1; delete only what a snapshot covers");
            }
            LogSegment keep = null;
            for (LogSegment s : segments.live()) {
                if (s.firstIndex >= 0 && s.firstIndex <= below) {
                    keep = s;
                }
            }
            if (keep == null || keep == segments.first()) {
                return Fiber.frameReturn();
            }
            newFirst = keep.firstIndex;
            firstPrevTerm = termOf(newFirst - 1);
            firstIndex = newFirst;
            firstIndexPos = keep.startPos;
            terms.removeBefore(newFirst);
            index.onFirstIndexMoved(newFirst);
            doomed = segments.removeBefore(keep);
            return statusFile.save().await(this::afterSave);
        }

        private FrameCallResult afterSave(Void v) {
            checkFailed();
            handedOver = true;
            return Fiber.call(new DeleteSegmentsFrame(doomed, newFirst), this::afterDelete);
        }

        private FrameCallResult afterDelete(Void ignored) {
            log.info("{}: deleted {} segments below index {}; the log now starts at {}", name, doomed.size(), below,
                    newFirst);
            return Fiber.frameReturn();
        }

        /** The doomed segments were taken out of the live list: from here they are handed over, or kept as leftovers. */
        private boolean handedOver;

        /**
         * The status save failed (or the store failed meanwhile). Memory already starts at the new
         * first index; the status file on disk may still name the old one, so the doomed segments
         * must stay on disk. They are kept as leftovers: deleted once a later status save records the
         * new first index ({@link #onStatusSaved}), closed by {@link #close} otherwise (the next start
         * deletes them as lying below the first index). Before, nothing held them any more: open
         * until the process ended, on disk until a restart.
         */
        @Override
        protected FrameCallResult handle(Throwable ex) throws Throwable {
            if (doomed != null && !handedOver) {
                keepLeftovers(doomed, newFirst);
            }
            throw ex;
        }
    }

    /** Segments taken out of the live list whose deletion must wait for a status save (see DeleteFrame.handle). */
    private final List<LogSegment> leftovers = new ArrayList<>();
    /** The first index a saved status must have reached before {@link #leftovers} may be deleted. */
    private long leftoversBelow;

    private void keepLeftovers(List<LogSegment> list, long first) {
        leftovers.addAll(list);
        leftoversBelow = Math.max(leftoversBelow, first);
        log.warn("{}: {} log segments below index {} are kept until a status save records that the log starts there;"
                + " they are deleted then (or at the next start)", name, list.size(), first);
    }

    /**
     * A status save succeeded with {@code saved}: leftovers of a delete whose own save failed are
     * deleted once a saved first index covers them. Dispatcher thread.
     */
    private void onStatusSaved(Map<String, String> saved) {
        if (leftovers.isEmpty() || closing || failure != null
                || Long.parseLong(saved.get(LogRecovery.K_FIRST_INDEX)) < leftoversBelow) {
            return;
        }
        List<LogSegment> list = new ArrayList<>(leftovers);
        leftovers.clear();
        new Fiber(name + "-delete-leftovers", group, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(new DeleteSegmentsFrame(list, firstIndex), this::done);
            }

            private FrameCallResult done(Void v) {
                log.info("{}: deleted {} segments left by a failed delete; the log starts at {}", name, list.size(),
                        firstIndex);
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                log.warn("{}: deleting {} segments left by a failed delete failed; they are removed on the next start",
                        name, list.size(), ex);
                return Fiber.frameReturn();
            }
        }).start();
    }

    /**
     * Closes and deletes segments no longer in the live list (those being read when their last
     * reader ends), and the index files below {@code first}, once no write or fsync of theirs is
     * under way.
     */
    private final class DeleteSegmentsFrame extends FiberFrame<Void> {
        private final List<LogSegment> doomed;
        private final long first;

        DeleteSegmentsFrame(List<LogSegment> doomed, long first) {
            this.doomed = doomed;
            this.first = first;
        }

        @Override
        public FrameCallResult execute(Object input) {
            if (anyIoBusy(doomed)) {
                if (failure != null) {
                    return giveUp();
                }
                return Fiber.sleep(1, this::execute);
            }
            List<LogSegment> now = new ArrayList<>();
            for (LogSegment s : doomed) {
                if (s.readers > 0) {
                    s.deleteWhenUnread = true;  // deleted by the last reader's release
                    s.recycleWhenUnread = true;
                } else {
                    now.add(s);
                }
            }
            return group.executeBlocking("log-delete", config.ioExecutor(), () -> {
                deleteSegmentsBlocking(now, true);
                index.deleteBelowBlocking(first);
                return null;
            }).await(this::done);
        }

        private FrameCallResult done(Object ignored) {
            return Fiber.frameReturn();
        }

        /**
         * The store failed while a doomed segment's I/O was due: a failed store's bookkeeping no
         * longer settles (a write completing now marks its segment for an fsync that never comes; a
         * write failing now is not retried and stays pending), so waiting for it waited forever. The
         * segments become leftovers instead: the close closes them once the I/O still running
         * ended, and the next start deletes them (the status file already starts the log above
         * them). A close that already took the leftovers cannot close these: they are closed here.
         */
        private FrameCallResult giveUp() {
            LogStoreFailedException error = new LogStoreFailedException(name + ": deleting " + doomed.size()
                    + " log segments below index " + first + " stopped, the store having failed ("
                    + failure.getMessage() + "); they are deleted at the next start", failure);
            if (!closed) {
                keepLeftovers(doomed, first);
                throw error;
            }
            return group.executeBlocking("log-close", config.ioExecutor(), () -> {
                for (LogSegment s : doomed) {
                    SegmentQueue.closeQuietly(s);
                }
                return null;
            }).await(ignored -> {
                throw error;
            });
        }
    }

    /**
     * Whether a segment about to be closed still has a write or fsync under way or due: the one just
     * rolled from may still get its end marker, or be in an fsync, and closed under them these would
     * fail and fail the store. They end within an fsync or so; callers poll (a cold path).
     */
    private static boolean anyIoBusy(List<LogSegment> segments) {
        for (LogSegment s : segments) {
            if (s.ioBusy()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Closes and deletes each segment; one that fails does not stop the others (each is at least
     * closed: a file left on disk is deleted by the next start, as lying below the first index).
     * Throws the first failure.
     */
    void deleteSegmentsBlocking(List<LogSegment> list) throws IOException {
        deleteSegmentsBlocking(list, false);
    }

    /**
     * {@link #deleteSegmentsBlocking(List)}, but with {@code recycle} (segments compaction freed:
     * every item in them lies below the first index) a file may be kept for {@link SegmentQueue}
     * to make a spare of instead (see {@link LogStoreConfig#recycledSegments}). Not for the
     * segments a reset after a snapshot drops: their items may lie above the new first index.
     */
    void deleteSegmentsBlocking(List<LogSegment> list, boolean recycle) throws IOException {
        IOException first = null;
        for (LogSegment s : list) {
            try {
                s.file.close();
                if (!(recycle && segments.offerRecycled(s.path(), s.sizeBytes))) {
                    config.fileIo().delete(s.path());
                }
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (!list.isEmpty()) {
            try {
                config.fileIo().syncDirectory(logDir);
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Truncations and resets started so far (a reader compares it across its read). Dispatcher thread. */
    long truncations() {
        return truncations;
    }

    /** A truncation or reset is running. Dispatcher thread. */
    boolean isTruncating() {
        return truncating;
    }

    /**
     * A read found an item (or index entry) that fails its CRC or is not where the log says it is,
     * and no truncation overlapped the read: data the store reported persisted is damaged. That
     * does not heal, so the store fails, once, naming the file and offset (raft's group fails with
     * it), instead of every caller retrying the read forever. Dispatcher thread.
     */
    void onReadCorrupted(long startIndex, LogCorruptedException e) {
        fail(new LogStoreFailedException(name + ": reading the log from index " + startIndex + " found damaged data"
                + " the store had reported persisted; it refuses further appends and reads: " + e.getMessage(), e));
    }

    /** A reader finished with {@code s}. */
    void releaseReader(LogSegment s) {
        s.readers--;
        if (s.readers == 0 && s.deleteWhenUnread) {
            s.deleteWhenUnread = false;
            boolean recycle = s.recycleWhenUnread;
            List<LogSegment> one = new ArrayList<>(1);
            one.add(s);
            group.executeBlocking("log-delete", config.ioExecutor(), () -> {
                deleteSegmentsBlocking(one, recycle);
                return null;
            }).whenComplete((v, e) -> {
                if (e != null) {
                    log.warn("{}: deleting {} after its last reader failed; it is removed on the next start", name, s, e);
                }
            });
        }
    }

    // ---------------------------------------------------------------- status

    /** The term saved in the status file (as recovered or last saved). */
    public int currentTerm() {
        return currentTerm;
    }

    /** The vote saved in the status file (0: none). */
    public int votedFor() {
        return votedFor;
    }

    /**
     * Saves raft's term, vote and commit index in the status file (with the store's own recovery
     * positions). The frame returns after the temp file was fsynced, renamed over the status file
     * and the directory fsynced. Concurrent saves are coalesced.
     */
    public FiberFrame<Void> saveStatus(int term, int votedFor, long commit) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                checkThread();
                currentTerm = term;
                LogStore.this.votedFor = votedFor;
                setCommitIndex(commit);
                return statusFile.save().await(this::done);
            }

            private FrameCallResult done(Void v) {
                return Fiber.frameReturn();
            }
        };
    }

    private Map<String, String> statusContent() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LogRecovery.K_TERM, Integer.toString(currentTerm));
        m.put(LogRecovery.K_VOTED_FOR, Integer.toString(votedFor));
        // Never claim a commit index beyond what is on the disk: recovery refuses to start below it.
        m.put(LogRecovery.K_COMMIT_INDEX, Long.toString(Math.min(commitIndex, durableIndex())));
        m.put(LogRecovery.K_FIRST_INDEX, Long.toString(firstIndex));
        m.put(LogRecovery.K_FIRST_INDEX_POS, Long.toString(firstIndexPos));
        m.put(LogRecovery.K_FIRST_PREV_TERM, Integer.toString(firstPrevTerm));
        m.put(LogRecovery.K_TRUSTED_INDEX, Long.toString(trustedIndex));
        m.put(LogRecovery.K_TRUSTED_NEXT_POS, Long.toString(trustedNextPos));
        m.put(LogRecovery.K_TRUSTED_TERM, Integer.toString(trustedTerm));
        m.put(LogRecovery.K_TERMS, terms.encode(trustedIndex));
        if (fsyncFailedAfter >= 0) {
            m.put(LogRecovery.K_FSYNC_FAILED_AFTER, Long.toString(fsyncFailedAfter));
        }
        if (fsyncFailedOnBoot != null) {
            m.put(LogRecovery.K_FSYNC_FAILED_ON_BOOT, fsyncFailedOnBoot);
        }
        return m;
    }

    /**
     * An fsync failed; {@code syncedIndex} is the last index an earlier one covered. Saved in the
     * status file, so the next recovery cuts the log after it: a restart in place (of the group or
     * the node, on the same boot) would otherwise read the items after it back from the page cache,
     * which a failed fsync may leave holding pages the disk never got, and count them persisted.
     * Without syncForce those items were reported persisted once written, and are not cut: the boot
     * is saved instead ({@link LogRecovery#K_FSYNC_FAILED_ON_BOOT}), and a start on it is refused.
     * Otherwise it would read them back, count them fsynced, and a later status save could claim a
     * commit index over items the disk never got, which the next boot then refuses to start on.
     * Dispatcher thread.
     */
    void onFsyncFailed(long syncedIndex) {
        if (fsyncFailedAfter >= 0 || fsyncFailedOnBoot != null) {
            return;
        }
        if (config.syncForce()) {
            fsyncFailedAfter = syncedIndex;
        } else {
            fsyncFailedOnBoot = bootId != null ? bootId : LogRecovery.UNKNOWN_BOOT;
        }
        statusFile.save().whenComplete((v, e) -> {
            if (e != null) {
                log.error("{}: recording that an fsync failed after index {} failed too ({}); {}", name, syncedIndex,
                        e.toString(), RESTART_THE_MACHINE);
            }
        });
    }

    /** What a failed fsync's error tells the operator to do; {@code syncedIndex}: the last index an fsync covered. */
    String afterFsyncFailure(long syncedIndex) {
        if (config.syncForce()) {
            return "restart the group or its node (recovery cuts the log after index " + syncedIndex
                    + ", the last an fsync covered)";
        }
        return "restart the machine, not only the group or its node: without syncForce the items after index "
                + syncedIndex + " were reported persisted when written and may be in the page cache only, so a"
                + " start on this boot is refused";
    }

    /**
     * The last index whose item an fsync covered: {@link #persistedIndex} with {@code syncForce};
     * without it, items count as persisted once written (the page cache), and what the status file
     * claims (the commit index, the trusted point) must not run ahead of the disk, or one node's
     * power loss would leave a status that names items its log no longer has. Dispatcher thread.
     */
    private long durableIndex() {
        return config.syncForce() ? persistedIndex : Math.min(persistedIndex, fsync.syncedIndex());
    }

    /** Index entries were fsynced: move the trusted point up (at most to what is durable and committed) and save it. */
    void onIndexFlushed() {
        long t = Math.min(index.flushedIndex(), Math.min(durableIndex(), commitIndex));
        if (t <= trustedIndex || t < firstIndex || closed) {
            return;
        }
        // A status save costs two fsyncs: move the trusted point in big steps (recovery scans at
        // most this far after a crash), except when closing.
        if (!closing && t - trustedIndex < TRUSTED_STEP_FLUSHES * (long) config.indexFlushEntries()) {
            return;
        }
        long next = index.positionInMemory(t + 1);
        if (next < 0) {
            return;  // the next item's position is not at hand; a later flush moves the point
        }
        trustedIndex = t;
        trustedNextPos = next;
        trustedTerm = terms.termOf(t);
        statusFile.save().whenComplete((v, e) -> {
            if (e != null) {
                log.warn("{}: saving the trusted point {} failed; recovery will scan from the previous one", name, t, e);
            }
        });
    }

    // ---------------------------------------------------------------- close

    /**
     * Stops appends, waits for the writes in flight and a final fsync, flushes the index, saves the
     * status file and closes the files. A failed store writes nothing more: its close waits only for
     * the file operations already handed to the I/O threads (log writes, fsyncs, an index flush, a
     * status save), at most 10 s (a hung disk: it then closes the files under them and logs how many
     * still ran), then closes the files. A store never opened (no {@link #init()}, or one that failed
     * before the store took the recovered files; a failed init closes what it took) has nothing to
     * close: the close returns at once, and a later {@link #init()} is refused. One closed while its
     * init runs abandons the recovery, as {@link #abandonRecovery} does: the recovery closes its
     * files at its next safe point and the init fails with a {@link StoppedException}. Any fiber of
     * the group.
     */
    public FiberFrame<Void> close() {
        return new CloseFrame();
    }

    private final class CloseFrame extends FiberFrame<Void> {
        @Override
        public FrameCallResult execute(Object input) {
            checkThread();
            if (closing) {
                return Fiber.frameReturn();
            }
            closing = true;
            if (!initialized) {
                // nothing of the store's is open: files a running recovery opened are its own until it
                // hands them over, and an init that took them closes them when it fails (or sees closing)
                abandonRecovery();
                return Fiber.frameReturn();
            }
            return waitQuiet(null);
        }

        private FrameCallResult waitQuiet(Void v) {
            if (failure == null && (!appender.isIdle() || fsync.isRunning() || fsync.hasDirty() || index.isFlushing())) {
                fsync.kick();
                return idleCondition.await(this::waitQuiet);
            }
            if (failure != null) {
                return waitFailedIo(null);
            }
            LogSegment cur = segments.current();
            long next = appender.nextPos();
            if (cur != null && next >= cur.startPos && cur.endPos() - next >= LogItemCodec.HEADER_BYTES) {
                // After the last item a recycled segment holds old items, not zeros: a zeroed header
                // there makes this clean end a clean end to the next start, not a torn tail.
                return group.executeBlocking("log-close-end", config.ioExecutor(), () -> {
                    cur.file.writeFully(ByteBuffer.allocate(LogItemCodec.HEADER_BYTES), next - cur.startPos);
                    cur.file.force(false);
                    return null;
                }).await(this::flushIndex);
            }
            return flushIndex(null);
        }

        /** When {@link #waitFailedIo} gives up (System.nanoTime), once it started waiting. */
        private long failedIoDeadlineNanos;
        private boolean waitingForFailedIo;

        /**
         * A failed store writes and syncs nothing more, but what was handed to the I/O threads before
         * (log writes and fsyncs, an index flush, a status save such as the one recording a failed
         * fsync) still runs. Closed under it, it met a closed file (its error swallowed, the store
         * having failed already) or opened an index file again that nobody closed, and the close
         * returned with it running: a caller that then deleted or reopened the directory (a restart
         * of the group, a test's cleanup) raced with it, and a reopen could read the status from
         * before the failure. So the close waits for it to end. It polls: once failed, not every
         * completion comes back to wake a waiter (a cold path, as in {@link DeleteSegmentsFrame}).
         * On a hung disk it gives up after failedCloseIoWaitMillis, closes the files under what
         * still runs and says so.
         */
        private FrameCallResult waitFailedIo(Void v) {
            int running = logIoTasks.get();
            boolean flushing = index.isFlushing();
            boolean saving = statusFile.isSaving();
            if (running == 0 && !flushing && !saving) {
                return closeFiles(null);
            }
            long now = System.nanoTime();
            if (!waitingForFailedIo) {
                waitingForFailedIo = true;
                failedIoDeadlineNanos = now + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                        config.failedCloseIoWaitMillis());
            } else if (now - failedIoDeadlineNanos >= 0) {
                log.warn("{}: the failed log store closes its files with {} log writes or fsyncs{}{} still running"
                        + " after {} ms (a hung disk?); they will fail on the closed files. Wait until the disk answers"
                        + " before reopening or deleting {}", name, running, flushing ? ", an index flush" : "",
                        saving ? ", a status save" : "", config.failedCloseIoWaitMillis(), config.dir());
                return closeFiles(null);
            }
            return Fiber.sleep(1, this::waitFailedIo);
        }

        private FrameCallResult flushIndex(Object ignored) {
            FiberFuture<Void> f = index.flush();
            if (f == null) {
                return afterFlush(null);
            }
            return f.await(this::afterFlush);
        }

        private FrameCallResult afterFlush(Void v) {
            onIndexFlushed();
            return statusFile.save().await(this::closeFiles);
        }

        private FrameCallResult closeFiles(Void v) {
            closed = true;
            List<LogSegment> all = segments.takeAllForClose();
            all.addAll(leftovers);  // closed only: the next start deletes them if the status file allows
            leftovers.clear();
            return group.executeBlocking("log-close", config.ioExecutor(), () -> {
                for (LogSegment s : all) {
                    SegmentQueue.closeQuietly(s);
                }
                try {
                    segments.deleteRecycledBlocking();
                } catch (IOException e) {
                    log.warn("{}: deleting the segment files kept for reuse failed ({}); they lie below the first"
                            + " index, so the next start deletes them", name, e.toString());
                }
                index.closeBlocking();
                return null;
            }).await(this::done);
        }

        private FrameCallResult done(Object ignored) throws Throwable {
            log.info("{}: closed at index {} (persisted {})", name, lastIndex(), persistedIndex);
            if (error != null) {
                throw error;
            }
            return Fiber.frameReturn();
        }

        /** The final index flush or status save failed: reported after the files are closed. */
        private Throwable error;

        /**
         * The final index flush or status save failed: the files are closed all the same (before,
         * every segment and index file stayed open, and a restart of the group on a full disk
         * leaked them each time), then the error goes to the caller. The next start recovers from
         * the status last saved.
         */
        @Override
        protected FrameCallResult handle(Throwable ex) throws Throwable {
            if (closed || !closing) {
                throw ex;   // closing the files failed, or this close found the store closing already
            }
            error = ex;
            return closeFiles(null);
        }
    }

    // ---------------------------------------------------------------- statistics

    /** fsyncs completed. */
    long syncedIndexForTest() {
        return fsync.syncedIndex();
    }

    public long fsyncCount() {
        return fsync.fsyncCount();
    }

    /** How long the fsyncs took (written on the dispatcher, read racily for metrics). */
    public io.poyang.common.DurationHistogram fsyncLatency() {
        return fsync.latency;
    }

    /** The most bytes one encoded item (header and body) may take: it must fit one segment. */
    public long maxItemBytes() {
        return Math.min(config.segmentBytes() - LogItemCodec.HEADER_BYTES, LogItemCodec.MAX_ITEM_BYTES);
    }

    /** Positional writes issued (0 until the store is open: metrics may ask while it recovers). */
    public long writeCount() {
        LogAppender a = appender;
        return a == null ? 0 : a.writeCount();
    }

    /** Bytes written to the log (items and markers; 0 until the store is open). */
    public long writtenBytes() {
        LogAppender a = appender;
        return a == null ? 0 : a.writtenBytes();
    }

    // ---------------------------------------------------------------- for the store's parts

    String name() {
        return name;
    }

    FiberGroup group() {
        return group;
    }

    LogStoreConfig config() {
        return config;
    }

    ExecutorService ioExecutor() {
        return config.ioExecutor();
    }

    FileIo fileIo() {
        return config.fileIo();
    }

    StatusFile statusFile() {
        return statusFile;
    }

    SegmentQueue segments() {
        return segments;
    }

    IndexFiles index() {
        return index;
    }

    TermIndex terms() {
        return terms;
    }

    LogAppender appender() {
        return appender;
    }

    boolean isFailed() {
        return failure != null;
    }

    /** A log write or fsync is about to be handed to the I/O executor (see {@link #logIoTasks}). Dispatcher thread. */
    void logIoStarting() {
        logIoTasks.incrementAndGet();
    }

    /** A log write or fsync ended on its I/O thread, or the executor refused it. Any thread. */
    void logIoEnded() {
        logIoTasks.decrementAndGet();
    }

    boolean isClosed() {
        return closed;
    }

    /** The fsync covering {@code index} returned. */
    void onSynced(long syncedIndex) {
        if (config.syncForce()) {
            onPersisted(syncedIndex);
        }
    }

    void onPersisted(long newPersisted) {
        if (newPersisted <= persistedIndex || failure != null) {
            // once failed (an fsync error), nothing more is reported persisted
            return;
        }
        persistedIndex = newPersisted;
        persistedCondition.signalAll();
        LongConsumer l = persistedListener;
        if (l != null) {
            l.accept(newPersisted);
        }
    }

    /** Something in flight finished: wake the frames waiting for the I/O to settle (they re-check what they need). */
    void checkIdle() {
        idleCondition.signalAll();
    }

    /** Marks the store failed: appends are refused from now on and every waiter wakes to see it. */
    void fail(LogStoreFailedException e) {
        if (failure != null) {
            return;
        }
        failure = e;
        log.error("{}: the log store has FAILED and refuses further appends: {}", name, e.getMessage(), e);
        persistedCondition.signalAll();
        idleCondition.signalAll();
        java.util.function.Consumer<LogStoreFailedException> l = failureListener;
        if (l != null) {
            // outside the caller's stack: fail() runs inside write and fsync completions
            new Fiber(name + "-failed", group, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    l.accept(e);
                    return Fiber.frameReturn();
                }
            }, true).start();
        }
    }

    long backoffMillis(int attempt) {
        long d = config.writeRetryInitialBackoffMillis() << Math.min(20, Math.max(0, attempt - 1));
        return Math.min(d, config.writeRetryMaxBackoffMillis());
    }

    /** Runs {@code task} on the dispatcher thread after {@code delayMillis}. Dispatcher thread. */
    void runLater(long delayMillis, Runnable task) {
        new Fiber(name + "-retry", group, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(delayMillis, this::run);
            }

            private FrameCallResult run(Void v) {
                task.run();
                return Fiber.frameReturn();
            }
        }, true).start();
    }

    private void checkThread() {
        if (!group.isInGroupThread()) {
            throw new IllegalStateException(name + ": log store methods run on the dispatcher thread of group '"
                    + group.getName() + "', not on '" + Thread.currentThread().getName() + "'");
        }
    }

    private void checkFailed() {
        if (failure != null) {
            throw new LogStoreFailedException(name + " has failed: " + failure.getMessage(), failure);
        }
    }

    void checkReady() {
        checkThread();
        if (!initialized) {
            throw new IllegalStateException(name + " is not initialised; call init() first");
        }
        checkFailed();
        if (closing) {
            throw new IllegalStateException(name + " is closed");
        }
        if (truncating) {
            throw new IllegalStateException(name + " is truncating its tail; wait for truncateTail to return");
        }
    }
}
