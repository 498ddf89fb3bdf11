package io.poyang.benchmark.log;

import io.poyang.benchmark.BenchDirs;
import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.LoadDriver;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.RunStats;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.UsageException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code --op log}: one fiber appends items ({@code --value-size} bytes of body, 256 unless given)
 * to a raft log store in a fresh directory, with fsync on unless {@code --fsync false}, keeping at
 * most {@code --max-pending} items unpersisted. An operation is one item, counted when the store
 * reports it persisted (after the fsync that covers it); its latency runs from {@code append} to
 * that report. Extras: {@code mb_per_sec} (log bytes), {@code fsyncs_per_sec},
 * {@code items_per_fsync}, {@code writes_per_sec}, and, measured after the run,
 * {@code raw_fsyncs_per_sec} (a 4 KiB write + fsync loop in the same directory).
 *
 * <p>The directory is {@code $POYANG_BENCH_DIR} or the system temp directory; it is deleted after.
 */
public final class LogScenario implements Scenario {

    /** Items per append call: like a leader's batch when requests pile up. */
    static final int BATCH_ITEMS = 256;
    static final int IO_THREADS = 3;
    static final long SEGMENT_BYTES = 64L << 20;
    /** The raw fsync loop runs as long as the measured window, at most this long. */
    static final long RAW_FSYNC_MILLIS = 3_000;

    private Path dir;
    private LogAppendLoad load;
    /** Samples of the counters, one per second or so, to cut the measured window out of. */
    private final ArrayDeque<LogAppendLoad.Sample> samples = new ArrayDeque<>();
    private volatile long stopNanos;

    @Override
    public void setUp(BenchOptions o) throws Exception {
        if (o.sync) {
            throw new UsageException("--op log appends from one fiber; --sync does not apply");
        }
        if (!o.servers.isEmpty()) {
            throw new UsageException("--op log runs inside this process; --servers does not apply");
        }
        if (!o.valueSizeGiven) {
            o.valueSize = 256;
        }
        dir = BenchDirs.create("poyang-bench-log-");
    }

    @Override
    public int clients() {
        return 1;
    }

    @Override
    public void issue(int client, OpCallback callback) {
        throw new UnsupportedOperationException("the log scenario drives itself (ownDriver)");
    }

    @Override
    public void call(int thread) {
        throw new UnsupportedOperationException("the log scenario drives itself (ownDriver)");
    }

    @Override
    public LoadDriver ownDriver(RunStats stats, BenchOptions o) {
        load = new LogAppendLoad(dir.resolve("store"), o.valueSize, o.fsync, o.maxPending, BATCH_ITEMS, IO_THREADS,
                SEGMENT_BYTES, stats::recordSuccesses);
        return new LoadDriver() {
            private Thread sampler;

            @Override
            public void start() {
                try {
                    load.start();
                } catch (Exception e) {
                    throw new IllegalStateException("could not start the log store: " + e, e);
                }
                sampler = new Thread(() -> {
                    while (stopNanos == 0) {
                        synchronized (samples) {
                            samples.add(load.sample());
                        }
                        try {
                            Thread.sleep(100);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "bench-log-sampler");
                sampler.setDaemon(true);
                sampler.start();
            }

            @Override
            public void stop() {
                stopNanos = System.nanoTime();
                synchronized (samples) {
                    samples.add(load.sample());
                }
                load.stop();
            }

            @Override
            public boolean awaitDrained(long timeoutMillis) throws InterruptedException {
                try {
                    return load.awaitStopped(timeoutMillis);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            }

            @Override
            public String describe() {
                return "one fiber appending " + o.valueSize + "-byte items, batches of up to " + BATCH_ITEMS
                        + ", max-pending " + o.maxPending + ", fsync " + o.fsync;
            }
        };
    }

    @Override
    public Map<String, Object> extras(double measuredSeconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        LogAppendLoad.Sample from;
        LogAppendLoad.Sample to;
        synchronized (samples) {
            long windowStart = stopNanos - (long) (measuredSeconds * 1e9);
            from = samples.peekFirst();
            for (LogAppendLoad.Sample s : samples) {
                if (s.nanos <= windowStart) {
                    from = s;
                }
            }
            to = samples.peekLast();
        }
        if (from != null && to != null && to.nanos > from.nanos) {
            double secs = (to.nanos - from.nanos) / 1e9;
            long items = to.items - from.items;
            long fsyncs = to.fsyncs - from.fsyncs;
            m.put("mb_per_sec", Math.round(items * (double) load.itemDiskBytes() / secs / 1e5) / 10.0);
            m.put("fsyncs_per_sec", Math.round(fsyncs / secs));
            m.put("items_per_fsync", fsyncs == 0 ? null : Math.round(items * 10.0 / fsyncs) / 10.0);
            m.put("writes_per_sec", Math.round((to.writes - from.writes) / secs));
        }
        try {
            long millis = Math.max(500, Math.min(RAW_FSYNC_MILLIS, (long) (measuredSeconds * 1000)));
            m.put("raw_fsyncs_per_sec", Math.round(RawFsync.rate(dir.resolve("raw-fsync"), millis)));
        } catch (IOException e) {
            throw new IllegalStateException("the raw fsync loop failed: " + e, e);
        }
        return m;
    }

    @Override
    public void close() throws IOException {
        if (load != null) {
            load.close();
        }
        if (dir != null) {
            BenchDirs.delete(dir);
        }
    }
}
