package io.poyang.buf;

import io.poyang.common.Timestamp;
import io.poyang.testutil.Await;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RefBufferTest {

    private final SharedBufferPool shared = new SharedBufferPool(false, 1 << 20);
    private final ThreadBufferPool pool =
            new ThreadBufferPool(Thread.currentThread(), new Timestamp(), 1 << 20, shared, 60_000_000_000L);

    @Test
    void theLastReleaseReturnsTheBufferToItsPool() {
        RefBuffer r = pool.borrowRef(100);
        assertEquals(1, r.refCount());
        assertEquals(128, r.buffer().capacity());
        assertSame(r, r.retain());
        r.retain(2);
        assertEquals(4, r.refCount());
        assertFalse(r.release());
        assertFalse(r.release());
        assertFalse(r.release());
        assertEquals(0, pool.localPooledBytes(), "still owned by someone");
        assertTrue(r.release());
        assertEquals(0, r.refCount());
        assertEquals(128, pool.localPooledBytes());
        assertSame(r.buffer(), pool.borrow(100));
    }

    @Test
    void doubleReleaseThrowsAndDoesNotPoolTheBufferTwice() {
        RefBuffer r = pool.borrowRef(64);
        assertTrue(r.release());
        IllegalStateException e = assertThrows(IllegalStateException.class, r::release);
        assertTrue(e.getMessage().contains("double release"), e.getMessage());
        assertEquals(0, r.refCount(), "a refused release leaves the count alone");
        assertThrows(IllegalStateException.class, r::retain);
        assertThrows(IllegalStateException.class, () -> r.slice(0, 1));
        assertEquals(1, pool.checkIntegrity());
    }

    @Test
    void retainRefusesNonPositiveCounts() {
        RefBuffer r = pool.borrowRef(64);
        assertThrows(IllegalArgumentException.class, () -> r.retain(0));
        assertThrows(IllegalArgumentException.class, () -> r.retain(-3));
        assertEquals(1, r.refCount());
    }

    @Test
    void slicesShareTheCountAndSeeTheSameBytes() {
        RefBuffer r = pool.borrowRef(64);
        ByteBuffer b = r.buffer();
        for (int i = 0; i < 64; i++) {
            b.put(i, (byte) i);
        }
        b.position(10); // slices use absolute indexes, not the position
        RefBuffer s = r.retainedSlice(8, 16);
        assertEquals(2, r.refCount());
        assertEquals(2, s.refCount());
        ByteBuffer view = s.buffer();
        assertEquals(0, view.position());
        assertEquals(16, view.limit());
        assertEquals(16, view.capacity());
        assertEquals(8, view.get(0));
        assertEquals(23, view.get(15));
        view.put(0, (byte) 99);
        assertEquals(99, b.get(8), "a slice is a view, not a copy");

        RefBuffer inner = s.slice(4, 4); // a slice of a slice: indexes are the slice's own
        assertEquals(12, inner.buffer().get(0));
        assertEquals(2, inner.refCount());

        assertFalse(r.release());
        assertEquals(0, pool.localPooledBytes());
        assertTrue(s.release(), "the slice's owner drops the last reference");
        assertEquals(64, pool.localPooledBytes());
        assertEquals(0, inner.refCount());
    }

    @Test
    void slicesOutsideTheBufferAreRefusedEvenWhenTheEndOverflows() {
        RefBuffer r = pool.borrowRef(64);
        assertThrows(IndexOutOfBoundsException.class, () -> r.slice(-1, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> r.slice(0, -1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.slice(60, 5));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                () -> r.slice(1, Integer.MAX_VALUE));
        assertTrue(e.getMessage().contains("2147483648"), e.getMessage());
        assertEquals(0, r.slice(64, 0).buffer().capacity());
        assertEquals(1, r.refCount(), "failed slices do not retain");
    }

    @Test
    void releaseFromAnotherThreadReturnsTheBufferToTheOwnersPool() throws Exception {
        RefBuffer r = pool.borrowRef(1000);
        r.retain();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                r.release();
                r.release();
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "replicator");
        t.start();
        Await.join(t, 10_000);
        assertEquals(null, failure.get());
        assertEquals(0, r.refCount());
        assertEquals(1024, pool.foreignReturnBytes(), "queued for the owner");
        assertEquals(0, shared.pooledBytes());
        assertSame(r.buffer(), pool.borrow(1000), "the owner reuses it");
    }

    @Test
    void wrappedBuffersBelongToNoPool() {
        ByteBuffer b = ByteBuffer.allocate(64);
        RefBuffer r = RefBuffer.wrap(b);
        assertSame(b, r.buffer());
        assertTrue(r.release());
        assertEquals(0, pool.localPooledBytes());
    }
}
