package io.poyang.buf;

import io.poyang.common.ManualTimeSource;
import io.poyang.common.Timestamp;
import io.poyang.testutil.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ThreadBufferPoolTest {

    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final ManualTimeSource time = new ManualTimeSource();
    private final Timestamp clock = new Timestamp(time);

    private ThreadBufferPool pool(long maxLocal, SharedBufferPool shared) {
        return new ThreadBufferPool(Thread.currentThread(), clock, maxLocal, shared, IDLE_NANOS);
    }

    /** Runs the action on a new thread and waits for it, rethrowing what it threw. */
    private static void onOtherThread(Runnable action) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                action.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "foreign");
        t.start();
        Await.join(t, 10_000);
        if (failure.get() instanceof Exception) {
            throw (Exception) failure.get();
        }
        if (failure.get() != null) {
            throw (Error) failure.get();
        }
    }

    @Test
    void borrowRoundsUpToTheSizeClassAndReusesReleasedBuffers() {
        ThreadBufferPool p = pool(1 << 20, new SharedBufferPool(false, 1 << 20));
        ByteBuffer b = p.borrow(100);
        assertEquals(128, b.capacity());
        assertEquals(0, b.position());
        assertEquals(128, b.limit());
        assertFalse(b.isDirect());
        b.putInt(7).limit(50);
        p.release(b);
        ByteBuffer again = p.borrow(120);
        assertSame(b, again, "the owner gets its last released buffer back");
        assertEquals(0, again.position(), "released buffers come back cleared");
        assertEquals(128, again.limit());
        assertEquals(2, p.borrowCount());
        assertEquals(1, p.allocateCount());
        assertEquals(1, p.releaseCount());
        assertThrows(IllegalArgumentException.class, () -> p.borrow(-1));
    }

    @Test
    void directPoolsHandOutDirectBuffersAndRefuseHeapOnes() {
        ThreadBufferPool p = pool(1 << 20, new SharedBufferPool(true, 1 << 20));
        ByteBuffer b = p.borrow(64);
        assertTrue(b.isDirect() && p.isDirect());
        p.release(ByteBuffer.allocate(64)); // a heap buffer is not one of ours: dropped
        assertEquals(0, p.localPooledBytes());
        p.release(b);
        assertEquals(64, p.localPooledBytes());
        assertSame(b, p.borrow(64));
    }

    @Test
    void buffersOverTheLargestClassAreNeitherRoundedNorPooled() {
        ThreadBufferPool p = pool(64 << 20, new SharedBufferPool(false, 64 << 20));
        ByteBuffer big = p.borrow(BufferSizeClasses.MAX_SIZE + 1);
        assertEquals(BufferSizeClasses.MAX_SIZE + 1, big.capacity());
        p.release(big);
        assertEquals(0, p.localPooledBytes());
        assertEquals(0, p.shared().pooledBytes());
        p.release(ByteBuffer.allocate(100)); // not a class size
        p.release(ByteBuffer.allocate(64).asReadOnlyBuffer());
        assertEquals(0, p.localPooledBytes());
        assertEquals(0, p.checkIntegrity());
    }

    @Test
    void localOverflowSpillsToTheSharedPoolAndBothCapsHold() {
        SharedBufferPool shared = new SharedBufferPool(false, 4096);
        ThreadBufferPool p = pool(1024, shared);
        List<ByteBuffer> out = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            out.add(p.borrow(256));
        }
        for (ByteBuffer b : out) {
            p.release(b);
            assertTrue(p.localPooledBytes() <= 1024);
            assertTrue(shared.pooledBytes() <= 4096);
        }
        assertEquals(1024, p.localPooledBytes());
        assertEquals(4096, shared.pooledBytes());
        assertEquals(100 - 4 - 16, shared.droppedCount());
        assertEquals(20, p.checkIntegrity());
        // Borrowing drains the local level first, then takes from the shared one.
        for (int i = 0; i < 20; i++) {
            p.borrow(256);
        }
        assertEquals(0, p.localPooledBytes());
        assertEquals(0, shared.pooledBytes());
        assertEquals(100, p.allocateCount());
    }

    @Test
    void zeroCapsPoolNothing() {
        SharedBufferPool shared = new SharedBufferPool(false, 0);
        ThreadBufferPool p = pool(0, shared);
        p.release(p.borrow(64));
        assertEquals(0, p.localPooledBytes());
        assertEquals(0, shared.pooledBytes());
        assertEquals(1, shared.droppedCount());
        assertThrows(IllegalArgumentException.class, () -> new SharedBufferPool(false, -1));
        assertThrows(IllegalArgumentException.class, () -> pool(-1, shared));
    }

    @Test
    void aBufferReleasedByAnotherThreadGoesBackToTheOwnersLocalPool() throws Exception {
        SharedBufferPool shared = new SharedBufferPool(false, 1 << 20);
        ThreadBufferPool p = pool(1 << 20, shared);
        ByteBuffer b = p.borrow(1000);
        onOtherThread(() -> p.release(b));
        assertEquals(1024, p.foreignReturnBytes());
        assertEquals(0, p.localPooledBytes(), "a foreign thread never touches the local level");
        assertEquals(0, shared.pooledBytes());
        assertSame(b, p.borrow(1000), "the owner takes it back on its next borrow");
        assertEquals(0, p.foreignReturnBytes());
        assertEquals(1, p.releaseCount());
    }

    @Test
    void foreignReturnsAreBoundedByTheLocalCapThenGoToTheSharedPool() throws Exception {
        SharedBufferPool shared = new SharedBufferPool(false, 1 << 20);
        ThreadBufferPool p = pool(4096, shared);
        List<ByteBuffer> out = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            out.add(p.borrow(1024));
        }
        // The owner is busy: 64 KiB come back from another thread while it does not drain.
        onOtherThread(() -> out.forEach(p::release));
        assertEquals(4096, p.foreignReturnBytes());
        assertEquals(60 * 1024, shared.pooledBytes());
        assertEquals(64, p.checkIntegrity());
        assertEquals(4096, p.localPooledBytes());
    }

    @Test
    void otherThreadsBorrowFromTheSharedPool() throws Exception {
        SharedBufferPool shared = new SharedBufferPool(false, 1 << 20);
        ThreadBufferPool p = pool(0, shared); // no local level: owner releases go to shared
        ByteBuffer b = p.borrow(64);
        p.release(b);
        assertEquals(64, shared.pooledBytes());
        AtomicReference<ByteBuffer> got = new AtomicReference<>();
        onOtherThread(() -> got.set(p.borrow(10)));
        assertSame(b, got.get());
        assertEquals(0, shared.pooledBytes());
        assertEquals(1, p.borrowCount(), "foreign borrows are not counted in the owner's statistics");
    }

    @Test
    void maintainDropsBuffersIdleLongerThanTheIdleTimeFromBothLevels() {
        SharedBufferPool shared = new SharedBufferPool(false, 1 << 20);
        ThreadBufferPool p = pool(512, shared);
        List<ByteBuffer> old = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            old.add(p.borrow(256));
        }
        old.forEach(p::release); // 2 stay local, 4 go to shared
        assertEquals(512, p.localPooledBytes());
        assertEquals(1024, shared.pooledBytes());

        time.advance(30, TimeUnit.SECONDS);
        clock.refresh();
        ByteBuffer fresh = p.borrow(256);
        p.release(fresh); // re-stamped now; local holds [old, fresh]
        p.maintain();
        assertEquals(512, p.localPooledBytes(), "nothing is idle for 60 s yet");

        time.advance(31, TimeUnit.SECONDS);
        clock.refresh();
        p.maintain();
        assertEquals(256, p.localPooledBytes(), "the old local buffer went, the fresh one stays");
        assertEquals(0, shared.pooledBytes());
        assertSame(fresh, p.borrow(256));
        p.release(fresh);

        time.advance(1, TimeUnit.HOURS);
        clock.refresh();
        p.maintain();
        assertEquals(0, p.localPooledBytes());
        assertEquals(0, p.checkIntegrity());
    }

    @Test
    void ownerOnlyMethodsRefuseOtherThreads() throws Exception {
        ThreadBufferPool p = pool(1024, new SharedBufferPool(false, 1024));
        onOtherThread(() -> {
            IllegalStateException e = assertThrows(IllegalStateException.class, p::maintain);
            assertTrue(e.getMessage().contains("owner thread only"), e.getMessage());
            assertThrows(IllegalStateException.class, p::checkIntegrity);
        });
    }

    @Test
    void checkIntegrityCatchesABufferReleasedTwice() {
        ThreadBufferPool p = pool(1 << 20, new SharedBufferPool(false, 1 << 20));
        ByteBuffer b = p.borrow(64);
        ByteBuffer other = p.borrow(64);
        assertNotSame(b, other);
        p.release(b);
        p.release(b);
        IllegalStateException e = assertThrows(IllegalStateException.class, p::checkIntegrity);
        assertTrue(e.getMessage().contains("double release"), e.getMessage());
    }

    @Test
    void unpooledPoolsAllocateExactSizes() {
        ByteBuffer h = UnpooledBufferPool.HEAP.borrow(100);
        assertEquals(100, h.capacity());
        assertFalse(h.isDirect());
        assertTrue(UnpooledBufferPool.DIRECT.borrow(10).isDirect());
        UnpooledBufferPool.HEAP.release(h);
        assertThrows(IllegalArgumentException.class, () -> UnpooledBufferPool.HEAP.borrow(-1));
    }
}
