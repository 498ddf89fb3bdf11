package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FiberConditionTest extends FiberTestSupport {

    /** Awaits {@code c} (and {@code other}, if given), timed when timeoutMillis >= 0; returns what it resumed with. */
    static FiberFrame<Object> awaitFrame(FiberCondition c, FiberCondition other, long timeoutMillis, List<String> order,
                                         String name) {
        return new FiberFrame<Object>() {
            @Override
            public FrameCallResult execute(Object input) {
                if (timeoutMillis < 0) {
                    return other == null ? c.await(this::resumedVoid) : c.await(other, this::resumedVoid);
                }
                return other == null ? c.await(timeoutMillis, this::resumed) : c.await(timeoutMillis, other, this::resumed);
            }

            private FrameCallResult resumedVoid(Void v) {
                return resumed(null);
            }

            private FrameCallResult resumed(Object v) {
                if (order != null) {
                    order.add(name);
                }
                return Fiber.frameReturn(v);
            }
        };
    }

    private void waitForWaiters(FiberCondition c, int n) throws InterruptedException {
        waitUntil(n + " waiters on " + c, () -> {
            try {
                return onDispatcher(group, c::waiterCount) == n;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void signalWakesTheLongestWaitingFiberFirst() throws Exception {
        FiberCondition c = group.newCondition("c");
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Object>> results = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            results.add(run("w" + i, awaitFrame(c, null, -1, order, "w" + i)));
            waitForWaiters(c, i + 1);
        }
        c.fireSignal();
        assertNull(get(results.get(0)), "an untimed await resumes with null");
        waitForWaiters(c, 2);
        c.fireSignal();
        get(results.get(1));
        assertEquals(List.of("w0", "w1"), order);
        assertFalse(results.get(2).isDone());
        c.fireSignal();
        get(results.get(2));
    }

    @Test
    void signalAllWakesEveryWaiter() throws Exception {
        FiberCondition c = group.newCondition("all");
        List<CompletableFuture<Object>> results = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            results.add(run("w" + i, awaitFrame(c, null, 60_000, null, null)));
        }
        waitForWaiters(c, 10);
        c.fireSignalAll();
        for (CompletableFuture<Object> r : results) {
            assertEquals(Boolean.TRUE, get(r), "a timed await resumes with TRUE when signalled");
        }
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount));
    }

    @Test
    void timedAwaitResumesWithFalseAfterTheTimeout() throws Exception {
        FiberCondition c = group.newCondition("quiet");
        long start = System.nanoTime();
        assertEquals(Boolean.FALSE, get(run("w", awaitFrame(c, null, 25, null, null))));
        assertTrue((System.nanoTime() - start) / 1_000_000 >= 25);
        assertEquals(0, (int) onDispatcher(group, c::waiterCount), "a timed-out waiter leaves the condition");
    }

    @Test
    void awaitOnTwoConditionsWakesOnEitherAndLeavesBoth() throws Exception {
        FiberCondition a = group.newCondition("a");
        FiberCondition b = group.newCondition("b");
        CompletableFuture<Object> first = run("w1", awaitFrame(a, b, -1, null, null));
        waitForWaiters(a, 1);
        waitForWaiters(b, 1);
        b.fireSignal();
        assertNull(get(first));
        assertEquals(0, (int) onDispatcher(group, a::waiterCount), "the fiber left the other condition too");

        CompletableFuture<Object> second = run("w2", awaitFrame(a, b, 60_000, null, null));
        waitForWaiters(a, 1);
        a.fireSignal();
        assertEquals(Boolean.TRUE, get(second));
        assertEquals(0, (int) onDispatcher(group, b::waiterCount));

        CompletableFuture<Object> third = run("w3", awaitFrame(a, b, 20, null, null));
        assertEquals(Boolean.FALSE, get(third));
        assertEquals(0, (int) onDispatcher(group, () -> a.waiterCount() + b.waiterCount()));
    }

    @Test
    void interruptFailsTheAwaitWithFiberInterruptedException() throws Exception {
        FiberCondition c = group.newCondition("c");
        CompletableFuture<Fiber> waiter = new CompletableFuture<>();
        CompletableFuture<Object> outcomeFuture = new CompletableFuture<>();
        group.fireFiber("waiter", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                waiter.complete(getFiber());
                return c.await(v -> {
                    outcomeFuture.complete("signalled?");
                    return Fiber.frameReturn();
                });
            }

            @Override
            protected FrameCallResult handle(Throwable ex) {
                outcomeFuture.complete(ex);
                return Fiber.frameReturn();
            }
        });
        waitForWaiters(c, 1);
        onDispatcher(group, () -> {
            get0(waiter).interrupt();
            return null;
        });
        Object outcome = get(outcomeFuture);
        assertTrue(outcome instanceof FiberInterruptedException, String.valueOf(outcome));
        assertTrue(((Throwable) outcome).getMessage().contains("condition 'c'"));
        assertEquals(0, (int) onDispatcher(group, c::waiterCount));
    }

    @Test
    void signalWithoutWaitersIsNotRemembered() throws Exception {
        FiberCondition c = group.newCondition("c");
        c.fireSignalAll();
        assertEquals(Boolean.FALSE, get(run("late", awaitFrame(c, null, 10, null, null))));
    }

    static <T> T get0(CompletableFuture<T> cf) {
        try {
            return get(cf);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
