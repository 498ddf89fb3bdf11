package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GroupShutdownTest extends FiberTestSupport {

    /** Waits in one primitive, then records how it ended. */
    private FiberFrame<Void> blocked(String name, List<String> log, SleepYieldJoinTest.Waiter waiter) {
        return new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) throws Throwable {
                return waiter.startWait(v -> {
                    log.add(name + " resumed");
                    return Fiber.frameReturn();
                });
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                log.add(name + " failed: " + ex.getClass().getSimpleName());
                return Fiber.frameReturn();
            }

            @Override
            protected FrameCallResult doFinally() {
                log.add(name + " finally");
                return Fiber.frameReturn();
            }
        };
    }

    @Test
    void shutdownLetsNormalFibersFinishAndDropsDaemonsBlockedInEveryPrimitive() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        FiberFuture<String> future = group.newFuture("future");
        FiberCondition condition = group.newCondition("condition");
        FiberChannel<String> channel = group.newChannel("channel");
        FiberFuture<Void> never = group.newFuture("never");
        List<String> batch = new ArrayList<>();
        onDispatcher(group, () -> {
            Fiber joinTarget = new Fiber("join-target", group, blocked("join-target", log, never::await), true);
            joinTarget.start();
            // Daemons blocked in every primitive: dropped when the group finishes, their frames never
            // resumed, except that shutdown wakes channel takers (daemon or not).
            List<SleepYieldJoinTest.Waiter> waits = List.of(
                    r -> never.await(v -> r.execute(null)),
                    condition::await,
                    r -> channel.take(v -> r.execute(null)),
                    r -> channel.takeAll(batch, r),
                    r -> Fiber.sleep(60_000, r),
                    joinTarget::join);
            List<String> names = List.of("future", "condition", "take", "takeAll", "sleep", "join");
            for (int i = 0; i < waits.size(); i++) {
                new Fiber("daemon-" + names.get(i), group, blocked("daemon-" + names.get(i), log, waits.get(i)), true)
                        .start();
            }
            // Normal fibers blocked in every primitive: each gets to its end.
            new Fiber("normal-future", group, blocked("normal-future", log, r -> future.await(v -> r.execute(null))))
                    .start();
            new Fiber("normal-condition", group, blocked("normal-condition", log, r -> condition.await(50, v -> r.execute(null))))
                    .start();
            new Fiber("normal-take", group, blocked("normal-take", log, r -> channel.take(v -> r.execute(null))))
                    .start();
            new Fiber("normal-takeAll", group, blocked("normal-takeAll", log, r -> channel.takeAll(new ArrayList<>(), r)))
                    .start();
            new Fiber("normal-sleep", group, blocked("normal-sleep", log, r -> Fiber.sleep(30, r))).start();
            Fiber shortLived = new Fiber("short", group, blocked("short", log, r -> Fiber.sleep(10, r)));
            shortLived.start();
            new Fiber("normal-join", group, blocked("normal-join", log, shortLived::join)).start();
            return null;
        });
        waitUntil("all wait", () -> {
            try {
                return get(group.snapshot()).fibers().stream().allMatch(f -> "waiting".equals(f.state()));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        group.requestShutdown();
        assertFalse(group.fireFiber("too-late", valueFrame(1)), "no new fibers once shutdown is requested");
        // The normal fiber awaiting the future keeps the group alive until someone completes it.
        waitUntil("only the future waiter is left", () -> {
            try {
                FiberGroupSnapshot s = get(group.snapshot());
                return s.normalFibers() == 1 && s.fiber("normal-future") != null;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertFalse(group.shutdownFuture().isDone());
        future.fireComplete("done");
        get(group.shutdownFuture());

        List<String> normalOutcomes = List.of("normal-future resumed", "normal-condition resumed",
                "normal-take resumed", "normal-takeAll resumed", "normal-sleep resumed", "normal-join resumed",
                "short resumed");
        for (String outcome : normalOutcomes) {
            assertTrue(log.contains(outcome), outcome + " missing from " + log);
        }
        assertTrue(log.contains("daemon-take resumed") && log.contains("daemon-takeAll resumed"),
                "shutdown wakes channel takers: " + log);
        for (String dropped : List.of("daemon-future", "daemon-condition", "daemon-sleep", "daemon-join", "join-target")) {
            assertTrue(log.stream().noneMatch(s -> s.startsWith(dropped)),
                    dropped + " was dropped without resuming or running doFinally: " + log);
        }
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount), "dropped daemons left no timers");
        assertTrue(failure(dispatcher.startGroup(group)) instanceof FiberException);
    }

    @Test
    void aGroupWithNoNormalFibersFinishesAtOnce() throws Exception {
        group.fireFiber(new Fiber("daemon", group, SleepYieldJoinTest.sleepFrame(60_000, null, null), true));
        group.requestShutdown();
        get(group.shutdownFuture());
        group.requestShutdown();
        assertTrue(group.shutdownFuture().isDone(), "requestShutdown is idempotent");
    }

    @Test
    void aNormalFiberStartedByADaemonRightAfterItAskedForShutdownStillRuns() throws Exception {
        CompletableFuture<String> helperRan = new CompletableFuture<>();
        group.fireFiber(new Fiber("stopper", group, new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                // no normal fiber is left: the finish is put off until this step ends
                getGroup().requestShutdown();
                new Fiber("flush", getGroup(), new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object in) {
                        return Fiber.sleep(5, v -> {
                            helperRan.complete("ran");
                            return Fiber.frameReturn();
                        });
                    }
                }).start();
                return Fiber.frameReturn();
            }
        }, true));
        get(group.shutdownFuture());
        assertTrue(helperRan.isDone(), "the normal fiber started during the shutdown was dropped without running");
    }

    @Test
    void fibersStartedInsideTheGroupDuringShutdownStillRun() throws Exception {
        CompletableFuture<String> helperRan = new CompletableFuture<>();
        group.fireFiber("main", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.sleep(20, this::spawn);
            }

            private FrameCallResult spawn(Void v) {
                Fiber helper = new Fiber("helper", getGroup(), new FiberFrame<Void>() {
                    @Override
                    public FrameCallResult execute(Object in) {
                        helperRan.complete("shouldStop=" + getGroup().isShouldStop());
                        return Fiber.frameReturn();
                    }
                });
                helper.start();
                return helper.join(x -> Fiber.frameReturn());
            }
        });
        group.requestShutdown();
        get(group.shutdownFuture());
        assertEquals("shouldStop=true", get(helperRan));
    }

    @Test
    void aDaemonRequestingItsOwnGroupsShutdownEndsTheGroupAndLeavesTheDispatcherRunning() throws Exception {
        for (String after : new String[]{"return", "sleep"}) {
            FiberGroup g = new FiberGroup("daemons-only-" + after, dispatcher);
            get(dispatcher.startGroup(g));
            CompletableFuture<Void> finallyRan = new CompletableFuture<>();
            g.fireFiber(new Fiber("daemon", g, new FiberFrame<Void>() {
                @Override
                public FrameCallResult execute(Object input) {
                    getGroup().requestShutdown();   // no normal fiber: the group finishes at once
                    return after.equals("return") ? Fiber.frameReturn() : Fiber.sleep(60_000, v -> Fiber.frameReturn());
                }

                @Override
                protected FrameCallResult doFinally() {
                    finallyRan.complete(null);
                    return Fiber.frameReturn();
                }
            }, true));
            get(g.shutdownFuture());
            if (after.equals("return")) {
                get(finallyRan);
            }
            assertEquals(0, onDispatcher(g, g::daemonFiberCount), after);
            // the dispatcher and the other group on it go on
            assertEquals(7, get(run("after-" + after, valueFrame(7))), after);
        }
    }

    @Test
    void stoppingTheDispatcherSettlesAGroupThatWasNeverStarted() throws Exception {
        Dispatcher d = newDispatcher("unstarted-groups");
        FiberGroup g = new FiberGroup("never-started", d);
        assertTrue(g.fireFiber("waits-for-start", valueFrame(1)));
        g.requestShutdown();
        d.stop();
        Throwable e = failure(g.shutdownFuture());
        assertTrue(e instanceof io.poyang.common.StoppedException, e.toString());
        assertFalse(g.fireFiber("after-stop", valueFrame(2)), "a fiber fired at a group of a stopped dispatcher");
    }
}
