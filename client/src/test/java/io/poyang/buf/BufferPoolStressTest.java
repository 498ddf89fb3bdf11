package io.poyang.buf;

import io.poyang.common.Timestamp;
import io.poyang.testutil.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A million borrow/release cycles across two threads. Every borrowed buffer carries a stamp while
 * it is held and a "free" mark once released, so a buffer handed to two holders at once, or
 * handed out while still held, is caught at once; at the end every buffer ever handed out must be
 * either pooled exactly once or counted as dropped over a cap.
 */
class BufferPoolStressTest {

    private static final long FREE = -1L;
    private static final int[] SIZES = {1, 64, 65, 200, 1000, 1500, 4096, 5000};
    private static final ByteBuffer POISON = ByteBuffer.allocate(0);

    /** Marks a freshly borrowed buffer as held, after checking nobody else holds it. */
    private static void stampBorrowed(ByteBuffer b, long stamp) {
        long mark = b.getLong(0);
        if (mark != 0 && mark != FREE) {
            throw new AssertionError("buffer handed out while still held (stamp " + mark + ")");
        }
        b.putLong(0, stamp);
        b.putLong(8, ~stamp);
    }

    /** Checks the stamp survived while held and marks the buffer free just before releasing it. */
    private static void checkAndMarkFree(ByteBuffer b) {
        long stamp = b.getLong(0);
        if (stamp <= 0 || b.getLong(8) != ~stamp) {
            throw new AssertionError("buffer changed while held: stamp " + stamp);
        }
        b.putLong(0, FREE);
    }

    private static Set<ByteBuffer> identitySet() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    @Test
    void ownerBorrowsAndAForeignThreadReleasesAMillionTimes() throws Exception {
        int cycles = 1_000_000;
        long maxLocal = 256 * 1024;
        SharedBufferPool shared = new SharedBufferPool(false, 1024 * 1024);
        Timestamp clock = new Timestamp();
        ThreadBufferPool pool = new ThreadBufferPool(Thread.currentThread(), clock, maxLocal, shared,
                TimeUnit.HOURS.toNanos(1));
        BlockingQueue<ByteBuffer> handoff = new ArrayBlockingQueue<>(128);
        AtomicReference<Throwable> foreignFailure = new AtomicReference<>();
        long[] foreignReleases = new long[1];
        Thread releaser = new Thread(() -> {
            try {
                for (; ; ) {
                    ByteBuffer b = handoff.take();
                    if (b == POISON) {
                        return;
                    }
                    checkAndMarkFree(b);
                    pool.release(b);
                    foreignReleases[0]++;
                    if (shared.pooledBytes() > shared.maxPooledBytes()) {
                        throw new AssertionError("shared cap passed: " + shared.pooledBytes());
                    }
                }
            } catch (Throwable t) {
                foreignFailure.set(t);
            }
        }, "foreign-releaser");
        releaser.start();

        Set<ByteBuffer> everBorrowed = identitySet();
        Random random = new Random(7);
        long ownerReleases = 0;
        for (int i = 1; i <= cycles; i++) {
            ByteBuffer b = pool.borrow(SIZES[random.nextInt(SIZES.length)]);
            everBorrowed.add(b);
            stampBorrowed(b, i);
            if (random.nextInt(4) == 0) {
                checkAndMarkFree(b);
                pool.release(b);
                ownerReleases++;
            } else if (!handoff.offer(b, 10, TimeUnit.SECONDS)) {
                fail("the releaser stopped taking buffers: " + foreignFailure.get());
            }
            if ((i & 1023) == 0) {
                clock.refresh();
                pool.maintain();
                assertTrue(pool.localPooledBytes() <= maxLocal, "local cap passed");
                assertTrue(pool.foreignReturnBytes() <= maxLocal, "foreign return queue over its bound");
                if (foreignFailure.get() != null) {
                    break;
                }
            }
        }
        handoff.put(POISON);
        Await.join(releaser, 30_000);
        if (foreignFailure.get() != null) {
            throw new AssertionError("foreign releaser failed", foreignFailure.get());
        }
        assertEquals(cycles, ownerReleases + foreignReleases[0], "every borrowed buffer was released once");

        int pooled = pool.checkIntegrity(); // drains foreign returns, fails on a buffer pooled twice
        assertEquals(everBorrowed.size(), pooled + shared.droppedCount(),
                "every buffer ever handed out is pooled once or was dropped over a cap: none lost");
        assertTrue(pool.localPooledBytes() <= maxLocal);
        assertTrue(shared.pooledBytes() <= shared.maxPooledBytes());
        // The caps hold more than the ~130 buffers in flight at once, so buffers are reused, not dropped.
        assertTrue(pool.allocateCount() < cycles / 1000, "the pool reuses buffers: " + pool.allocateCount()
                + " allocations for " + cycles + " borrows");
    }

