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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The {@code --op log} measurement: one fiber appends items (256-byte bodies by default) to a
 * {@link LogStore} as fast as it can, with fsync on, for a duration. An item counts only when the
 * store reports it persisted, i.e. after the fsync that covers it; its latency runs from the
 * {@code append} call to that report. Beside it, this machine's raw fsync rate: a loop of one
 * 4 KiB positional write and one fdatasync, on a preallocated file in the same directory.
 *
 * <p>The appending fiber keeps at most {@code maxPending} items appended but not yet persisted
 * (like raft's bounded queues) and appends at most {@code batchItems} per call, yielding between
 * calls so the store's completions run: batching is whatever piles up while an fsync runs.
 */
public final class LogAppendBenchmark {

    /** Settings; the defaults are those of {@code ./poyang bench --op log}. */
    public static final class Options {
        public Path dir = Paths.get(System.getProperty("java.io.tmpdir"));
        public int durationSeconds = 10;
        public int warmupSeconds = 2;
        public int itemBytes = 256;
        public boolean fsync = true;
        public int maxPending = 8192;
        public int batchItems = 256;
        public int ioThreads = 3;
        public long segmentBytes = 64L << 20;
        public boolean zeroFill = false;
        public int rawFsyncSeconds = 3;
        public boolean printTimeline = true;
    }

    /** What a run measured (after the warm-up). */
    public static final class Result {
        public double seconds;
        public long items;
        public long bytes;
        public long fsyncs;
        public long writes;
        public double rawFsyncsPerSec;
        public long p50Micros;
        public long p95Micros;
        public long p99Micros;
        public long p999Micros;
        public long maxMicros;
        public final List<Long> itemsPerSecond = new ArrayList<>();

        public double itemsPerSec() {
            return items / seconds;
        }

        public double mbPerSec() {
            return bytes / seconds / 1e6;
        }

        public double fsyncsPerSec() {
            return fsyncs / seconds;
        }

        public String toJson(Options o) {
            return String.format(Locale.ROOT, "{\"op\":\"log\",\"duration_s\":%d,\"value_size\":%d,\"fsync\":%s,"
                            + "\"ops_per_sec\":%.0f,\"mb_per_sec\":%.1f,\"fsyncs_per_sec\":%.0f,\"items_per_fsync\":%.1f,"
                            + "\"writes_per_sec\":%.0f,\"raw_fsyncs_per_sec\":%.0f,\"success\":%d,\"failed\":0,\"timeout\":0,"
                            + "\"p50_ms\":%.3f,\"p95_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f}",
                    o.durationSeconds, o.itemBytes, o.fsync, itemsPerSec(), mbPerSec(), fsyncsPerSec(),
                    fsyncs == 0 ? 0.0 : (double) items / fsyncs, writes / seconds, rawFsyncsPerSec, items,
                    p50Micros / 1000.0, p95Micros / 1000.0, p99Micros / 1000.0, p999Micros / 1000.0, maxMicros / 1000.0);
        }
    }

    private LogAppendBenchmark() {
    }

    /** Appends for the warm-up plus the duration, then measures raw fsync; returns the figures. */
    public static Result run(Options o) throws Exception {
        Path storeDir = Files.createTempDirectory(o.dir, "poyang-bench-log-");
        try {
            Result r = runAppends(o, storeDir);
            if (o.rawFsyncSeconds > 0) {
                r.rawFsyncsPerSec = rawFsyncRate(storeDir.resolve("raw-fsync"), o.rawFsyncSeconds);
            }
            return r;
        } finally {
            deleteTree(storeDir);
        }
    }

    private static Result runAppends(Options o, Path storeDir) throws Exception {
        Dispatcher dispatcher = new Dispatcher("bench-log");
        dispatcher.start();
        ExecutorService io = LogStoreConfig.newIoExecutor("bench-log-io", o.ioThreads);
        try {
            FiberGroup group = new FiberGroup("bench-log", dispatcher);
            dispatcher.startGroup(group).get(10, TimeUnit.SECONDS);
            LogStore store = new LogStore("bench", group, new LogStoreConfig(storeDir, io)
                    .segmentBytes(o.segmentBytes).syncForce(o.fsync).zeroFillSegments(o.zeroFill));
            AppendFrame appender = new AppendFrame(store, o);
            CompletableFuture<Void> done = new CompletableFuture<>();
            group.fireFiber("bench-appender", new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return Fiber.call(appender, this::finished);
                }

                private FrameCallResult finished(Void v) {
                    done.complete(null);
                    return Fiber.frameReturn();
                }

                @Override
                protected FrameCallResult handle(Throwable ex) {
                    done.completeExceptionally(ex);
                    return Fiber.frameReturn();
                }
            });
            Result r = new Result();
            // Per-second timeline from another thread, reading the counters the dispatcher publishes.
            long prev = 0;
            long startNanos = System.nanoTime();
            int total = o.warmupSeconds + o.durationSeconds;
            long[] at = new long[4];
            for (int s = 1; s <= total; s++) {
                long wake = startNanos + TimeUnit.SECONDS.toNanos(s);
                while (System.nanoTime() < wake) {
                    if (done.isDone()) {
                        done.get();
                    }
                    TimeUnit.MILLISECONDS.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wake - System.nanoTime())));
                }
                long p = appender.persistedItems.get();
                if (s == o.warmupSeconds) {
                    appender.startMeasuring.set(true);
                    at[0] = p;
                    at[1] = appender.persistedBytes.get();
                    at[2] = appender.fsyncs.get();
                    at[3] = appender.writes.get();
                }
                if (o.printTimeline) {
                    System.out.printf(Locale.ROOT, "%3d s %s %,10d items/s  (fsyncs %,d/s)%n", s,
                            s <= o.warmupSeconds ? "warm-up" : "       ", p - prev, appender.fsyncsPerSecondSample());
                }
                if (s > o.warmupSeconds) {
                    r.itemsPerSecond.add(p - prev);
                }
                prev = p;
            }
            long endNanos = System.nanoTime();
            appender.stop = true;
            done.get(60, TimeUnit.SECONDS);
            r.seconds = o.durationSeconds;
            r.items = appender.persistedItems.get() - at[0];
            r.bytes = appender.persistedBytes.get() - at[1];
            r.fsyncs = appender.fsyncs.get() - at[2];
            r.writes = appender.writes.get() - at[3];
            r.seconds = (endNanos - startNanos) / 1e9 - o.warmupSeconds;
            LatencyHistogram h = appender.histogramAfterStop;
            r.p50Micros = h.percentileMicros(0.50);
            r.p95Micros = h.percentileMicros(0.95);
            r.p99Micros = h.percentileMicros(0.99);
            r.p999Micros = h.percentileMicros(0.999);
            r.maxMicros = h.maxMicros();
            group.requestShutdown();
            group.shutdownFuture().get(60, TimeUnit.SECONDS);
            return r;
        } finally {
            dispatcher.stop();
            io.shutdown();
        }
    }

    /** The appending fiber: append, yield, and wait when too much is pending. Dispatcher thread. */
    private static final class AppendFrame extends FiberFrame<Void> {
        private final LogStore store;
        private final Options o;
        private final ByteBody body;
        private final int itemDiskBytes;
        private final FrameCall<Void> loop = this::loop;
        private final FrameCall<Object> afterInit = v -> loop(null);
        final AtomicLong persistedItems = new AtomicLong();
        final AtomicLong persistedBytes = new AtomicLong();
        final AtomicLong fsyncs = new AtomicLong();
        final AtomicLong writes = new AtomicLong();
        final java.util.concurrent.atomic.AtomicBoolean startMeasuring = new java.util.concurrent.atomic.AtomicBoolean();
        volatile boolean stop;
        private boolean measuring;
        private long lastFsyncSample;
        private volatile long fsyncsPerSecond;
        private long lastSampleNanos;
        /** Batches in flight: last index and append time, in index order. */
        private long[] batchLast = new long[1 << 16];
        private long[] batchNanos = new long[1 << 16];
        private int batchHead;
        private int batchCount;
        private long countedUpTo;
        private final LatencyHistogram histogram = new LatencyHistogram();
        volatile LatencyHistogram histogramAfterStop;
        private List<LogItem> batch = new ArrayList<>();

        AppendFrame(LogStore store, Options o) {
            this.store = store;
            this.o = o;
            byte[] b = new byte[o.itemBytes];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) (i * 31 + 7);
            }
            this.body = new ByteBody(b);
            this.itemDiskBytes = 48 + o.itemBytes + 4;
        }

        long fsyncsPerSecondSample() {
            return fsyncsPerSecond;
        }

        @Override
        public FrameCallResult execute(Object input) {
            store.setPersistedListener(this::onPersisted);
            return Fiber.call(store.init(), v -> loop(null));
        }

        private void onPersisted(long persisted) {
            long now = System.nanoTime();
            if (!measuring && startMeasuring.get()) {
                measuring = true;
            }
            while (batchCount > 0 && batchLast[batchHead] <= persisted) {
                long last = batchLast[batchHead];
                long items = last - countedUpTo;
                if (measuring) {
                    histogram.record((now - batchNanos[batchHead]) / 1000, items);
                }
                countedUpTo = last;
                batchHead = (batchHead + 1) & (batchLast.length - 1);
                batchCount--;
            }
            persistedItems.lazySet(persisted);
            persistedBytes.lazySet(persisted * itemDiskBytes);
            fsyncs.lazySet(store.fsyncCount());
            writes.lazySet(store.writeCount());
            if (now - lastSampleNanos >= 1_000_000_000L) {
                long f = store.fsyncCount();
                fsyncsPerSecond = lastSampleNanos == 0 ? 0 : (f - lastFsyncSample) * 1_000_000_000L / (now - lastSampleNanos);
                lastFsyncSample = f;
                lastSampleNanos = now;
            }
        }

        private FrameCallResult loop(Void v) {
            if (stop) {
                histogramAfterStop = histogram;
                return Fiber.call(store.close(), x -> Fiber.frameReturn());
            }
            long last = store.lastIndex();
            long room = o.maxPending - (last - store.persistedIndex());
            if (room <= 0 || batchCount == batchLast.length) {
                return store.persistedCondition().await(loop);
            }
            int n = (int) Math.min(room, o.batchItems);
            int term = 1;
            batch.clear();
            for (long i = last + 1; i <= last + n; i++) {
                batch.add(new LogItem(LogItem.TYPE_NORMAL, 0, term, i == 1 ? 0 : term, i, 0, null, body));
            }
            store.append(batch);
            int slot = (batchHead + batchCount) & (batchLast.length - 1);
            batchLast[slot] = last + n;
            batchNanos[slot] = System.nanoTime();
            batchCount++;
            return Fiber.yield(loop);
        }
    }

    /** Loops a 4 KiB positional write and fdatasync on a preallocated file; returns fsyncs per second. */
    public static double rawFsyncRate(Path file, int seconds) throws IOException {
        long fileBytes = 64L << 20;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long p = 0; p < fileBytes; p += zeros.capacity()) {
                zeros.clear();
                ch.write(zeros, p);
            }
            ch.force(true);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            long n = 0;
            long pos = 0;
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            long now;
            while ((now = System.nanoTime()) < end) {
                b.clear();
                ch.write(b, pos);
                ch.force(false);
                n++;
                pos = (pos + 4096) % fileBytes;
            }
            return n / ((now - start) / 1e9);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(x);
            }
        }
    }

    /**
     * Temporary entry point until {@code ./poyang bench --op log} is wired:
     * {@code [durationSeconds] [dir] [key=value ...]} with keys warmup, itemBytes, fsync, maxPending,
     * batchItems, ioThreads, segmentMb, rawFsyncSeconds. Prints the timeline, a summary and one JSON line.
     */
    public static void main(String[] args) throws Exception {
        Options o = new Options();
        if (args.length > 0) {
            o.durationSeconds = Integer.parseInt(args[0]);
        }
        if (args.length > 1) {
            o.dir = Paths.get(args[1]);
        }
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            switch (kv[0]) {
                case "warmup": o.warmupSeconds = Integer.parseInt(kv[1]); break;
                case "itemBytes": o.itemBytes = Integer.parseInt(kv[1]); break;
                case "fsync": o.fsync = Boolean.parseBoolean(kv[1]); break;
                case "maxPending": o.maxPending = Integer.parseInt(kv[1]); break;
                case "batchItems": o.batchItems = Integer.parseInt(kv[1]); break;
                case "ioThreads": o.ioThreads = Integer.parseInt(kv[1]); break;
                case "segmentMb": o.segmentBytes = Long.parseLong(kv[1]) << 20; break;
                case "zeroFill": o.zeroFill = Boolean.parseBoolean(kv[1]); break;
                case "rawFsyncSeconds": o.rawFsyncSeconds = Integer.parseInt(kv[1]); break;
                default: throw new IllegalArgumentException("unknown option " + kv[0]);
            }
        }
        Result r = run(o);
        System.out.printf(Locale.ROOT, "log append, %d-byte items, fsync %s: %,.0f items/s, %.1f MB/s, %,.0f fsyncs/s"
                        + " (%.0f items per fsync), %,.0f writes/s; raw 4 KiB write+fsync: %,.0f/s%n",
                o.itemBytes, o.fsync, r.itemsPerSec(), r.mbPerSec(), r.fsyncsPerSec(),
                r.fsyncs == 0 ? 0.0 : (double) r.items / r.fsyncs, r.writes / r.seconds, r.rawFsyncsPerSec);
        System.out.printf(Locale.ROOT, "latency append->persisted: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, p999 %.2f ms,"
                + " max %.2f ms%n", r.p50Micros / 1e3, r.p95Micros / 1e3, r.p99Micros / 1e3, r.p999Micros / 1e3,
                r.maxMicros / 1e3);
        System.out.println(r.toJson(o));
    }
}
