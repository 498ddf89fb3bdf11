package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every fire* entry used from four threads at once while the group is busy. */
class CrossThreadFireTest extends FiberTestSupport {

    private static final int THREADS = 4;
    private static final int PER_THREAD = 5_000;

    @Test
    void fireCompleteFireFiberAndFireSignalFromFourThreadsUnderContention() throws Exception {
        int total = THREADS * PER_THREAD;
        List<FiberFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            futures.add(group.newFuture("f" + i));
        }
        FiberCondition signalled = group.newCondition("signalled");
        int[] sum = {0};
        int[] fibersRun = {0};
        int[] signalsSeen = {0};
        // One fiber awaits every future in turn, so completions race with its waits.
        CompletableFuture<Integer> awaited = run("awaiter", new FiberFrame<Integer>() {
            int next;

            @Override
            public FrameCallResult execute(Object input) {
                return futures.get(next).await(this::got);
            }

            private FrameCallResult got(Integer v) {
                sum[0] += v;
                return ++next == total ? Fiber.frameReturn(sum[0]) : futures.get(next).await(this::got);
            }
        });
        // Another waits on the condition with a timeout and counts wakeups.
        AtomicInteger signalsSent = new AtomicInteger();
        CompletableFuture<Void> signalWaiter = run("signal-waiter", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return signalled.await(1, this::woke);
            }

            private FrameCallResult woke(Boolean bySignal) {
                if (bySignal) {
                    signalsSeen[0]++;
                }
                return fibersRun[0] == total && signalsSent.get() == total
                        ? Fiber.frameReturn() : signalled.await(1, this::woke);
            }
        });
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = id; i < total; i += THREADS) {
                    futures.get(i).fireComplete(1);
                    group.fireFiber("tiny-" + i, new FiberFrame<Void>() {
                        @Override
                        public FrameCallResult execute(Object input) {
                            fibersRun[0]++;
                            return Fiber.frameReturn();
                        }
                    });
                    signalled.fireSignal();
                    signalsSent.incrementAndGet();
                }
            }, "firer-" + t);
            th.start();
            threads.add(th);
        }
        go.countDown();
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(total, get(awaited));
        get(signalWaiter);
        assertEquals(total, onDispatcher(group, () -> fibersRun[0]));
        // Signals are not remembered, so the waiter sees at most one per fireSignal; it saw some.
        int seen = onDispatcher(group, () -> signalsSeen[0]);
        assertEquals(true, seen > 0 && seen <= total, seen + " signals seen");
    }
}
