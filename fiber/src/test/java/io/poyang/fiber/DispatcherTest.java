package io.poyang.fiber;

import io.poyang.common.StoppedException;
import io.poyang.common.TimeSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DispatcherTest extends FiberTestSupport {

    /** Loops on Fiber.yield until {@code stop} is set, counting its steps. */
    static FiberFrame<Void> yieldLoop(AtomicBoolean stop, AtomicLong counter) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.yield(this::again);
            }

            private FrameCallResult again(Void v) {
                counter.lazySet(counter.get() + 1);
                return stop.get() ? Fiber.frameReturn() : Fiber.yield(this::again);
            }
        };
    }

    /** Loops on Fiber.resume (never suspends) until {@code stop} is set, counting its steps. */
    static FiberFrame<Void> resumeLoop(AtomicBoolean stop, long[] counter) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.resume(null, this::again);
            }

            private FrameCallResult again(Void v) {
                counter[0]++;
                return stop.get() ? Fiber.frameReturn() : Fiber.resume(null, this::again);
            }
        };
    }

    @Test
    void hundredGroupsOnTwoDispatchersShareTheThreadsFairly() throws Exception {
        Dispatcher d1 = newDispatcher("fair-1");
        Dispatcher d2 = newDispatcher("fair-2");
        AtomicBoolean stop = new AtomicBoolean();
        List<AtomicLong> counters = new ArrayList<>();
        List<FiberGroup> groups = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            FiberGroup g = new FiberGroup("g" + i, i % 2 == 0 ? d1 : d2);
            get(g.getDispatcher().startGroup(g));
            AtomicLong c = new AtomicLong();
            counters.add(c);
            groups.add(g);
            // Uneven load: some groups have more busy fibers than others.
            for (int f = 0; f < 1 + i % 3; f++) {
                g.fireFiber("busy-" + f, yieldLoop(stop, c));
            }
        }
        waitUntil("every group runs", () -> counters.stream().allMatch(c -> c.get() > 0));
        // Measure from here, so groups started earlier have no head start.
        long[] base = counters.stream().mapToLong(AtomicLong::get).toArray();
        waitUntil("every group made progress", () -> {
            for (int i = 0; i < base.length; i++) {
                if (counters.get(i).get() - base[i] < 20_000) {
                    return false;
                }
            }
            return true;
        });
        long[] delta = new long[base.length];
        for (int i = 0; i < base.length; i++) {
            delta[i] = counters.get(i).get() - base[i];
        }
        stop.set(true);
        for (FiberGroup g : groups) {
            g.requestShutdown();
            get(g.shutdownFuture());
        }
        // Each group gets the same step budget per round whatever its number of fibers, so within a
        // dispatcher the groups advance alike (the two dispatchers may get unequal CPU time).
        for (int parity = 0; parity < 2; parity++) {
            long min = Long.MAX_VALUE;
            long max = 0;
            for (int i = parity; i < delta.length; i += 2) {
                min = Math.min(min, delta[i]);
                max = Math.max(max, delta[i]);
            }
            assertTrue(max <= 2 * min, "steps per group on dispatcher " + (parity + 1) + " ranged from "
                    + min + " to " + max);
        }
    }

    @Test
    void aFiberThatKeepsWakingItselfYieldsAfterABoundedNumberOfSteps() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        long[] spins = {0};
        List<Long> spinsSeenByOther = new ArrayList<>();
        CompletableFuture<Void> other = new CompletableFuture<>();
        onDispatcher(group, () -> {
            new Fiber("spinner", group, resumeLoop(stop, spins)).start();
            new Fiber("other", group, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return Fiber.yield(this::again);
                }

                private FrameCallResult again(Void v) {
                    spinsSeenByOther.add(spins[0]);
                    if (spinsSeenByOther.size() == 100) {
                        stop.set(true);
                        other.complete(null);
                        return Fiber.frameReturn();
                    }
                    return Fiber.yield(this::again);
                }
            }).start();
            return null;
        });
        get(other);
        for (int i = 1; i < spinsSeenByOther.size(); i++) {
            long between = spinsSeenByOther.get(i) - spinsSeenByOther.get(i - 1);
            assertTrue(between <= Dispatcher.DEFAULT_MAX_STEPS_PER_FIBER_RUN,
                    "the spinner ran " + between + " steps between two steps of the other fiber");
        }
    }

    @Test
    void aBusyGroupCannotStarveAnotherGroupOnTheSameDispatcher() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        long[] busySteps = {0};
        for (int i = 0; i < 4; i++) {
            group.fireFiber("spinner-" + i, resumeLoop(stop, busySteps));
        }
        FiberGroup quiet = new FiberGroup("quiet", dispatcher);
        get(dispatcher.startGroup(quiet));
        List<Long> seen = new ArrayList<>();
        CompletableFuture<Void> done = run(quiet, "ticker", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(1, this::tick);
            }

            private FrameCallResult tick(Void v) {
                seen.add(busySteps[0]);
                return seen.size() == 50 ? Fiber.frameReturn() : Fiber.yield(this::tick);
            }
        });
        get(done);
        stop.set(true);
        for (int i = 1; i < seen.size(); i++) {
            long between = seen.get(i) - seen.get(i - 1);
            assertTrue(between <= Dispatcher.DEFAULT_MAX_STEPS_PER_GROUP_ROUND,
                    "the busy group ran " + between + " steps between two steps of the quiet one");
        }
    }

    @Test
    void groupsAreAddedAndRemovedWhileTheDispatcherRuns() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong resident = new AtomicLong();
        group.fireFiber("resident", yieldLoop(stop, resident));
        for (int round = 0; round < 20; round++) {
            FiberGroup g = new FiberGroup("temp", dispatcher);
            get(dispatcher.startGroup(g));
            assertEquals(3 * round + 6, get(run(g, "work", new FiberFrame<Integer>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return Fiber.sleep(1, v -> Fiber.frameReturn(3 * 2 + 3 * 0));
                }
            })) + 3 * round);
            g.requestShutdown();
            get(g.shutdownFuture());
            assertFalse(g.fireFiber("late", valueFrame(1)), "a finished group takes no fibers");
            assertTrue(failure(dispatcher.startGroup(g)) instanceof FiberException, "a group starts once");
        }
        long before = resident.get();
        waitUntil("the resident group still runs", () -> resident.get() > before);
        stop.set(true);
    }

    @Test
    void aBusyDispatcherIsNotUnparkedForEveryMessage() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong spins = new AtomicLong();
        group.fireFiber("keeps-dispatcher-busy", yieldLoop(stop, spins));
        waitUntil("the dispatcher is busy", () -> spins.get() > 1000);
        int messages = 100_000;
        FiberChannel<Integer> ch = group.newChannel("inbox");
        CompletableFuture<Integer> received = run("consumer", new FiberFrame<Integer>() {
            final List<Integer> batch = new ArrayList<>();
            int count;

            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, this::onBatch);
            }

            private FrameCallResult onBatch(Void v) {
                count += batch.size();
                batch.clear();
                return count == messages ? Fiber.frameReturn(count) : ch.takeAll(batch, this::onBatch);
            }
        });
        long unparksBefore = dispatcher.unparkCount();
        for (int i = 0; i < messages; i++) {
            ch.fireOffer(i);
        }
        assertEquals(messages, get(received));
        long unparks = dispatcher.unparkCount() - unparksBefore;
        stop.set(true);
        assertTrue(unparks <= 10, unparks + " unparks for " + messages + " messages to a busy dispatcher");
    }

    @Test
    void anIdleDispatcherParksUntilTheNextTimerInsteadOfSpinning() throws Exception {
        long roundsBefore = dispatcher.roundCount();
        long parksBefore = dispatcher.parkCount();
        get(run("sleeper", SleepYieldJoinTest.sleepFrame(200, null, null)));
        long rounds = dispatcher.roundCount() - roundsBefore;
        assertTrue(rounds < 50, rounds + " rounds during a 200 ms sleep");
        assertTrue(dispatcher.parkCount() > parksBefore);
    }

    @Test
    void noWakeupIsLostBetweenAParkingDispatcherAndAnotherThread() throws Exception {
        // Each message finds the dispatcher idle or about to park: the race the parked flag covers.
        for (int i = 0; i < 20_000; i++) {
            FiberFuture<Integer> f = group.newFuture("ping-" + i);
            CompletableFuture<Integer> out = f.toCompletableFuture();
            f.fireComplete(i);
            assertEquals(i, get(out));
        }
    }

    @Test
    void stopDropsGroupsThatDoNotFinishInTime() throws Exception {
        Dispatcher d = new Dispatcher("impatient", TimeSource.SYSTEM, 64, 16, 50);
        d.start();
        FiberGroup g = new FiberGroup("stuck", d);
        get(d.startGroup(g));
        FiberFuture<Void> never = g.newFuture("never");
        g.fireFiber("stuck-fiber", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return never.await(v -> Fiber.frameReturn());
            }
        });
        d.stop();
        Throwable e = failure(g.shutdownFuture());
        assertTrue(e instanceof StoppedException, e.toString());
        assertTrue(failure(d.startGroup(new FiberGroup("late", d))) instanceof StoppedException);
    }

    @Test
    void everyTaskPostedWhileTheDispatcherStopsRunsOrIsRefused() throws Exception {
        // a task is either run or refused (post returns false); none is lost in between
        for (int round = 0; round < 20; round++) {
            Dispatcher d = new Dispatcher("stopping-" + round);
            d.start();
            AtomicLong ran = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            AtomicLong posted = new AtomicLong();
            AtomicBoolean go = new AtomicBoolean(true);
            List<Thread> posters = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Thread t = new Thread(() -> {
                    while (go.get()) {
                        posted.incrementAndGet();
                        if (!d.post(ran::incrementAndGet)) {
                            refused.incrementAndGet();
                        }
                    }
                });
                posters.add(t);
                t.start();
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            d.stop();
            // keep posting a little after the stop, then end
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            go.set(false);
            for (Thread t : posters) {
                t.join(10_000);
            }
            assertEquals(posted.get(), ran.get() + refused.get(), "round " + round + ": ran " + ran.get()
                    + ", refused " + refused.get() + " of " + posted.get());
        }
    }

    @Test
    void aDispatcherStoppedBeforeItStartedRefusesWorkAtOnce() throws Exception {
        Dispatcher d = new Dispatcher("never-started");
        FiberGroup g = new FiberGroup("g", d);
        d.stop();
        assertTrue(failure(d.startGroup(g)) instanceof StoppedException, "startGroup fails at once");
        assertFalse(g.fireFiber("f", valueFrame(1)), "no fiber is accepted");
    }

    @Test
    void anInterruptLeftOnTheDispatcherThreadDoesNotMakeItSpin() throws Exception {
        get(run("leaves-interrupt", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                Thread.currentThread().interrupt();   // e.g. a catch block that restored the flag
                return Fiber.frameReturn();
            }
        }));
        get(run("settle", valueFrame(0)));
        long rounds = dispatcher.roundCount();
        java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L);   // the idle time under test
        long idleRounds = dispatcher.roundCount() - rounds;
        assertTrue(idleRounds < 50, "an idle dispatcher ran " + idleRounds + " rounds in 200 ms");
    }

    @Test
    void aHugeTimeoutDoesNotHoldBackAnOverdueTimer() throws Exception {
        CompletableFuture<Void> shortSleeper = new CompletableFuture<>();
        run("long-step", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                new Fiber("short", getGroup(), new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object in) {
                        return Fiber.sleep(10, v -> {
                            shortSleeper.complete(null);
                            return Fiber.frameReturn();
                        });
                    }
                }, true).start();
                return Fiber.yield(this::busy);
            }

            private FrameCallResult busy(Void v) {
                // a slow round: the short sleeper's deadline passes before the next timer is added
                long until = System.nanoTime() + 30_000_000L;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
                return Fiber.sleep(Long.MAX_VALUE / 1_000_000 - 1, x -> Fiber.frameReturn());
            }
        });
        shortSleeper.get(5, java.util.concurrent.TimeUnit.SECONDS);
    }
}
