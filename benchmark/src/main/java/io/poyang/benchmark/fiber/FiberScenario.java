package io.poyang.benchmark.fiber;

import io.poyang.benchmark.BenchOptions;
import io.poyang.benchmark.LoadDriver;
import io.poyang.benchmark.OpCallback;
import io.poyang.benchmark.RunStats;
import io.poyang.benchmark.Scenario;
import io.poyang.benchmark.UsageException;
import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code --op fiber}: two fibers of one group hand a value back and forth through two channels;
 * an operation is one switch (one hand-over). Switches are counted in batches of
 * {@link #BATCH} and each batch records its average switch time as the latency. After the
 * measured run, the same ping-pong between two virtual threads runs for as long (when the JDK has
 * them) and is reported as {@code virtual_thread_switches_per_sec}.
 */
public final class FiberScenario implements Scenario {

    /** Switches per recorded batch: one clock read and one stats update per batch. */
    static final int BATCH = 4096;

    private Dispatcher dispatcher;

    @Override
    public void setUp(BenchOptions o) throws Exception {
        if (o.sync) {
            throw new UsageException("--op fiber measures fiber switches on one dispatcher; --sync does not apply");
        }
        if (!o.servers.isEmpty()) {
            throw new UsageException("--op fiber runs inside this process; --servers does not apply");
        }
        dispatcher = new Dispatcher("bench-fiber");
        dispatcher.start();
    }

    @Override
    public int clients() {
        return 1;
    }

    @Override
    public void issue(int client, OpCallback callback) {
        throw new UnsupportedOperationException("the fiber scenario drives itself (ownDriver)");
    }

    @Override
    public void call(int thread) {
        throw new UnsupportedOperationException("the fiber scenario drives itself (ownDriver)");
    }

    @Override
    public LoadDriver ownDriver(RunStats stats, BenchOptions options) {
        return new PingPongDriver(stats);
    }

    @Override
    public Map<String, Object> extras(double measuredSeconds) throws RuntimeException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("java_version", System.getProperty("java.version"));
        if (!FiberPingPong.virtualThreadsAvailable()) {
            m.put("virtual_thread_switches_per_sec", null);
            return m;
        }
        try {
            long millis = Math.max(1_000, (long) (measuredSeconds * 1000));
            FiberPingPong.runVirtualThreads(Math.min(millis, 1_000)); // warm-up
            long switches = FiberPingPong.runVirtualThreads(millis);
            m.put("virtual_thread_switches_per_sec", Math.round(switches / (millis / 1000.0)));
        } catch (Exception e) {
            throw new IllegalStateException("the virtual-thread ping-pong failed: " + e, e);
        }
        return m;
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            dispatcher.stop();
        }
    }

    /** Runs the ping-pong in one fiber group until stopped. */
    private final class PingPongDriver implements LoadDriver {
        private final RunStats stats;
        private FiberGroup group;

        PingPongDriver(RunStats stats) {
            this.stats = stats;
        }

        @Override
        public void start() {
            group = new FiberGroup("ping-pong", dispatcher);
            try {
                dispatcher.startGroup(group).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("could not start the fiber group: " + e, e);
            }
            FiberChannel<Long> pings = group.newChannel("pings");
            FiberChannel<Long> pongs = group.newChannel("pongs");
            group.fireFiber("ponger", new FiberFrame<Void>() {
                private final FrameCall<Long> onPing = this::onPing;

                @Override
                public FrameCallResult execute(Object input) {
                    return pings.take(onPing);
                }

                private FrameCallResult onPing(Long value) {
                    if (value == null) {
                        return Fiber.frameReturn(); // shutting down
                    }
                    pongs.offer(value);
                    return pings.take(onPing);
                }
            });
            group.fireFiber("pinger", new FiberFrame<Void>() {
                private final FrameCall<Long> onPong = this::onPong;
                private final Long ball = 1L;
                private long switches;
                private long batchStartNanos;

                @Override
                public FrameCallResult execute(Object input) {
                    batchStartNanos = System.nanoTime();
                    pings.offer(ball);
                    return pongs.take(onPong);
                }

                private FrameCallResult onPong(Long value) {
                    if (value == null || getGroup().isShouldStop()) {
                        return Fiber.frameReturn();
                    }
                    switches += 2; // a ping and a pong
                    if (switches == BATCH) {
                        long now = System.nanoTime();
                        stats.recordSuccesses(switches, (now - batchStartNanos) / switches);
                        switches = 0;
                        batchStartNanos = now;
                    }
                    pings.offer(value);
                    return pongs.take(onPong);
                }
            });
        }

        @Override
        public void stop() {
            group.requestShutdown();
        }

        @Override
        public boolean awaitDrained(long timeoutMillis) throws InterruptedException {
            try {
                group.shutdownFuture().get(timeoutMillis, TimeUnit.MILLISECONDS);
                return true;
            } catch (java.util.concurrent.TimeoutException e) {
                return false;
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("the ping-pong group failed: " + e.getCause(), e.getCause());
            }
        }

        @Override
        public String describe() {
            return "two fibers on one dispatcher, switches counted in batches of " + BATCH;
        }
    }
}
