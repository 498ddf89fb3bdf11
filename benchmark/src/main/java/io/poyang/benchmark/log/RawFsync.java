package io.poyang.benchmark.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/** This machine's raw fsync rate: one 4 KiB positional write and one fdatasync, in a loop. */
public final class RawFsync {

    private static final long FILE_BYTES = 64L << 20;

    private RawFsync() {
    }

    /** Loops for {@code millis} on a preallocated (zero-filled) file, which is deleted after; returns fsyncs per second. */
    public static double rate(Path file, long millis) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long p = 0; p < FILE_BYTES; p += zeros.capacity()) {
                zeros.clear();
                ch.write(zeros, p);
            }
            ch.force(true);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            long n = 0;
            long pos = 0;
            long start = System.nanoTime();
            long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
            long now;
            while ((now = System.nanoTime()) < end) {
                b.clear();
                ch.write(b, pos);
                ch.force(false);
                n++;
                pos = (pos + 4096) % FILE_BYTES;
            }
            return n / ((now - start) / 1e9);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
