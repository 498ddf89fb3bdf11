package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FiberFutureTest extends FiberTestSupport {

    /** Awaits the future (optionally with a timeout) and returns its value. */
    static <T> FiberFrame<T> awaitFrame(FiberFuture<T> future, long timeoutMillis) {
        return new FiberFrame<T>() {
            @Override
            public FrameCallResult execute(Object input) {
                return timeoutMillis < 0 ? future.await(this::done) : future.await(timeoutMillis, this::done);
            }

            private FrameCallResult done(T value) {
                return Fiber.frameReturn(value);
            }
        };
    }

    /** Waits until {@code count} fibers of the group are suspended in a wait (not just started). */
    private void awaitWaiting(int count) throws InterruptedException {
        waitUntil(count + " fibers waiting", () -> {
            try {
                return onDispatcher(group, () -> group.takeSnapshot().fibers().stream()
                        .filter(f -> "waiting".equals(f.state())).count() == count);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void awaitResumesWithTheValueWhenCompletedLater() throws Exception {
        FiberFuture<String> future = group.newFuture("later");
        CompletableFuture<String> result = run("waiter", awaitFrame(future, -1));
        // Complete from a second fiber, after the first one has started waiting.
        run("completer", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return Fiber.yield(v -> {
                    future.complete("hello");
                    return Fiber.frameReturn();
                });
            }
        });
        assertEquals("hello", get(result));
    }

    @Test
    void awaitOnACompletedFutureContinuesAtOnce() throws Exception {
        FiberFuture<Integer> done = FiberFuture.completedFuture(group, 7);
        assertEquals(7, get(run("waiter", awaitFrame(done, -1))));
    }

    @Test
    void aFailedFutureDeliversItsErrorToHandle() throws Exception {
        FiberFuture<String> future = group.newFuture("fails");
        CompletableFuture<String> result = run("waiter", awaitFrame(future, -1));
        IOException error = new IOException("disk gone");
        future.fireCompleteExceptionally(error);
        assertSame(error, failure(result));
    }

    @Test
    void awaitWithTimeoutFailsWithFiberTimeoutException() throws Exception {
        FiberFuture<String> never = group.newFuture("never");
        long start = System.nanoTime();
        Throwable e = failure(run("waiter", awaitFrame(never, 30)));
        long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(e instanceof FiberTimeoutException, e.toString());
        assertTrue(e.getMessage().contains("future 'never'") && e.getMessage().contains("waiter"), e.getMessage());
        assertTrue(elapsedMillis >= 30, "timed out after " + elapsedMillis + " ms");
    }

    @Test
    void awaitWithTimeoutGetsTheValueWhenItComesInTime() throws Exception {
        FiberFuture<String> future = group.newFuture("in-time");
        CompletableFuture<String> result = run("waiter", awaitFrame(future, 60_000));
        awaitWaiting(1);   // suspended with its timer set, so the completion takes the wake-up path
        assertEquals(1, (int) onDispatcher(group, dispatcher::timerCount), "the wait's timer is set");
        future.fireComplete("value");
        assertEquals("value", get(result));
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount), "the timer was cancelled");
    }

    @Test
    void fireCompleteFromAnotherThreadWakesTheWaiter() throws Exception {
        FiberFuture<Integer> future = group.newFuture("cross-thread");
        CompletableFuture<Integer> result = run("waiter", awaitFrame(future, -1));
        awaitWaiting(1);   // the completion must wake a suspended fiber, not find it not yet waiting
        Thread t = new Thread(() -> future.fireComplete(99), "completer");
        t.start();
        t.join();
        assertEquals(99, get(result));
    }

    @Test
    void aFutureCompletesOnlyOnce() throws Exception {
        FiberFuture<String> future = group.newFuture("once");
        List<Boolean> outcomes = onDispatcher(group, () -> List.of(future.complete("first"),
                future.complete("second"), future.completeExceptionally(new IOException("late"))));
        assertEquals(List.of(true, false, false), outcomes);
        assertEquals("first", onDispatcher(group, future::getResult));
    }

    @Test
    void callbacksRunOnCompletionAndAtOnceWhenAlreadyDone() throws Exception {
        FiberFuture<String> future = group.newFuture("callbacks");
        List<String> calls = new ArrayList<>();
        onDispatcher(group, () -> {
            future.whenComplete((v, e) -> calls.add("first:" + v));
            future.whenComplete((v, e) -> calls.add("second:" + v));
            future.whenComplete((v, e) -> {
                throw new IllegalStateException("a failing callback does not stop the others");
            });
            future.whenComplete((v, e) -> calls.add("third:" + v));
            calls.add("registered");
            future.complete("x");
            future.whenComplete((v, e) -> calls.add("late:" + v));
            return null;
        });
        assertEquals(List.of("registered", "first:x", "second:x", "third:x", "late:x"), calls);
    }

    @Test
    void thenApplyAndComposeChainFutures() throws Exception {
        FiberFuture<Integer> source = group.newFuture("source");
        FiberFuture<String> next = group.newFuture("next");
        FiberFuture<String> chained = onDispatcher(group, () -> source
                .thenApply("doubled", v -> v * 2)
                .compose("composed", v -> next.thenApply("joined", s -> s + v)));
        CompletableFuture<String> result = run("waiter", awaitFrame(chained, -1));
        source.fireComplete(21);
        next.fireComplete("answer=");
        assertEquals("answer=42", get(result));
    }

    @Test
    void composePassesErrorsThrough() throws Exception {
        FiberFuture<Integer> source = group.newFuture("source");
        FiberFuture<Integer> chained = onDispatcher(group, () -> source.compose("composed",
                v -> FiberFuture.completedFuture(group, v + 1)));
        CompletableFuture<Integer> result = run("waiter", awaitFrame(chained, -1));
        source.fireCompleteExceptionally(new IOException("source failed"));
        assertEquals("source failed", failure(result).getMessage());
    }

    @Test
    void allOfWaitsForEveryFutureAndReportsTheFirstError() throws Exception {
        FiberFuture<Integer> a = group.newFuture("a");
        FiberFuture<Integer> b = group.newFuture("b");
        FiberFuture<Integer> c = group.newFuture("c");
        FiberFuture<Void> all = onDispatcher(group, () -> FiberFuture.allOf("all", group, a, b, c));
        CompletableFuture<Void> result = run("waiter", awaitFrame(all, -1));
        c.fireCompleteExceptionally(new IOException("c failed"));
        a.fireComplete(1);
        assertFalse(onDispatcher(group, all::isDone), "all must wait for b");
        b.fireCompleteExceptionally(new IOException("b failed"));
        assertEquals("b failed", failure(result).getMessage(), "the first error in argument order");

        FiberFuture<Void> allGood = onDispatcher(group, () -> FiberFuture.allOf("good", group,
                FiberFuture.completedFuture(group, 1), FiberFuture.completedFuture(group, 2)));
        assertTrue(onDispatcher(group, () -> allGood.isDone() && allGood.getException() == null));
    }

    @Test
    void toCompletableFutureLetsOtherThreadsWait() throws Exception {
        FiberFuture<String> future = group.newFuture("bridge");
        CompletableFuture<String> cf = future.toCompletableFuture();
        future.fireComplete("out");
        assertEquals("out", get(cf));
    }

    @Test
    void aBridgeOfAFutureNeverCompletedFailsWhenTheDispatcherStops() throws Exception {
        FiberFuture<String> future = group.newFuture("never");
        CompletableFuture<String> cf = future.toCompletableFuture();
        onDispatcher(group, () -> 0);   // the bridge is registered
        dispatcher.stop();
        assertTrue(failure(cf) instanceof io.poyang.common.StoppedException, "a waiter outside the fibers is released");
        future.fireComplete("late");    // nobody can see it now; it must not throw
    }

    @Test
    void executeBlockingRunsOnTheExecutorAndResumesOnTheDispatcher() throws Exception {
        ExecutorService io = Executors.newSingleThreadExecutor(r -> new Thread(r, "blocking-io"));
        try {
            String[] ranOn = new String[2];
            FiberFrame<String> frame = new FiberFrame<String>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return getGroup().executeBlocking("read", io, () -> {
                        ranOn[0] = Thread.currentThread().getName();
                        return "bytes";
                    }).await(this::afterRead);
                }

                private FrameCallResult afterRead(String value) {
                    ranOn[1] = Thread.currentThread().getName();
                    return Fiber.frameReturn(value);
                }
            };
            assertEquals("bytes", get(run("reader", frame)));
            assertEquals("blocking-io", ranOn[0]);
            assertEquals("test-dispatcher", ranOn[1]);

            FiberFuture<String> failing = group.executeBlocking("fail", io, () -> {
                throw new IOException("fsync failed");
            });
            assertEquals("fsync failed", failure(run("w", awaitFrame(failing, -1))).getMessage());
        } finally {
            io.shutdownNow();
        }
        FiberFuture<String> rejected = group.executeBlocking("rejected", io, () -> "never");
        assertTrue(failure(run("r", awaitFrame(rejected, -1))) instanceof RejectedExecutionException);
    }

    @Test
    void waitersAreWokenInOrderAndEachGetsTheValue() throws Exception {
        FiberFuture<Integer> future = group.newFuture("shared");
        List<CompletableFuture<Integer>> results = new ArrayList<>();
        List<Integer> wokenOrder = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 5; i++) {
            int me = i;
            results.add(run("waiter-" + i, new FiberFrame<Integer>() {
                @Override
                public FrameCallResult execute(Object input) {
                    return future.await(v -> {
                        wokenOrder.add(me);
                        return Fiber.frameReturn(v);
                    });
                }
            }));
            awaitWaiting(i + 1);   // waiter i waits before waiter i + 1 starts
        }
        future.fireComplete(5);
        for (CompletableFuture<Integer> r : results) {
            assertEquals(5, get(r));
        }
        assertEquals(List.of(0, 1, 2, 3, 4), wokenOrder, "woken in the order they started waiting");
        assertNotEquals(0, dispatcher.stepCount());
    }
}
