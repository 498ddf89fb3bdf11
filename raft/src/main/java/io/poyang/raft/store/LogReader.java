package io.poyang.raft.store;

import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FrameCallResult;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Reads items from disk ({@link LogStore#load}): finds the start position (in memory, or in the
 * index file), registers as a reader of the segment so it is not deleted underneath, then reads
 * and checks the items on an I/O thread (CRCs and the index chain), so parsing costs the
 * dispatcher nothing.
 */
final class LogReader extends FiberFrame<List<LogItem>> {

    private final LogStore store;
    private final long startIndex;
    private final int maxItems;
    private final int maxBytes;
    private LogSegment segment;
    /** {@link LogStore#truncations()} when the read started. */
    private long truncationsAtStart;

    LogReader(LogStore store, long startIndex, int maxItems, int maxBytes) {
        this.store = store;
        this.startIndex = startIndex;
        this.maxItems = maxItems;
        this.maxBytes = maxBytes;
    }

    @Override
    public FrameCallResult execute(Object input) {
        store.checkReady();
        truncationsAtStart = store.truncations();
        if (maxItems < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("load needs maxItems and maxBytes of at least 1");
        }
        if (startIndex < store.firstIndex()) {
            throw new IllegalArgumentException(store.name() + ": index " + startIndex + " is below the first index "
                    + store.firstIndex() + " (it is in a snapshot)");
        }
        if (startIndex > store.writtenIndex()) {
            return Fiber.frameReturn(Collections.<LogItem>emptyList());
        }
        long pos = store.index().positionInMemory(startIndex);
        if (pos >= 0) {
            return afterPosition(pos);
        }
        return store.group().executeBlocking("index-read", store.ioExecutor(),
                () -> store.index().readPositionBlocking(startIndex)).await(this::afterPosition);
    }

    private FrameCallResult afterPosition(Long pos) {
        LogSegment s = store.segments().find(pos);
        if (s == null) {
            throw new IllegalArgumentException(store.name() + ": index " + startIndex + " (position " + pos
                    + ") is no longer in the log (deleted below the first index " + store.firstIndex() + ")");
        }
        segment = s;
        s.readers++;
        long lastIndex = Math.min(store.writtenIndex(), startIndex + maxItems - 1);
        return store.group().executeBlocking("log-read", store.ioExecutor(), () -> readBlocking(s, pos, lastIndex))
                .await(this::afterRead);
    }

    private FrameCallResult afterRead(List<LogItem> items) {
        return Fiber.frameReturn(items);
    }

    /**
     * Damaged data fails the store (once; see {@link LogStore#onReadCorrupted}), unless a truncation
     * or reset overlapped the read: it may have zeroed or rewritten what was read, which is no
     * damage. The caller gets the {@link LogCorruptedException} either way.
     */
    @Override
    protected FrameCallResult handle(Throwable ex) throws Throwable {
        if (ex instanceof LogCorruptedException && !store.isTruncating()
                && store.truncations() == truncationsAtStart) {
            store.onReadCorrupted(startIndex, (LogCorruptedException) ex);
        }
        throw ex;
    }

    @Override
    protected FrameCallResult doFinally() {
        if (segment != null) {
            store.releaseReader(segment);
            segment = null;
        }
        return Fiber.frameReturn();
    }

    /** I/O thread. */
    private List<LogItem> readBlocking(LogSegment s, long pos, long lastIndex) throws IOException {
        LogItemCodec codec = new LogItemCodec();
        LogItemCodec.ItemHeader h = new LogItemCodec.ItemHeader();
        long want = Math.min((long) maxBytes + LogItemCodec.HEADER_BYTES, s.endPos() - pos);
        ByteBuffer buf = ByteBuffer.allocate((int) Math.max(LogItemCodec.HEADER_BYTES, Math.min(want, 64L << 20)));
        fill(s, pos, buf);
        List<LogItem> items = new ArrayList<>();
        long expect = startIndex;
        int off = 0;
        int bytes = 0;
        while (expect <= lastIndex && off + LogItemCodec.HEADER_BYTES <= buf.limit()) {
            LogItemCodec.HeaderCheck c = codec.parseHeader(buf, off, h);
            if (c == LogItemCodec.HeaderCheck.SEGMENT_END) {
                break;
            }
            if (c != LogItemCodec.HeaderCheck.ITEM) {
                throw new LogCorruptedException(s.path(), pos - s.startPos + off, "reading index " + expect + ": "
                        + (c == LogItemCodec.HeaderCheck.BAD ? h.problem : "no item where one was written"));
            }
            if (!items.isEmpty() && bytes + h.totalBytes > maxBytes) {
                break;
            }
            if (off + h.totalBytes > buf.limit()) {
                if (!items.isEmpty()) {
                    break;
                }
                // The first item is bigger than the read: read exactly it.
                buf = ByteBuffer.allocate(h.totalBytes);
                fill(s, pos, buf);
                off = 0;
                if (buf.limit() < h.totalBytes) {
                    throw new LogCorruptedException(s.path(), pos - s.startPos, "item at index " + expect
                            + " runs past the end of the file");
                }
            }
            String problem = codec.checkParts(buf, off, h);
            if (problem == null && h.index != expect) {
                problem = "found index " + h.index + " where index " + expect + " belongs";
            }
            if (problem != null) {
                throw new LogCorruptedException(s.path(), pos - s.startPos + off, "reading index " + expect + ": " + problem);
            }
            items.add(LogItemCodec.toItem(buf, off, h));
            off += h.totalBytes;
            bytes += h.totalBytes;
            expect++;
        }
        return items;
    }

    private static void fill(LogSegment s, long pos, ByteBuffer buf) throws IOException {
        buf.clear();
        int n = s.file.readFully(buf, pos - s.startPos);
        buf.limit(Math.max(0, n)).position(0);
    }

    @Override
    public String toString() {
        return "LogReader[" + startIndex + "]";
    }
}
