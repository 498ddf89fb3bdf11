package io.poyang.dtkv.client;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application's bounded callback executor that is full rejects the client's tasks. Nothing may
 * then run on the thread that handed the task over (the client's I/O thread, which must not block),
 * and events must still run one at a time, in order: before, a rejected drain of the event queue
 * ran on the submitting thread while a second drain started on the executor once it had room.
 * No cluster: the client is made but never started, and its tasks are handed over as the I/O
 * thread would (a push's listener task, an operation's callback).
 */
class RejectingCallbackExecutorTest {

    /** A bounded pool as the application might pass: rejects while full, else a thread per task. */
    private static final class BoundedPool implements Executor {
        volatile boolean full;
        final AtomicInteger accepted = new AtomicInteger();

        @Override
        public void execute(Runnable task) {
            if (full) {
                throw new RejectedExecutionException("the application's pool is full");
            }
            accepted.incrementAndGet();
            Thread t = new Thread(task, "app-pool");
            t.setDaemon(true);
            t.start();
        }
    }

    private static KvClient client(Executor callbacks) {
        return new KvClient(new KvClientConfig().servers("127.0.0.1:1").callbackExecutor(callbacks));
    }

    @Test
    void eventsRunOneAtATimeInOrderAndNotOnTheSubmittingThreadWhenTheExecutorRejects() throws Exception {
        BoundedPool pool = new BoundedPool();
        pool.full = true;
        KvClient kv = client(pool);
        CountDownLatch gate = new CountDownLatch(1);
        try {
            List<String> order = new CopyOnWriteArrayList<>();
            AtomicInteger runningNow = new AtomicInteger();
            AtomicBoolean overlapped = new AtomicBoolean();
            AtomicReference<Thread> firstRanOn = new AtomicReference<>();
            CountDownLatch firstStarted = new CountDownLatch(1);
            CountDownLatch secondDone = new CountDownLatch(1);
            Runnable first = () -> {
                overlapped.compareAndSet(false, runningNow.incrementAndGet() > 1);
                firstRanOn.set(Thread.currentThread());
                firstStarted.countDown();
                awaitQuietly(gate);
                order.add("first");
                runningNow.decrementAndGet();
            };
            Runnable second = () -> {
                overlapped.compareAndSet(false, runningNow.incrementAndGet() > 1);
                order.add("second");
                runningNow.decrementAndGet();
                secondDone.countDown();
            };

            Thread io = new Thread(() -> kv.shared.eventExecutor.execute(first), "io");
            io.start();
            assertTrue(firstStarted.await(10, TimeUnit.SECONDS), "the first event never ran");
            assertNotSame(io, firstRanOn.get(), "the first event ran on the thread that handed it over (the I/O thread)");

            pool.full = false;   // the pool has room again while the first event still runs
            kv.shared.eventExecutor.execute(second);
            assertEquals(0, pool.accepted.get(),
                    "a second drain of the event queue was handed to the executor while the first event still ran");

            gate.countDown();
            assertTrue(secondDone.await(10, TimeUnit.SECONDS), "the second event never ran");
            assertEquals(Arrays.asList("first", "second"), order);
            assertFalse(overlapped.get(), "two events ran at once");
        } finally {
            gate.countDown();
            kv.close();
        }
    }

    @Test
    void anOperationCallbackTheExecutorRejectsDoesNotRunOnTheSubmittingThread() throws Exception {
        BoundedPool pool = new BoundedPool();
        pool.full = true;
        KvClient kv = client(pool);
        CountDownLatch gate = new CountDownLatch(1);
        try {
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            KvCallback<String> slowCallback = new KvCallback<String>() {
                @Override
                public void onSuccess(String result) {
                    ranOn.set(Thread.currentThread());
                    started.countDown();
                    awaitQuietly(gate);
                }

                @Override
                public void onFailure(Throwable error) {
                }
            };
            Thread io = new Thread(() -> kv.deliver(slowCallback, "answer", null), "io");
            io.start();
            assertTrue(started.await(10, TimeUnit.SECONDS), "the callback never ran");
            assertNotSame(io, ranOn.get(), "the callback ran on the thread that handed it over (the I/O thread)");
            io.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(io.isAlive(), "the submitting thread waited for the callback");
        } finally {
            gate.countDown();
            kv.close();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
