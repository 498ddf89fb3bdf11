package io.poyang.raft.store;

import io.poyang.fiber.FiberFuture;

import java.nio.ByteBuffer;
import java.util.function.BiConsumer;

/**
 * One positional write of encoded items (and maybe a segment-end marker) into one segment. Runs on
 * an I/O thread; its completion comes back to the dispatcher thread through a fiber future. A write
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

    /** Issues the write. Dispatcher thread. */
    void submit(LogStore store) {
        attempts++;
        buffer.limit(length).position(0);
        future = store.group().newFuture("log-write");
        future.whenComplete(this);
        store.logIoStarting();
        try {
            store.ioExecutor().execute(this);
        } catch (RuntimeException e) {
            store.logIoEnded();
            future.completeExceptionally(e);
        }
    }

    /**
     * I/O thread. With the node's log journal, the write is done once the journal holds it too: the
     * journal reports it ({@link #journaled}), and until then the task counts as I/O under way (the
     * journal still reads its buffer).
     */
    @Override
    public void run() {
        Throwable error = null;
        LogJournal journal = appender.store().config().journal();
        try {
            segment.file.writeFully(buffer, position - segment.startPos);
        } catch (Throwable e) {
            error = e;
        }
        if (error == null && journal != null) {
            journal.append(this);
            return;
        }
        finish(error);
    }

    /** Journal thread: the journal holds the write durably, or failed. */
    @Override
    void journaled(Throwable error) {
        finish(error);
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
