package io.poyang.fiber;

import io.poyang.common.ManualTimeSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SleepYieldJoinTest extends FiberTestSupport {

    static FiberFrame<Void> sleepFrame(long millis, List<String> log, String name) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(millis, this::woke);
            }

            private FrameCallResult woke(Void v) {
                if (log != null) {
                    log.add(name);
                }
                return Fiber.frameReturn();
            }
        };
    }

    @Test
    void sleepLastsAtLeastItsDuration() throws Exception {
        long start = System.nanoTime();
        get(run("sleeper", sleepFrame(30, null, null)));
        assertTrue((System.nanoTime() - start) / 1_000_000 >= 30);
    }

    @Test
    void timersFireInDeadlineOrderAndTiesInRegistrationOrder() throws Exception {
        ManualTimeSource clock = new ManualTimeSource();
        Dispatcher manual = new Dispatcher("manual-clock", clock);
        manual.start();
        try {
            FiberGroup g = new FiberGroup("timers", manual);
            get(manual.startGroup(g));
            List<String> order = Collections.synchronizedList(new ArrayList<>());
            long[] delays = {50, 10, 30, 10, 20, 40};
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int i = 0; i < delays.length; i++) {
                done.add(run(g, "s" + i, sleepFrame(delays[i], order, delays[i] + "ms#" + i)));
            }
            waitUntil("all sleep", () -> {
                try {
                    return onDispatcher(g, manual::timerCount) == delays.length;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(order.isEmpty(), "nothing fires before the clock moves");
            clock.advance(25, TimeUnit.MILLISECONDS);
            manual.wakeup();
            waitUntil("three fired", () -> order.size() == 3);
            clock.advance(100, TimeUnit.MILLISECONDS);
            manual.wakeup();
            for (CompletableFuture<Void> d : done) {
                get(d);
            }
            assertEquals(List.of("10ms#1", "10ms#3", "20ms#4", "30ms#2", "40ms#5", "50ms#0"), order);
        } finally {
            manual.stop();
        }
    }

    @Test
    void yieldLetsTheOtherReadyFibersRun() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> a = new CompletableFuture<>();
        CompletableFuture<Void> b = new CompletableFuture<>();
        onDispatcher(group, () -> {
            // Both fibers start in the same step, so they are ready together.
            a.complete(null);
            new Fiber("a", group, yielder("a", log)).start();
            new Fiber("b", group, yielder("b", log)).start();
            return null;
        });
        waitUntil("both finish", () -> log.size() == 6);
        assertEquals(List.of("a0", "b0", "a1", "b1", "a2", "b2"), log);
        b.complete(null);
    }

    private static FiberFrame<Void> yielder(String name, List<String> log) {
        return new FiberFrame<Void>() {
            int i;

            @Override
            public FrameCallResult execute(Object input) {
                log.add(name + i++);
                return Fiber.yield(this::again);
            }

            private FrameCallResult again(Void v) {
                log.add(name + i++);
                return i == 3 ? Fiber.frameReturn() : Fiber.yield(this::again);
            }
        };
    }

    @Test
    void joinWaitsUntilTheFiberEndsAndATimedJoinSaysWhetherItDid() throws Exception {
        FiberFuture<String> gate = group.newFuture("gate");
        Object[] outcomes = new Object[3];
        CompletableFuture<Void> joiner = run("joiner", new FiberFrame<Void>() {
            Fiber worker;

            @Override
            public FrameCallResult execute(Object input) {
                worker = new Fiber("worker", getGroup(), new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object in) {
                        return gate.await(v -> Fiber.frameReturn());
                    }
                });
                worker.start();
                return worker.join(10, this::afterShortJoin);
            }

            private FrameCallResult afterShortJoin(Boolean finished) {
                outcomes[0] = finished;
                gate.complete("open");
                return worker.join(this::afterJoin);
            }

            private FrameCallResult afterJoin(Void v) {
                outcomes[1] = worker.isFinished();
                return worker.join(10, this::afterJoinOfFinished);
            }

            private FrameCallResult afterJoinOfFinished(Boolean finished) {
                outcomes[2] = finished;
                return Fiber.frameReturn();
            }
        });
        get(joiner);
        assertEquals(Boolean.FALSE, outcomes[0]);
        assertEquals(Boolean.TRUE, outcomes[1]);
        assertEquals(Boolean.TRUE, outcomes[2]);
    }

    @Test
    void joinOfAFiberThatFailedStillResumes() throws Exception {
        CompletableFuture<Object> r = run("joiner", new FiberFrame<Object>() {
            @Override
            public FrameCallResult execute(Object input) {
                Fiber failing = new Fiber("failing", getGroup(), new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object in) {
                        throw new IllegalStateException("expected failure of a joined fiber");
                    }
                });
                failing.start();
                return failing.join(v -> Fiber.frameReturn("joined"));
            }
        });
        assertEquals("joined", get(r));
    }

    @Test
    void interruptWakesASleeperAndAPendingInterruptFailsTheNextWait() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = run("main", new FiberFrame<Void>() {
            Fiber sleeper;
            Fiber busy;

            @Override
            public FrameCallResult execute(Object input) {
                sleeper = new Fiber("sleeper", getGroup(), catching(s -> Fiber.sleep(60_000, s), log, "sleeper"));
                sleeper.start();
                // "busy" is ready but not waiting when interrupted: its next wait fails at once.
                busy = new Fiber("busy", getGroup(), catching(s -> Fiber.yield(v -> Fiber.sleep(60_000, s)), log, "busy"));
                busy.start();
                busy.interrupt();
                return Fiber.yield(this::interruptSleeper);
            }

            private FrameCallResult interruptSleeper(Void v) {
                sleeper.interrupt();
                return sleeper.join(this::joinBusy);
            }

            private FrameCallResult joinBusy(Void v) {
                return busy.join(x -> Fiber.frameReturn());
            }
        });
        get(done);
        Collections.sort(log);
        assertEquals(List.of("busy:FiberInterruptedException", "sleeper:FiberInterruptedException"), log);
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount));
    }

    interface Waiter {
        FrameCallResult startWait(FrameCall<Void> resume) throws Throwable;
    }

    static FiberFrame<Void> catching(Waiter waiter, List<String> log, String name) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) throws Throwable {
                return waiter.startWait(v -> {
                    log.add(name + ":woke normally");
                    return Fiber.frameReturn();
                });
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                log.add(name + ":" + ex.getClass().getSimpleName());
                return Fiber.frameReturn();
            }
        };
    }

    @Test
    void sleepZeroIsAYield() throws Exception {
        assertNull(get(run("zero", sleepFrame(0, null, null))));
        // the other ready fiber runs before the sleeper goes on, and no timer is made for it
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        int[] timersWhileYielded = new int[1];
        CompletableFuture<Void> done = new CompletableFuture<>();
        onDispatcher(group, () -> {
            new Fiber("sleeper", group, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    order.add("sleeper before");
                    return Fiber.sleep(0, v -> {
                        order.add("sleeper after");
                        done.complete(null);
                        return Fiber.frameReturn();
                    });
                }
            }).start();
            new Fiber("other", group, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    order.add("other");
                    timersWhileYielded[0] = dispatcher.timerCount();
                    return Fiber.frameReturn();
                }
            }).start();
            return null;
        });
        get(done);
        assertEquals(List.of("sleeper before", "other", "sleeper after"), order);
        assertEquals(0, timersWhileYielded[0], "sleep(0) set a timer");
    }

    @Test
    void anInterruptBeforeTheFiberStartsFailsItsFirstWait() throws Exception {
        CompletableFuture<String> outcome = new CompletableFuture<>();
        onDispatcher(group, () -> {
            Fiber f = new Fiber("interrupted-early", group, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return Fiber.sleep(60_000, v -> {
                        outcome.complete("slept");
                        return Fiber.frameReturn();
                    });
                }

                @Override
                protected FrameCallResult handle(Throwable ex) {
                    outcome.complete(ex.getClass().getSimpleName());
                    return Fiber.frameReturn();
                }
            }, false);
            f.interrupt();
            f.start();
            return null;
        });
        assertEquals("FiberInterruptedException", get(outcome));
    }
}
