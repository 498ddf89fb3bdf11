package io.poyang.buf;

import io.poyang.common.MpscLinkedQueue;
import io.poyang.common.Timestamp;

import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A two-level pool for one owner thread (an I/O worker, a dispatcher): a lock-free local pool in
 * front of a {@link SharedBufferPool}. The owner borrows and releases without synchronisation.
 *
 * <p>Other threads may release buffers too (a response body built by the I/O worker and released
 * by a raft thread): those go into a lock-free return queue that the owner drains into its local
 * pool on its next borrow or {@link #maintain()}, so a buffer never enters the local pool from
 * a foreign thread. The queue holds at most the local byte cap; when the owner is busy elsewhere
 * and it is full, foreign releases go straight to the shared pool instead of piling up. Other
 * threads may also borrow; they are served by the shared pool.
 *
 * <p>Releases are stamped with the owner's cached {@link Timestamp}, which the owner refreshes
 * (once per event-loop round, say); idle shrinking is only as precise as that clock.
 */
public final class ThreadBufferPool extends BufferPool {

    /** Default idle time after which pooled buffers are dropped: 60 s. */
    public static final long DEFAULT_IDLE_NANOS = 60_000_000_000L;

    private final Thread owner;
    private final Timestamp clock;
    private final LocalBufferPool local;
    private final SharedBufferPool shared;
    private final MpscLinkedQueue<ByteBuffer> foreignReturns = new MpscLinkedQueue<>();
    /** Bytes in {@link #foreignReturns}; bounded by {@link #maxLocalBytes}. */
    private final AtomicLong foreignReturnBytes = new AtomicLong();
    private final long maxLocalBytes;
    private final long idleNanos;

    // Statistics, written by the owner thread only.
    private long borrowCount;
    private long allocateCount;
    private long releaseCount;

    /**
     * @param owner          the thread that owns the local level
     * @param clock          the owner's cached clock, used to stamp releases for idle shrinking
     * @param maxLocalBytes  cap on bytes kept by the local level
     * @param shared         the level behind it; its kind (heap or direct) is this pool's kind
     * @param idleNanos      pooled buffers unused this long are dropped by {@link #maintain()}
     */
    public ThreadBufferPool(Thread owner, Timestamp clock, long maxLocalBytes, SharedBufferPool shared, long idleNanos) {
        if (owner == null || clock == null || shared == null) {
            throw new NullPointerException("owner, clock and shared are required");
        }
        if (idleNanos <= 0) {
            throw new IllegalArgumentException("idleNanos must be positive: " + idleNanos);
        }
        this.owner = owner;
        this.clock = clock;
        this.maxLocalBytes = maxLocalBytes;
        this.local = new LocalBufferPool(maxLocalBytes);
        this.shared = shared;
        this.idleNanos = idleNanos;
    }

    @Override
    public boolean isDirect() {
        return shared.isDirect();
    }

    public Thread owner() {
        return owner;
    }

    @Override
    public ByteBuffer borrow(int minCapacity) {
        if (minCapacity < 0) {
            throw new IllegalArgumentException("negative buffer size " + minCapacity);
        }
        int c = BufferSizeClasses.indexFor(minCapacity);
        if (c < 0) {
            return allocate(minCapacity, shared.isDirect());
        }
        ByteBuffer b = null;
        if (Thread.currentThread() == owner) {
            borrowCount++;
            if (!foreignReturns.isEmpty()) {
                drainForeignReturns();
            }
            b = local.poll(c);
            if (b == null) {
                b = shared.poll(c);
            }
            if (b == null) {
                allocateCount++;
            }
        } else {
            b = shared.poll(c);
        }
        if (b == null) {
            b = allocate(BufferSizeClasses.sizeOf(c), shared.isDirect());
        }
        return b;
    }

    @Override
    public void release(ByteBuffer buffer) {
        int c = BufferSizeClasses.indexOfCapacity(buffer.capacity());
        if (c < 0 || buffer.isDirect() != shared.isDirect() || buffer.isReadOnly()) {
            return; // not one of ours: let the GC have it
        }
        buffer.clear();
        if (Thread.currentThread() == owner) {
            releaseCount++;
            keep(buffer, c);
        } else {
            releaseForeign(buffer, c);
        }
    }

    private void releaseForeign(ByteBuffer buffer, int classIndex) {
        int cap = buffer.capacity();
        for (; ; ) {
            long queued = foreignReturnBytes.get();
            if (queued + cap > maxLocalBytes) {
                // The owner is not draining (busy, or gone): do not let the queue grow without bound.
                shared.offer(buffer, classIndex, clock.source().nanoTime());
                return;
            }
            if (foreignReturnBytes.compareAndSet(queued, queued + cap)) {
                break;
            }
        }
        foreignReturns.offer(buffer);
    }

    private void keep(ByteBuffer buffer, int classIndex) {
        long now = clock.nanoTime();
        if (!local.offer(buffer, classIndex, now)) {
            shared.offer(buffer, classIndex, now);
        }
    }

    private void drainForeignReturns() {
        ByteBuffer b;
        long drainedBytes = 0;
        while ((b = foreignReturns.relaxedPoll()) != null) {
            releaseCount++;
            drainedBytes += b.capacity();
            keep(b, BufferSizeClasses.indexOfCapacity(b.capacity()));
        }
        if (drainedBytes != 0) {
            foreignReturnBytes.addAndGet(-drainedBytes);
        }
    }

    /**
     * Owner thread, called now and then (once a second is plenty): takes back buffers released
     * by other threads and drops those idle longer than the idle time from both levels.
     */
    public void maintain() {
        checkOwner();
        drainForeignReturns();
        long now = clock.nanoTime();
        local.shrinkIdle(now, idleNanos);
        shared.shrinkIdle(now, idleNanos);
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("ThreadBufferPool of " + owner.getName()
                    + " used from " + Thread.currentThread().getName() + "; this method is for the owner thread only");
        }
    }

    /** Bytes held by the local level. Owner thread. */
    public long localPooledBytes() {
        return local.pooledBytes();
    }

    /** Bytes released by other threads and not yet taken back by the owner. Any thread. */
    public long foreignReturnBytes() {
        return foreignReturnBytes.get();
    }

    public SharedBufferPool shared() {
        return shared;
    }

    /** Borrows by the owner thread. Owner thread. */
    public long borrowCount() {
        return borrowCount;
    }

    /** Borrows by the owner thread that had to allocate a new buffer. Owner thread. */
    public long allocateCount() {
        return allocateCount;
    }

    /** Releases taken back into the pool (own and drained foreign ones). Owner thread. */
    public long releaseCount() {
        return releaseCount;
    }

    /**
     * Owner thread, for tests: drains foreign returns and checks that no buffer sits in the pool
     * twice (a double release). Returns the number of pooled buffers checked.
     */
    public int checkIntegrity() {
        checkOwner();
        drainForeignReturns();
        IdentityHashMap<ByteBuffer, Boolean> seen = new IdentityHashMap<>();
        int[] n = new int[1];
        local.forEachPooled(b -> {
            n[0]++;
            if (seen.put(b, Boolean.TRUE) != null) {
                throw new IllegalStateException("buffer of capacity " + b.capacity() + " pooled twice (double release)");
            }
        });
        List<ByteBuffer> sharedBuffers = shared.snapshotPooled();
        for (ByteBuffer b : sharedBuffers) {
            n[0]++;
            if (seen.put(b, Boolean.TRUE) != null) {
                throw new IllegalStateException("buffer of capacity " + b.capacity() + " pooled twice (double release)");
            }
        }
        return n[0];
    }
}