    @Test
    void ownerAndForeignBorrowersShareOnePoolForAMillionCycles() throws Exception {
        int cyclesPerThread = 500_000;
        long maxLocal = 32 * 1024;
        SharedBufferPool shared = new SharedBufferPool(true, 64 * 1024);
        Timestamp clock = new Timestamp();
        ThreadBufferPool pool = new ThreadBufferPool(Thread.currentThread(), clock, maxLocal, shared,
                TimeUnit.HOURS.toNanos(1));
        AtomicReference<Throwable> foreignFailure = new AtomicReference<>();
        Set<ByteBuffer> foreignBorrowed = identitySet();
        Thread foreign = new Thread(() -> {
            try {
                holdAndRelease(pool, cyclesPerThread, new Random(11), foreignBorrowed, 1L << 40, shared, maxLocal);
            } catch (Throwable t) {
                foreignFailure.set(t);
            }
        }, "foreign-borrower");
        foreign.start();
        Set<ByteBuffer> ownerBorrowed = identitySet();
        holdAndRelease(pool, cyclesPerThread, new Random(13), ownerBorrowed, 1L, shared, maxLocal);
        // The owner keeps taking back what the foreign thread releases until it is done.
        while (foreign.isAlive()) {
            pool.maintain();
            Thread.yield();
        }
        Await.join(foreign, 30_000);
        if (foreignFailure.get() != null) {
            throw new AssertionError("foreign borrower failed", foreignFailure.get());
        }
        Set<ByteBuffer> all = identitySet();
        all.addAll(ownerBorrowed);
        all.addAll(foreignBorrowed);
        int pooled = pool.checkIntegrity();
        assertEquals(all.size(), pooled + shared.droppedCount(),
                "every buffer ever handed out is pooled once or was dropped over a cap: none lost");
        assertTrue(pool.localPooledBytes() <= maxLocal);
        assertTrue(shared.pooledBytes() <= shared.maxPooledBytes());
    }

    /** Borrows, holds up to 16 buffers at a time, releases them in random order. */
    private static void holdAndRelease(ThreadBufferPool pool, int cycles, Random random, Set<ByteBuffer> seen,
                                       long stampBase, SharedBufferPool shared, long maxLocal) {
        boolean owner = Thread.currentThread() == pool.owner();
        List<ByteBuffer> held = new ArrayList<>();
        for (int i = 1; i <= cycles; i++) {
            ByteBuffer b = pool.borrow(SIZES[random.nextInt(SIZES.length)]);
            if (!b.isDirect()) {
                throw new AssertionError("a direct pool handed out a heap buffer");
            }
            seen.add(b);
            stampBorrowed(b, stampBase + i);
            held.add(b);
            while (held.size() > 16 || (!held.isEmpty() && random.nextInt(3) == 0)) {
                ByteBuffer r = held.remove(random.nextInt(held.size()));
                checkAndMarkFree(r);
                pool.release(r);
            }
            if ((i & 1023) == 0) {
                if (shared.pooledBytes() > shared.maxPooledBytes()) {
                    throw new AssertionError("shared cap passed: " + shared.pooledBytes());
                }
                if (pool.foreignReturnBytes() > maxLocal) {
                    throw new AssertionError("foreign return queue over its bound: " + pool.foreignReturnBytes());
                }
                if (owner) {
                    pool.maintain();
                    if (pool.localPooledBytes() > maxLocal) {
                        throw new AssertionError("local cap passed: " + pool.localPooledBytes());
                    }
                }
            }
        }
        for (ByteBuffer r : held) {
            checkAndMarkFree(r);
            pool.release(r);
        }
    }
}
