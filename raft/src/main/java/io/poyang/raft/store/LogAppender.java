package io.poyang.raft.store;

import io.poyang.buf.BufferPool;
import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The write half of the store. {@link #append} assigns each item its position in order, encodes
 * it into a pooled direct buffer right away and issues the positional write at once, without
 * waiting for earlier writes: several writes are in flight, on several I/O threads. Completions
 * may come back in any order; {@link #writtenIndex()} advances only over the completed prefix,
 * and only that prefix is handed to the {@link FsyncScheduler}.
 *
 * <p>Items wait in {@link #pending} only when the next segment is not preallocated yet (rare: a
 * spare is prepared as soon as the previous one is taken). Dispatcher thread only.
 */
final class LogAppender {

    private static final PoyangLog log = PoyangLogs.get(LogAppender.class);

    private final LogStore store;
    private final SegmentQueue segments;
    private final IndexFiles index;
    private final FsyncScheduler fsync;
    private final BufferPool pool;
    private final int maxWriteBytes;
    private final boolean syncForce;
    /** The store writes through the node's log journal (which fsyncs), not fsyncing its own files. */
    private final boolean journaled;
    private final LogItemCodec codec = new LogItemCodec();

    /** Appended, not yet encoded (waiting for a segment). */
    private final ArrayDeque<LogItem> pending = new ArrayDeque<>();
    /** Writes in submission (= position) order, completed or not. */
    private final ArrayDeque<WriteTask> inFlight = new ArrayDeque<>();
    /** Where the next byte goes. */
    private long nextPos;
    /** The current segment already ends with a segment-end marker. */
    private boolean segmentEnded;
    private long lastIndex;
    private int lastTerm;
    /** Every index up to this one has its position assigned and its write issued. */
    private long encodedIndex;
    private long writtenIndex;
    private long writeCount;
    private long writtenBytes;
    /** Failed write attempts, so a full disk is one warning per interval, not one per write. */
    private final WarningThrottle writeFailures = new WarningThrottle(TimeUnit.SECONDS.toNanos(10));

    LogAppender(LogStore store, SegmentQueue segments, IndexFiles index, FsyncScheduler fsync, BufferPool pool,
                int maxWriteBytes, boolean syncForce) {
        this.store = store;
        this.segments = segments;
        this.index = index;
        this.fsync = fsync;
        this.pool = pool;
        this.maxWriteBytes = maxWriteBytes;
        this.syncForce = syncForce;
        this.journaled = store.config().journal() != null;
        segments.setOnSpareReady(this::encodeAndSubmit);
    }

    /** After recovery (or truncation): the log ends at {@code lastIndex} and the next item goes to {@code nextPos}. */
    void reset(long lastIndex, int lastTerm, long nextPos) {
        this.lastIndex = lastIndex;
        this.lastTerm = lastTerm;
        this.encodedIndex = lastIndex;
        this.writtenIndex = lastIndex;
        this.nextPos = nextPos;
        this.segmentEnded = false;
        index.ring.truncateFrom(lastIndex + 1);
    }

    LogStore store() {
        return store;
    }

    long lastIndex() {
        return lastIndex;
    }

    int lastTerm() {
        return lastTerm;
    }

    long writtenIndex() {
        return writtenIndex;
    }

    long nextPos() {
        return nextPos;
    }

    long writeCount() {
        return writeCount;
    }

    long writtenBytes() {
        return writtenBytes;
    }

    /** Writes that completed but wait behind an earlier, unfinished one (for tests and metrics). */
    int completedBehindGap() {
        int n = 0;
        for (WriteTask t : inFlight) {
            if (t.done) {
                n++;
            }
        }
        return n;
    }

    /** Nothing appended is waiting to be written or being written. */
    boolean isIdle() {
        return pending.isEmpty() && inFlight.isEmpty();
    }

    void checkAppendable(List<LogItem> items) {
        long expect = lastIndex + 1;
        int term = lastTerm;
        long maxItem = store.maxItemBytes();
        for (int i = 0, n = items.size(); i < n; i++) {
            LogItem it = items.get(i);
            if (it.getIndex() != expect) {
                throw new IllegalArgumentException(store.name() + ": appended " + it + " but the next index is " + expect);
            }
            if (it.getPrevLogTerm() != term || it.getTerm() < term) {
                throw new IllegalArgumentException(store.name() + ": appended " + it + " with prevLogTerm "
                        + it.getPrevLogTerm() + " after an item of term " + term);
            }
            int size = LogItemCodec.sizeOf(LogItemCodec.encodedSizeOf(it.getHeader()), LogItemCodec.encodedSizeOf(it.getBody()));
            if (size > maxItem) {
                throw new IllegalArgumentException(store.name() + ": " + it + " takes " + size
                        + " bytes, more than a segment can hold (" + maxItem + "); raise segmentBytes");
            }
            term = it.getTerm();
            expect++;
        }
    }


    /** Takes checked items: records them and issues their writes now. */
    void append(List<LogItem> items) {
        TermIndex terms = store.terms();
        for (int i = 0, n = items.size(); i < n; i++) {
            LogItem it = items.get(i);
            pending.add(it);
            terms.onAppend(it.getIndex(), it.getTerm());
            lastTerm = it.getTerm();
        }
        lastIndex = items.get(items.size() - 1).getIndex();
        encodeAndSubmit();
    }

    /**
     * Encodes pending items into as few writes as the segment and {@code maxWriteBytes} allow, and
     * issues them. Anything thrown while sizing or encoding them (an {@code Encodable} of the state
     * machine whose {@code encodedSize()} differs from what it writes, the direct memory running
     * out) fails the store: see {@link #onEncodeFailed}.
     */
    void encodeAndSubmit() {
        while (!pending.isEmpty() && !store.isFailed()) {
            // (what the catch needs; the try costs nothing while nothing throws)
            long pos = nextPos;
            ByteBuffer buf = null;
            LogSegment seg;
            int count = 0;
            int length;
            try {
                seg = segments.current();
                long room = seg == null ? -1 : seg.endPos() - nextPos;
                // How many items fit in this segment and in one write.
                int bytes = 0;
                boolean segmentFull = false;
                for (Iterator<LogItem> it = pending.iterator(); it.hasNext(); ) {
                    LogItem item = it.next();
                    int size = LogItemCodec.sizeOf(LogItemCodec.encodedSizeOf(item.getHeader()),
                            LogItemCodec.encodedSizeOf(item.getBody()));
                    if (bytes + size > room) {
                        segmentFull = true;
                        break;
                    }
                    if (count > 0 && bytes + size > maxWriteBytes) {
                        break;
                    }
                    bytes += size;
                    count++;
                }
                if (count == 0) {
                    if (!rollSegment(seg, room)) {
                        return;  // resumed by the spare-ready callback
                    }
                    continue;
                }
                boolean withMarker = segmentFull && !segmentEnded && room - bytes >= LogItemCodec.HEADER_BYTES;
                length = bytes + (withMarker ? LogItemCodec.HEADER_BYTES : 0);
                buf = pool.borrow(length);
                for (int i = 0; i < count; i++) {
                    LogItem item = pending.poll();
                    index.ring.add(nextPos);
                    if (seg.firstIndex < 0) {
                        seg.firstIndex = item.getIndex();
                    }
                    int start = buf.position();
                    codec.encode(item, LogItemCodec.encodedSizeOf(item.getHeader()), LogItemCodec.encodedSizeOf(item.getBody()), buf);
                    nextPos += buf.position() - start;
                    encodedIndex = item.getIndex();
                }
                if (withMarker) {
                    codec.encodeSegmentEnd(encodedIndex + 1, buf);
                    nextPos += LogItemCodec.HEADER_BYTES;
                    segmentEnded = true;
                }
            } catch (Throwable e) {
                onEncodeFailed(e, pos, buf);
                return;
            }
            submit(new WriteTask(this, seg, pos, buf, length, encodedIndex, count));
        }
        index.maybeFlush();
    }

    /**
     * Sizing or encoding items failed before their write was issued. The store cannot go on past a
     * hole in the log, so it fails; the log is cut back to the last item whose write was issued, so
     * {@link #lastIndex()} says which of the items appended are not written (and never will be).
     * {@link LogStore#append} throws the failure; when the items waited for a spare segment (no
     * caller), raft hears of it through the store's failure listener. Nothing is left pending, and
     * a failed store's close does not wait for anything. Dispatcher thread.
     */
    private void onEncodeFailed(Throwable e, long pos, ByteBuffer buf) {
        if (buf != null) {
            pool.release(buf);
        }
        WriteTask lastIssued = inFlight.peekLast();
        long issued = lastIssued != null ? lastIssued.lastIndex : writtenIndex;
        long firstLost = issued + 1;
        LogSegment seg = segments.current();
        pending.clear();
        index.ring.truncateFrom(firstLost);
        if (seg != null && seg.firstIndex >= firstLost) {
            seg.firstIndex = -1;
        }
        nextPos = pos;
        encodedIndex = issued;
        lastIndex = issued;
        store.terms().truncateFrom(firstLost);
        lastTerm = store.termOf(issued);
        store.fail(new LogStoreFailedException(store.name() + ": encoding the items from index " + firstLost + " for "
                + (seg != null ? seg.path() : store.config().dir().resolve("log")) + " failed (" + e + "); they were"
                + " not written and the store refuses further appends. "
                + (e instanceof OutOfMemoryError ? "Give the JVM more direct memory (-XX:MaxDirectMemorySize) or lower"
                + " the store's bufferPoolBytes and maxWriteBytes"
                : "An entry whose encode() writes other than its encodedSize() bytes (or throws) is a bug in the state"
                + " machine's codec: fix it") + ", then restart the group or its node", e));
    }

    /** Moves to the next segment, ending the current one with a marker. False when no spare is ready yet. */
    private boolean rollSegment(LogSegment seg, long room) {
        if (!segments.hasSpare()) {
            segments.needSpare();
            return false;
        }
        if (seg != null && !segmentEnded && room >= LogItemCodec.HEADER_BYTES) {
            ByteBuffer buf = pool.borrow(LogItemCodec.HEADER_BYTES);
            codec.encodeSegmentEnd(encodedIndex + 1, buf);
            submit(new WriteTask(this, seg, nextPos, buf, LogItemCodec.HEADER_BYTES, encodedIndex, 0));
        }
        LogSegment next = segments.roll();
        nextPos = next.startPos;
        segmentEnded = false;
        return true;
    }

    private void submit(WriteTask t) {
        t.segment.ioPending++;
        inFlight.add(t);
        writeCount++;
        writtenBytes += t.length;
        t.submit(store);
    }

    /** A write came back (any order). Dispatcher thread. */
    void onWriteComplete(WriteTask t, Throwable error) {
        if (error != null) {
            onWriteFailed(t, error);
            return;
        }
        t.done = true;
        // a retried write that now succeeds ends the run (a first attempt that succeeds may have been
        // written before the disk filled, while the others still fail)
        if (t.attempts > 1 && writeFailures.inRun()) {
            log.info("{}: writes succeed again after {} failed attempts", store.name(), writeFailures.endRun());
        }
        long before = writtenIndex;
        WriteTask head;
        while ((head = inFlight.peekFirst()) != null && head.done) {
            inFlight.pollFirst();
            if (head.lastIndex > writtenIndex) {
                writtenIndex = head.lastIndex;
            }
            head.segment.ioPending--;
            if (!journaled) {
                fsync.markDirty(head.segment);
            }
            pool.release(head.buffer);
        }
        if (writtenIndex > before) {
            // a write the node's journal reported is durable already: the journal fsynced it
            if (!syncForce || journaled) {
                store.onPersisted(writtenIndex);
            }
        }
        fsync.kick();
        store.checkIdle();
    }

    private void onWriteFailed(WriteTask t, Throwable error) {
        if (store.isFailed()) {
            return;
        }
        LogJournalFailedException journalFailure = LogJournalFailedException.in(error);
        if (journalFailure != null) {
            // a failed journal refuses every record for good: retrying would only delay the failure
            // (5 retries, about 310 ms) while the group's writers wait
            store.fail(new LogStoreFailedException(store.name() + ": " + t + " was refused by the node's log journal,"
                    + " not retried: " + journalFailure.getMessage() + ". Items from index " + (writtenIndex + 1)
                    + " on are not persisted", error));
            return;
        }
        int limit = store.config().writeRetryLimit();
        if (t.attempts > limit) {
            store.fail(new LogStoreFailedException(store.name() + ": " + t + " in " + store.config().dir().resolve("log")
                    + " failed " + t.attempts + " times (" + error + "); giving up. Items from index " + (writtenIndex + 1)
                    + " on are not persisted. Check the disk (space, kernel log) and restart the group or its node", error));
            return;
        }
        long delay = store.backoffMillis(t.attempts);
        // Every write in flight meets the same full disk: warn (with the stack trace) for the first
        // failure, then once per interval with a count, not once per write and attempt.
        if (writeFailures.occurred(System.nanoTime())) {
            if (writeFailures.isFirstOfRun()) {
                log.warn("{}: {} failed (attempt {} of {}); retrying in {} ms; the other writes in flight retry"
                        + " too", store.name(), t, t.attempts, limit + 1, delay, error);
            } else {
                log.warn("{}: writes still failing, {} more failed attempts in the last {} ms, latest: {} (attempt {}"
                                + " of {}): {}", store.name(), writeFailures.notLoggedBefore() + 1,
                        TimeUnit.NANOSECONDS.toMillis(writeFailures.nanosSinceLastLogged()), t, t.attempts,
                        limit + 1, error.toString());
            }
        }
        store.runLater(delay, () -> {
            if (!store.isFailed()) {
                t.submit(store);
            }
        });
    }

    /** Drops pending (unwritten) items from {@code index} on; the caller has waited for the writes in flight. */
    void truncateTo(long index, int termBefore, long newNextPos) {
        if (!inFlight.isEmpty()) {
            ImpossibleStates.report("{}: truncating with {} writes in flight", store.name(), inFlight.size());
        }
        pending.removeIf(it -> it.getIndex() >= index);
        lastIndex = index - 1;
        lastTerm = termBefore;
        encodedIndex = Math.min(encodedIndex, lastIndex);
        writtenIndex = Math.min(writtenIndex, lastIndex);
        nextPos = newNextPos;
        segmentEnded = false;
    }
}
