package io.poyang.raft.store;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/** A file opened through {@link FileIo}: positional reads and writes, and fsync. Thread-safe. */
public interface LogFile extends Closeable {

    Path path();

    /** Writes from {@code src}'s position up to its limit at {@code position}; may write fewer bytes. */
    int write(ByteBuffer src, long position) throws IOException;

    /** Reads into {@code dst} from {@code position}; -1 at the end of the file. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** fsync ({@code metadata} true) or fdatasync ({@code false}). */
    void force(boolean metadata) throws IOException;

    long size() throws IOException;

    /** Sets the length (grows sparsely, or cuts). */
    void setLength(long length) throws IOException;

    /**
     * Whether writes go to the device without the page cache (O_DIRECT): then every write and read
     * must be block-aligned in position, length and buffer address. See {@link FileIo#openExistingForAlignedWrites}.
     */
    default boolean bypassesPageCache() {
        return false;
    }

    /** Writes all of {@code src} at {@code position}, looping over short writes. */
    default void writeFully(ByteBuffer src, long position) throws IOException {
        long pos = position;
        while (src.hasRemaining()) {
            pos += write(src, pos);
        }
    }

    /** Reads until {@code dst} is full or the end of the file; returns the bytes read. */
    default int readFully(ByteBuffer dst, long position) throws IOException {
        int total = 0;
        while (dst.hasRemaining()) {
            int n = read(dst, position + total);
            if (n < 0) {
                break;
            }
            total += n;
        }
        return total;
    }
}
