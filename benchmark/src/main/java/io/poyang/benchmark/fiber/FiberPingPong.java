package io.poyang.benchmark.fiber;

import io.poyang.fiber.Dispatcher;
import io.poyang.fiber.Fiber;
import io.poyang.fiber.FiberChannel;
import io.poyang.fiber.FiberFrame;
import io.poyang.fiber.FiberGroup;
import io.poyang.fiber.FrameCall;
import io.poyang.fiber.FrameCallResult;

import java.lang.reflect.Method;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code --op fiber} measurement: two fibers hand a value back and forth through two
 * channels, and the same ping-pong between two virtual threads through two blocking queues when
 * the JDK has virtual threads. A switch is one hand-over (ping or pong), so a round trip counts two.
 *
 * <p>The module compiles to Java 11, so virtual threads are reached through reflection.
 */
public final class FiberPingPong {

    private FiberPingPong() {
    }

    /** Runs the fiber ping-pong for about {@code durationMillis} and returns the number of switches. */
    public static long runFibers(long durationMillis) throws Exception {
        Dispatcher dispatcher = new Dispatcher("fiber-ping-pong");
        dispatcher.start();
        try {
            FiberGroup group = new FiberGroup("ping-pong", dispatcher);
            dispatcher.startGroup(group).get(10, TimeUnit.SECONDS);
            FiberChannel<Long> pings = group.newChannel("pings");
            FiberChannel<Long> pongs = group.newChannel("pongs");
            long[] switches = {0};
            long durationNanos = TimeUnit.MILLISECONDS.toNanos(durationMillis);
            group.fireFiber("ponger", new FiberFrame<Void>() {
                // A method reference made once: `this::onPing` inline would allocate on every take.
                private final FrameCall<Long> onPing = this::onPing;

                @Override
                public FrameCallResult execute(Object input) {
                    return pings.take(onPing);
                }

                private FrameCallResult onPing(Long value) {
                    if (value == null) {
                        // The group is shutting down.
                        return Fiber.frameReturn();
                    }
                    switches[0]++;
                    pongs.offer(value);
                    return pings.take(onPing);
                }
            });
            group.fireFiber("pinger", new FiberFrame<Void>() {
                private final FrameCall<Long> onPong = this::onPong;
                private long deadlineNanos;
                private final Long ball = 1L;

                @Override
                public FrameCallResult execute(Object input) {
                    deadlineNanos = dispatcher.timestamp().nanoTime() + durationNanos;
                    pings.offer(ball);
                    return pongs.take(onPong);
                }

                private FrameCallResult onPong(Long value) {
                    switches[0]++;
                    // The dispatcher's clock is refreshed once per round, so this costs no system call.
                    if (dispatcher.timestamp().nanoTime() - deadlineNanos >= 0) {
                        getGroup().requestShutdown();
                        return Fiber.frameReturn();
                    }
                    pings.offer(value);
                    return pongs.take(onPong);
                }
            });
            group.shutdownFuture().get(durationMillis + 30_000, TimeUnit.MILLISECONDS);
            return switches[0];
        } finally {
            dispatcher.stop();
        }
    }

    /** True when this JDK can start virtual threads (21 and later). */
    public static boolean virtualThreadsAvailable() {
        try {
            Thread.class.getMethod("ofVirtual");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /**
     * Runs the same ping-pong between two virtual threads for about {@code durationMillis} and
     * returns the number of switches, or -1 when the JDK has no virtual threads.
     */
    public static long runVirtualThreads(long durationMillis) throws Exception {
        if (!virtualThreadsAvailable()) {
            return -1;
        }
        BlockingQueue<Long> pings = new LinkedBlockingQueue<>();
        BlockingQueue<Long> pongs = new LinkedBlockingQueue<>();
        AtomicLong result = new AtomicLong();
        long durationNanos = TimeUnit.MILLISECONDS.toNanos(durationMillis);
        Long stop = -1L;
        Runnable ponger = () -> {
            try {
                while (true) {
                    Long v = pings.take();
                    if (v.equals(stop)) {
                        return;
                    }
                    pongs.put(v);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Runnable pinger = () -> {
            long switches = 0;
            Long ball = 1L;
            long deadline = System.nanoTime() + durationNanos;
            try {
                while (true) {
                    pings.put(ball);
                    ball = pongs.take();
                    switches += 2;
                    // Read the clock once per 1024 round trips, like the fibers' cached clock.
                    if ((switches & 2047) == 0 && System.nanoTime() - deadline >= 0) {
                        break;
                    }
                }
                pings.put(stop);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            result.set(switches);
        };
        Thread a = startVirtualThread(ponger);
        Thread b = startVirtualThread(pinger);
        b.join(durationMillis + 30_000);
        a.join(10_000);
        return result.get();
    }

    private static Thread startVirtualThread(Runnable task) throws ReflectiveOperationException {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        return (Thread) start.invoke(builder, task);
    }
}
