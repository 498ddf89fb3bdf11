package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The scheduler allocates nothing per suspension and resumption: two fibers handing a value back
 * and forth (through channels, or through conditions with a timeout, which also exercises the
 * timer heap) allocate no bytes per switch on the dispatcher thread once warmed up.
 */
class AllocationTest extends FiberTestSupport {

    private static final int WARMUP_ROUND_TRIPS = 200_000;
    private static final int MEASURED_ROUND_TRIPS = 1_000_000;

    private static com.sun.management.ThreadMXBean allocationBean() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "this JVM does not count allocated bytes");
        com.sun.management.ThreadMXBean b = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(b.isThreadAllocatedMemorySupported() && b.isThreadAllocatedMemoryEnabled());
        return b;
    }

    /** Counts round trips; measures the dispatcher thread's allocation between warm-up and the end. */
    abstract static class MeasuringPinger extends FiberFrame<Double> {
        private final com.sun.management.ThreadMXBean bean;
        private long roundTrips;
        private long allocatedAtStart;

        MeasuringPinger(com.sun.management.ThreadMXBean bean) {
            this.bean = bean;
        }

        /** Called after each round trip; returns true when done and sets the result. */
        boolean countRoundTrip() {
            roundTrips++;
            if (roundTrips == WARMUP_ROUND_TRIPS) {
                allocatedAtStart = bean.getThreadAllocatedBytes(Thread.currentThread().getId());
            } else if (roundTrips == WARMUP_ROUND_TRIPS + MEASURED_ROUND_TRIPS) {
                long allocated = bean.getThreadAllocatedBytes(Thread.currentThread().getId()) - allocatedAtStart;
                setResult(allocated / (2.0 * MEASURED_ROUND_TRIPS));
                return true;
            }
            return false;
        }
    }

    @Test
    void channelPingPongAllocatesNothingPerSwitch() throws Exception {
        com.sun.management.ThreadMXBean bean = allocationBean();
        FiberChannel<Long> pings = group.newChannel("pings");
        FiberChannel<Long> pongs = group.newChannel("pongs");
        Fiber ponger = new Fiber("ponger", group, new FiberFrame<Void>() {
            private final FrameCall<Long> onPing = this::onPing;

            @Override
            public FrameCallResult execute(Object input) {
                return pings.take(onPing);
            }

            private FrameCallResult onPing(Long v) {
                if (v == null) {
                    return Fiber.frameReturn();
                }
                pongs.offer(v);
                return pings.take(onPing);
            }
        }, true);
        group.fireFiber(ponger);
        double bytesPerSwitch = get(run("pinger", new MeasuringPinger(bean) {
            private final FrameCall<Long> onPong = this::onPong;
            private final Long ball = 1L;

            @Override
            public FrameCallResult execute(Object input) {
                pings.offer(ball);
                return pongs.take(onPong);
            }

            private FrameCallResult onPong(Long v) {
                if (countRoundTrip()) {
                    return Fiber.frameReturn();
                }
                pings.offer(v);
                return pongs.take(onPong);
            }
        }));
        System.out.printf("channel ping-pong: %.4f bytes allocated per switch%n", bytesPerSwitch);
        assertTrue(bytesPerSwitch < 0.5, bytesPerSwitch + " bytes allocated per switch");
    }

    @Test
    void timedConditionPingPongAllocatesNothingPerSwitch() throws Exception {
        com.sun.management.ThreadMXBean bean = allocationBean();
        FiberCondition ping = group.newCondition("ping");
        FiberCondition pong = group.newCondition("pong");
        group.fireFiber(new Fiber("ponger", group, new FiberFrame<Void>() {
            private final FrameCall<Boolean> onPing = this::onPing;

            @Override
            public FrameCallResult execute(Object input) {
                return ping.await(60_000, onPing);
            }

            private FrameCallResult onPing(Boolean signalled) {
                pong.signal();
                return ping.await(60_000, onPing);
            }
        }, true));
        double bytesPerSwitch = get(run("pinger", new MeasuringPinger(bean) {
            private final FrameCall<Boolean> onPong = this::onPong;

            @Override
            public FrameCallResult execute(Object input) {
                // Let the ponger reach its first await.
                return Fiber.yield(v -> {
                    ping.signal();
                    return pong.await(60_000, onPong);
                });
            }

            private FrameCallResult onPong(Boolean signalled) {
                if (countRoundTrip()) {
                    return Fiber.frameReturn();
                }
                ping.signal();
                return pong.await(60_000, onPong);
            }
        }));
        System.out.printf("timed condition ping-pong: %.4f bytes allocated per switch%n", bytesPerSwitch);
        assertTrue(bytesPerSwitch < 0.5, bytesPerSwitch + " bytes allocated per switch");
    }
}
