package io.poyang.raft.server;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Holds a state machine's snapshot read chunk by chunk: each read of the snapshot's stream waits
 * for a permit the test gives ({@link #letThrough}), as a slow read of a large snapshot would take
 * its time per chunk. Set {@link #wrap} as the machine's {@code snapshotStream}. The stream below is
 * read through a buffer larger than a chunk, so each of its reads returns (at most) one chunk of the
 * data file: one permit, one chunk. Records how the stream ended: at its end, or with an error (a
 * read abandoned by a stop). {@link #open()} lets every read through, for the end of a test.
 */
final class SnapshotReadGate {

    /** Larger than any chunk of a snapshot data file (SnapshotFiles cuts them at 64 KiB). */
    private static final int BUFFER_BYTES = 128 * 1024;
    /** How long a held read waits at most before it fails (a test that never lets it through). */
    private static final long HOLD_SECONDS = 120;

    private final Semaphore permits = new Semaphore(0);
    private final AtomicInteger chunksRead = new AtomicInteger();
    private volatile boolean waiting;
    private volatile boolean ended;
    private volatile Throwable endedWith;

    /** What the state machine reads instead of {@code chunks}. */
    InputStream wrap(InputStream chunks) {
        return new BufferedInputStream(new FilterInputStream(chunks) {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                pass();
                try {
                    int n = super.read(b, off, len);
                    if (n < 0) {
                        ended = true;
                    } else {
                        chunksRead.incrementAndGet();
                    }
                    return n;
                } catch (IOException | RuntimeException e) {
                    endedWith = e;
                    ended = true;
                    throw e;
                }
            }
        }, BUFFER_BYTES);
    }

    private void pass() throws IOException {
        waiting = true;
        try {
            if (!permits.tryAcquire(HOLD_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("the test did not let the next snapshot chunk through within " + HOLD_SECONDS
                        + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("held snapshot read interrupted");
        } finally {
            waiting = false;
        }
    }

    /** Lets {@code chunks} more reads through. */
    void letThrough(int chunks) {
        permits.release(chunks);
    }

    /** Lets every read through from now on. */
    void open() {
        permits.release(Integer.MAX_VALUE / 2);
    }

    /** Whether a read waits for a permit now. */
    boolean waiting() {
        return waiting && permits.availablePermits() == 0;
    }

    /** Chunks read so far. */
    int chunksRead() {
        return chunksRead.get();
    }

    /** Whether the stream ended: read to its end, or failed. */
    boolean ended() {
        return ended;
    }

    /** The error the stream ended with, or null. */
    Throwable endedWith() {
        return endedWith;
    }

    /**
     * Lets one chunk through and waits until the read holds before the next one or has ended.
     * Returns whether it has ended.
     */
    boolean stepOneChunk() {
        int before = chunksRead();
        letThrough(1);
        RaftCluster.waitFor("the snapshot read to take the chunk let through",
                () -> ended() || (chunksRead() > before && waiting()));
        return ended();
    }
}
