package io.poyang.raft.store;

import io.poyang.fiber.FiberFuture;

import java.nio.ByteBuffer;
import java.util.function.BiConsumer;

/**
 * One positional write of encoded items (and maybe a segment-end marker) into one segment. Runs on
 * a log I/O thread, or with the node's log journal on the journal's writer thread (which then
 * journals it); its completion comes back to the dispatcher thread through a fiber future. A write
 * is idempotent (same bytes, same position), so a failed one can simply be issued again.
 */
final class WriteTask extends JournalRecord implements Runnable, BiConsumer<Void, Throwable> {

    final LogAppender appender;
    final LogSegment segment;
    final long position;
    final ByteBuffer buffer;
    final int length;
    /** The last item index fully inside this write (or before it, for a bare marker). */
    final long lastIndex;
    /** Items in this write (0 for a bare marker). */
    final int itemCount;
    int attempts;
    boolean done;
    private FiberFuture<Void> future;
    /** With the journal: why the journal's writer could not write into the segment, or null. Journal thread. */
    private Throwable segmentWriteError;

    WriteTask(LogAppender appender, LogSegment segment, long position, ByteBuffer buffer, int length, long lastIndex,
              int itemCount) {
        this.appender = appender;
        this.segment = segment;
        this.position = position;
        this.buffer = buffer;
        this.length = length;
        this.lastIndex = lastIndex;
        this.itemCount = itemCount;
    }

    /**
     * Issues the write. Dispatcher thread. With the node's log journal the journal's writer makes it
     * (into the segment, then as a record) instead of a log I/O thread: one thread hand-off per
     * write instead of two, and the writes of a dispatcher round reach the journal together rather
     * than one by one as the I/O threads end them (with four groups on three nodes, 1.5 µs less CPU
     * per DtKV put; docs/benchmarks.md, thirteenth session).
     */
    void submit(LogStore store) {
        attempts++;
        buffer.limit(length).position(0);
        future = store.group().newFuture("log-write");
        future.whenComplete(this);
        store.logIoStarting();
        LogJournal journal = store.config().journal();
        if (journal != null) {
            segmentWriteError = null;
            journal.append(this);
            return;
        }
        try {
            store.ioExecutor().execute(this);
        } catch (RuntimeException e) {
            store.logIoEnded();
            future.completeExceptionally(e);
        }
    }

    /** Log I/O thread (a node without the journal): the positional write into the segment. */
    @Override
    public void run() {
        Throwable error = null;
        try {
            segment.file.writeFully(buffer, position - segment.startPos);
        } catch (Throwable e) {
            error = e;
        }
        finish(error);
    }

    /**
     * Journal thread: the segment write, before the journal stages the record. A failure is this
     * write's own (retried by the appender like any failed write), not the journal's.
     */
    @Override
    boolean writeIntoTarget() {
        try {
            ByteBuffer b = buffer.duplicate();
            b.limit(length).position(0);
            segment.file.writeFully(b, position - segment.startPos);
            return true;
        } catch (Throwable e) {
            segmentWriteError = e;
            return false;
        }
    }

    /**
     * Journal thread: the journal holds the write durably, or failed, or the segment write failed.
     * Until then the task counts as I/O under way (the journal still reads its buffer).
     */
    @Override
    void journaled(Throwable error) {
        finish(error != null ? error : segmentWriteError);
    }

    private void finish(Throwable error) {
        // the file and the buffer are no longer used: a failed store's close may close them from here on
        appender.store().logIoEnded();
        if (error != null) {
            future.fireCompleteExceptionally(error);
        } else {
            future.fireComplete(null);
        }
    }

    @Override
    LogSegment target() {
        return segment;
    }

    @Override
    long filePosition() {
        return position - segment.startPos;
    }

    @Override
    ByteBuffer payload() {
        return buffer;
    }

    @Override
    int length() {
        return length;
    }

    /** Dispatcher thread. */
    @Override
    public void accept(Void ignored, Throwable error) {
        appender.onWriteComplete(this, error);
    }

    @Override
    public String toString() {
        return "write of " + length + " bytes at position " + position + " (" + segment + ", up to index " + lastIndex + ")";
    }
}
