package io.poyang.raft.store;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** Tests: a journal record of given bytes for a place in a segment; {@link #done} completes when journalled. */
final class BytesJournalRecord extends JournalRecord {
    private final LogSegment segment;
    private final long position;
    private final byte[] bytes;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    BytesJournalRecord(LogSegment segment, long position, byte[] bytes) {
        this.segment = segment;
        this.position = position;
        this.bytes = bytes;
    }

    /** {@code length} bytes of {@code fill}. */
    static BytesJournalRecord filled(LogSegment segment, long position, int length, char fill) {
        byte[] b = new byte[length];
        java.util.Arrays.fill(b, (byte) fill);
        return new BytesJournalRecord(segment, position, b);
    }

    ByteBuffer bytes() {
        return ByteBuffer.wrap(bytes);
    }

    @Override
    LogSegment target() {
        return segment;
    }

    @Override
    long filePosition() {
        return position;
    }

    @Override
    ByteBuffer payload() {
        return ByteBuffer.wrap(bytes);
    }

    @Override
    int length() {
        return bytes.length;
    }

    @Override
    void journaled(Throwable error) {
        if (error == null) {
            done.complete(null);
        } else {
            done.completeExceptionally(error);
        }
    }
}
