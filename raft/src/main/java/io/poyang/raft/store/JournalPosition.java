package io.poyang.raft.store;

/** A place in the journal: a file, a byte offset in it, and the sequence number the record there must carry. */
final class JournalPosition {
    final int file;
    final long offset;
    final long seq;

    JournalPosition(int file, long offset, long seq) {
        this.file = file;
        this.offset = offset;
        this.seq = seq;
    }

    @Override
    public String toString() {
        return JournalFormat.fileName(file) + " offset " + offset + " (record " + seq + ")";
    }
}
