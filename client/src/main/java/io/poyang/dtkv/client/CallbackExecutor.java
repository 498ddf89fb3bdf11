package io.poyang.dtkv.client;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client's callback executor: the application's (or the common pool), and threads of the
 * client's own for the tasks it rejects (a bounded pool that is full, or one shut down before the
 * client). A rejected task never runs on the thread that handed it over: for answers and pushes
 * that is the client's I/O thread, which a callback or listener must not block, and an event run
 * there while the event queue is drained elsewhere would run next to another and out of order.
 *
 * <p>The overflow threads ({@code <name>-kv-overflow-N}) start when needed and end after a minute
 * idle; their number is not bounded, because a callback may block on another operation of this
 * client, whose own callback must not wait behind it. A rejection is counted and logged (a warning
 * at most once a minute): the executor is too small for the client, and its bound does not hold for
 * what overflows.
 */
final class CallbackExecutor implements Executor {

    private static final PoyangLog log = PoyangLogs.get(CallbackExecutor.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Executor executor;
    private final ExecutorService overflow;
    private final AtomicLong overflowed = new AtomicLong();
    private final AtomicLong lastWarnNanos = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    CallbackExecutor(Executor executor, String clientName) {
        this.executor = executor;
        AtomicInteger threads = new AtomicInteger();
        this.overflow = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                r -> {
                    Thread t = new Thread(r, clientName + "-kv-overflow-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    @Override
    public void execute(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            long n = overflowed.incrementAndGet();
            long last = lastWarnNanos.get();
            long now = System.nanoTime();
            if (now - last >= WARN_EVERY_NANOS && lastWarnNanos.compareAndSet(last, now)) {
                log.warn("the callback executor rejected a task ({}); it runs on a thread of the client's own"
                        + " ({} so far). Give the client an executor that does not reject", e.toString(), n);
            }
            overflow.execute(task);
        }
    }
}
