package io.poyang.benchmark.log;

import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.LogItem;
import io.poyang.raft.store.LogStore;
import io.poyang.raft.store.LogStoreConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One fiber appending items to a {@link LogStore} as fast as the store takes them: it appends up
 * to {@code batchItems} per call, keeps at most {@code maxPending} items appended but not yet
 * persisted (like raft's bounded queues), and yields between calls so the store's completions
 * run. Batching is whatever piles up while an fsync runs; nothing is timed.
 *
 * <p>An item counts only when the store reports it persisted (with fsync on: after the fsync that
 * covers it); its latency runs from the {@code append} call to that report. The counters are
 * published for other threads in {@link #sample()}.
 */
public final class LogAppendLoad {

    /** Told on the dispatcher thread each time a batch of items became persisted. */
    public interface PersistedListener {
        void persisted(long items, long latencyNanosEach);
    }

    /** Counters at one moment. */
    public static final class Sample {
        public final long nanos;
        public final long items;
        public final long fsyncs;
        public final long writes;
        public final long bytes;

        Sample(long nanos, long items, long fsyncs, long writes, long bytes) {
            this.nanos = nanos;
            this.items = items;
            this.fsyncs = fsyncs;
            this.writes = writes;
            this.bytes = bytes;
        }
    }

    private final Path storeDir;
    private final int itemBytes;
    private final boolean fsync;
    private final int maxPending;
    private final int batchItems;
    private final int ioThreads;
    private final long segmentBytes;
    private final PersistedListener listener;
    private Dispatcher dispatcher;
    private ExecutorService io;
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    private volatile boolean stopRequested;
    private volatile Sample sample = new Sample(System.nanoTime(), 0, 0, 0, 0);

    public LogAppendLoad(Path storeDir, int itemBytes, boolean fsync, int maxPending, int batchItems, int ioThreads,
                         long segmentBytes, PersistedListener listener) {
        this.storeDir = storeDir;
        this.itemBytes = itemBytes;
        this.fsync = fsync;
        this.maxPending = maxPending;
        this.batchItems = batchItems;
        this.ioThreads = ioThreads;
        this.segmentBytes = segmentBytes;
        this.listener = listener;
    }

    public void start() throws Exception {
        dispatcher = new Dispatcher("bench-log");
        dispatcher.start();
        io = LogStoreConfig.newIoExecutor("bench-log-io", ioThreads);
        FiberGroup group = new FiberGroup("bench-log", dispatcher);
        dispatcher.startGroup(group).get(10, TimeUnit.SECONDS);
        LogStore store = new LogStore("bench", group, new LogStoreConfig(storeDir, io)
                .segmentBytes(segmentBytes).syncForce(fsync));
        group.fireFiber("bench-appender", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.call(new AppendFrame(store), this::done);
            }

            private FrameCallResult done(Void v) {
                finished.complete(null);
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                finished.completeExceptionally(ex);
                return Fiber.frameReturn();
            }
        });
    }

    /** Stops appending; items in flight still become persisted, then the store is closed. */
    public void stop() {
        stopRequested = true;
    }

    /** Waits until the store is closed; false on timeout. Rethrows the appender's error. */
    public boolean awaitStopped(long timeoutMillis) throws Exception {
        try {
            finished.get(timeoutMillis, TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("the log appender failed: " + e.getCause(), e.getCause());
        }
    }

    /** Stops the threads (after {@link #awaitStopped}). */
    public void close() {
        if (dispatcher != null) {
            dispatcher.stop();
        }
        if (io != null) {
            io.shutdown();
        }
    }

    public Sample sample() {
        return sample;
    }

    /** Bytes an item takes in the log: the 48-byte header, the body and its CRC. */
    public int itemDiskBytes() {
        return 48 + itemBytes + (itemBytes > 0 ? 4 : 0);
    }

    private final class AppendFrame extends FiberFrame<Void> {
        private final LogStore store;
        private final ByteBody body;
        private final FrameCall<Void> loop = this::loop;
        private final List<LogItem> batch = new ArrayList<>();
        /** Batches in flight: last index and append time, in index order. */
        private final long[] batchLast = new long[1 << 16];
        private final long[] batchNanos = new long[1 << 16];
        private int batchHead;
        private int batchCount;
        private long countedUpTo;

        AppendFrame(LogStore store) {
            this.store = store;
            byte[] b = new byte[itemBytes];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) (i * 31 + 7);
            }
            this.body = new ByteBody(b);
        }

        @Override
        public FrameCallResult execute(Object input) {
            store.setPersistedListener(this::onPersisted);
            return Fiber.call(store.init(), v -> loop(null));
        }

        private void onPersisted(long persisted) {
            long now = System.nanoTime();
            while (batchCount > 0 && batchLast[batchHead] <= persisted) {
                long last = batchLast[batchHead];
                listener.persisted(last - countedUpTo, now - batchNanos[batchHead]);
                countedUpTo = last;
                batchHead = (batchHead + 1) & (batchLast.length - 1);
                batchCount--;
            }
            sample = new Sample(now, persisted, store.fsyncCount(), store.writeCount(), store.writtenBytes());
        }

        private FrameCallResult loop(Void v) {
            long last = store.lastIndex();
            if (stopRequested) {
                if (store.persistedIndex() < last) {
                    return store.persistedCondition().await(loop);
                }
                return Fiber.call(store.close(), x -> Fiber.frameReturn());
            }
            long room = maxPending - (last - store.persistedIndex());
            if (room <= 0 || batchCount == batchLast.length) {
                return store.persistedCondition().await(loop);
            }
            int n = (int) Math.min(room, batchItems);
            batch.clear();
            for (long i = last + 1; i <= last + n; i++) {
                batch.add(new LogItem(LogItem.TYPE_NORMAL, 0, 1, i == 1 ? 0 : 1, i, 0, null, body));
            }
            store.append(batch);
            int slot = (batchHead + batchCount) & (batchLast.length - 1);
            batchLast[slot] = last + n;
            batchNanos[slot] = System.nanoTime();
            batchCount++;
            return Fiber.yield(loop);
        }
    }
}
