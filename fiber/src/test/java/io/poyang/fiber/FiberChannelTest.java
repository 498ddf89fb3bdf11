package io.poyang.fiber;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FiberChannelTest extends FiberTestSupport {

    /** Takes {@code count} items one by one (timed if timeoutMillis >= 0); a null ends it early. */
    static <T> FiberFrame<List<T>> takeFrame(FiberChannel<T> channel, int count, long timeoutMillis) {
        return new FiberFrame<List<T>>() {
            final List<T> items = new ArrayList<>();

            @Override
            public FrameCallResult execute(Object input) {
                return next();
            }

            private FrameCallResult next() {
                if (items.size() == count) {
                    return Fiber.frameReturn(items);
                }
                return timeoutMillis < 0 ? channel.take(this::onItem) : channel.take(timeoutMillis, this::onItem);
            }

            private FrameCallResult onItem(T item) {
                if (item == null) {
                    return Fiber.frameReturn(items);
                }
                items.add(item);
                return next();
            }
        };
    }

    @Test
    void takeReturnsItemsInOfferOrderAndWaitsWhenEmpty() throws Exception {
        FiberChannel<Integer> ch = group.newChannel("numbers");
        CompletableFuture<List<Integer>> taken = run("taker", takeFrame(ch, 5, -1));
        run("offerer", new FiberFrame<Void>() {
            int i;

            @Override
            public FrameCallResult execute(Object input) {
                ch.offer(i++);
                ch.offer(i++);
                return Fiber.yield(this::more);
            }

            private FrameCallResult more(Void v) {
                if (i == 5) {
                    return Fiber.frameReturn();
                }
                ch.offer(i++);
                return Fiber.yield(this::more);
            }
        });
        assertEquals(List.of(0, 1, 2, 3, 4), get(taken));
    }

    @Test
    void takeAllHandsOverEverythingQueuedInOneResumption() throws Exception {
        FiberChannel<String> ch = group.newChannel("batch");
        List<List<String>> batches = new ArrayList<>();
        CompletableFuture<Void> done = run("leader", new FiberFrame<Void>() {
            final List<String> batch = new ArrayList<>();

            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, this::onBatch);
            }

            private FrameCallResult onBatch(Void v) {
                batches.add(new ArrayList<>(batch));
                batch.clear();
                if (batches.size() == 2) {
                    return Fiber.frameReturn();
                }
                return ch.takeAll(batch, this::onBatch);
            }
        });
        // The leader is waiting. One step offers three items: the first wakes it, all three reach it together.
        waitUntil("the leader waits", () -> snapshotState("leader").equals("waiting"));
        onDispatcher(group, () -> {
            ch.offer("a");
            ch.offer("b");
            ch.offer("c");
            return null;
        });
        waitUntil("the leader waits again", () -> batches.size() == 1 && snapshotState("leader").equals("waiting"));
        ch.fireOffer("d");
        get(done);
        assertEquals(List.of(List.of("a", "b", "c"), List.of("d")), batches);
    }

    private String snapshotState(String fiberName) {
        try {
            FiberGroupSnapshot.FiberInfo f = get(group.snapshot()).fiber(fiberName);
            return f == null ? "gone" : f.state();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void takeAllTakesWhatIsAlreadyQueuedWithoutWaiting() throws Exception {
        FiberChannel<Integer> ch = group.newChannel("queued");
        List<Integer> batch = new ArrayList<>();
        CompletableFuture<Integer> size = run("t", new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                for (int i = 0; i < 100; i++) {
                    ch.offer(i);
                }
                return ch.takeAll(batch, v -> Fiber.frameReturn(batch.size()));
            }
        });
        assertEquals(100, get(size));
    }

    @Test
    void timedTakeResumesWithNullAndTimedTakeAllWithNothing() throws Exception {
        FiberChannel<String> ch = group.newChannel("empty");
        long start = System.nanoTime();
        assertEquals(List.of(), get(run("t", takeFrame(ch, 1, 20))));
        List<String> batch = new ArrayList<>();
        assertEquals(0, get(run("ta", new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, 20, v -> Fiber.frameReturn(batch.size()));
            }
        })));
        assertTrue((System.nanoTime() - start) / 1_000_000 >= 40);
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount));
    }

    @Test
    void timedTakeGetsAnItemThatArrivesInTime() throws Exception {
        FiberChannel<String> ch = group.newChannel("in-time");
        CompletableFuture<List<String>> taken = run("t", takeFrame(ch, 1, 60_000));
        waitUntil("the taker waits", () -> snapshotState("t").equals("waiting"));
        ch.fireOffer("x");
        assertEquals(List.of("x"), get(taken));
        assertEquals(0, (int) onDispatcher(group, dispatcher::timerCount));
    }

    @Test
    void fireOfferFromFourThreadsUnderContentionDeliversEveryItemInPerThreadOrder() throws Exception {
        int threads = 4;
        int perThread = 100_000;
        FiberChannel<long[]> ch = group.newChannel("contended");
        CompletableFuture<long[]> result = run("consumer", new FiberFrame<long[]>() {
            final List<long[]> batch = new ArrayList<>();
            final long[] nextSeq = new long[threads];
            long received;
            long batches;

            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, this::onBatch);
            }

            private FrameCallResult onBatch(Void v) {
                batches++;
                for (long[] item : batch) {
                    int t = (int) item[0];
                    if (item[1] != nextSeq[t]) {
                        throw new AssertionError("thread " + t + " item " + item[1] + " arrived when "
                                + nextSeq[t] + " was expected");
                    }
                    nextSeq[t]++;
                    received++;
                }
                batch.clear();
                if (received == (long) threads * perThread) {
                    return Fiber.frameReturn(new long[]{received, batches});
                }
                return ch.takeAll(batch, this::onBatch);
            }
        });
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread p = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    ch.fireOffer(new long[]{id, i});
                }
            }, "producer-" + t);
            p.start();
            producers.add(p);
        }
        go.countDown();
        for (Thread p : producers) {
            p.join();
        }
        long[] outcome = get(result);
        assertEquals((long) threads * perThread, outcome[0]);
        assertTrue(outcome[1] < outcome[0], "items were batched: " + outcome[1] + " batches");
    }

    @Test
    void shutdownWakesTakersWithNothingAndLaterTakesDoNotWait() throws Exception {
        FiberChannel<String> ch = group.newChannel("idle");
        List<String> batch = new ArrayList<>();
        CompletableFuture<Object[]> taker = run("taker", new FiberFrame<Object[]>() {
            Object first;

            @Override
            public FrameCallResult execute(Object input) {
                return ch.take(this::afterTake);
            }

            private FrameCallResult afterTake(String item) {
                first = item;
                return ch.takeAll(batch, this::afterTakeAll);
            }

            private FrameCallResult afterTakeAll(Void v) {
                return Fiber.frameReturn(new Object[]{first, batch.size(), getGroup().isShouldStop()});
            }
        });
        CompletableFuture<Integer> allTaker = run("all-taker", new FiberFrame<Integer>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, v -> Fiber.frameReturn(batch.size()));
            }
        });
        waitUntil("both wait", () -> snapshotState("taker").equals("waiting")
                && snapshotState("all-taker").equals("waiting"));
        group.requestShutdown();
        Object[] outcome = get(taker);
        assertNull(outcome[0]);
        assertEquals(0, outcome[1]);
        assertEquals(true, outcome[2]);
        assertEquals(0, get(allTaker));
        get(group.shutdownFuture());
    }

    @Test
    void aClosedChannelHandsQueuedAndLaterItemsToItsRejecter() throws Exception {
        FiberChannel<Integer> ch = group.newChannel("closing");
        List<Integer> rejected = java.util.Collections.synchronizedList(new ArrayList<>());
        onDispatcher(group, () -> {
            ch.offer(1);
            ch.offer(2);
            ch.close(rejected::add);
            ch.offer(3);
            return null;
        });
        ch.fireOffer(4);   // from another thread, after the close
        waitUntil("the late item to reach the rejecter", () -> rejected.size() == 4);
        assertEquals(java.util.Arrays.asList(1, 2, 3, 4), rejected);
        assertEquals(0, (int) onDispatcher(group, ch::size), "nothing stays queued");
    }

    @Test
    void aTakeAllWokenByAnItemGetsItEvenIfAnotherFiberTakesRightAfter() throws Exception {
        FiberChannel<String> ch = onDispatcher(group, () -> group.newChannel("shared"));
        List<String> batch = new ArrayList<>();
        CompletableFuture<Void> batcher = run("batcher", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, v -> Fiber.frameReturn());
            }
        });
        waitUntil("the batcher waits", () -> snapshotState("batcher").equals("waiting"));
        CompletableFuture<String> other = run("offers-then-takes", new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                ch.offer("x");
                return ch.take(1, s -> Fiber.frameReturn(s));
            }
        });
        get(batcher);
        assertEquals(List.of("x"), batch);
        assertNull(get(other), "the item went to the batcher that was waiting for it");
    }

    @Test
    void closingAChannelWakesItsWaitingTakerWithNothing() throws Exception {
        FiberChannel<String> ch = onDispatcher(group, () -> group.newChannel("closing"));
        CompletableFuture<String> taker = run("taker", new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.take(s -> Fiber.frameReturn(s));
            }
        });
        waitUntil("the taker waits", () -> snapshotState("taker").equals("waiting"));
        List<String> rejected = new ArrayList<>();
        onDispatcher(group, () -> {
            ch.close(rejected::add);
            ch.offer("late");
            return null;
        });
        assertNull(get(taker));
        assertEquals(List.of("late"), onDispatcher(group, () -> new ArrayList<>(rejected)));
    }

    @Test
    void aTakeOnAClosedChannelReturnsAtOnceWithNothing() throws Exception {
        FiberChannel<String> ch = onDispatcher(group, () -> group.newChannel("closed"));
        onDispatcher(group, () -> {
            ch.close(s -> { });
            return null;
        });
        assertTrue(onDispatcher(group, ch::isClosed));
        CompletableFuture<String> take = run("late-taker", new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.take(s -> Fiber.frameReturn(s));
            }
        });
        assertNull(get(take), "a take on a closed channel waited (nothing could ever wake it)");
        List<String> batch = new ArrayList<>();
        get(run("late-batch-taker", new FiberFrame<Void>() {
            @Override
            public FrameCallResult execute(Object input) {
                return ch.takeAll(batch, v -> Fiber.frameReturn());
            }
        }));
        assertTrue(batch.isEmpty());
    }

    @Test
    void aTakeFromAnotherGroupsChannelDuringTheTakersShutdownDoesNotHoldTheShutdown() throws Exception {
        FiberGroup other = new FiberGroup("other", dispatcher);
        get(dispatcher.startGroup(other));
        FiberChannel<String> foreign = onDispatcher(other, () -> other.newChannel("foreign"));
        FiberCondition go = onDispatcher(group, () -> group.newCondition("go"));
        CompletableFuture<String> taker = run("foreign-taker", new FiberFrame<String>() {
            @Override
            public FrameCallResult execute(Object input) {
                return go.await(v -> foreign.take(s -> Fiber.frameReturn(s)));
            }
        });
        waitUntil("the taker waits for its signal", () -> snapshotState("foreign-taker").equals("waiting"));
        group.requestShutdown();
        go.fireSignal();   // it takes from the other group's channel only now, during its own group's shutdown
        assertNull(get(taker));
        get(group.shutdownFuture());
        assertFalse(other.isShouldStop());
    }

    @Test
    void itemsOfferedFromAnotherThreadAfterTheDispatcherStoppedAreNotKept() throws Exception {
        FiberChannel<Object> ch = onDispatcher(group, () -> group.newChannel("late"));
        dispatcher.stop();
        // Nothing drains the channel any more. Each item is dropped as it comes (with a warning);
        // once only the first was, and the later ones piled up in the channel for good.
        List<java.lang.ref.WeakReference<Object>> offered = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Object item = new byte[1 << 20];
            offered.add(new java.lang.ref.WeakReference<>(item));
            ch.fireOffer(item);
        }
        waitUntil("every item offered after the stop to be unreachable", () -> {
            System.gc();
            return offered.stream().allMatch(r -> r.get() == null);
        });
        assertTrue(ch.toString().contains("late"), "the channel itself is still there: " + ch);
    }
}
