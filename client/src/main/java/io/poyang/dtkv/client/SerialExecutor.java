package io.poyang.dtkv.client;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs tasks one at a time, in submission order, on an underlying executor (which may have many
 * threads): watch and lock listeners must see events in the order they happened. One drain of the
 * queue at a time runs on the executor ({@code running}); the executor must not reject it (the
 * client gives a {@link CallbackExecutor}, which runs what the application's executor rejects on
 * threads of its own), and it should not run it on the calling thread, which for a push is the
 * client's I/O thread (an application's executor with a caller-runs policy does; the user guide
 * says not to).
 */
final class SerialExecutor implements Executor {

    private static final PoyangLog log = PoyangLogs.get(SerialExecutor.class);

    private final CallbackExecutor executor;
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();

    SerialExecutor(CallbackExecutor executor) {
        this.executor = executor;
    }

    @Override
    public void execute(Runnable task) {
        queue.add(task);
        schedule();
    }

    private void schedule() {
        if (!queue.isEmpty() && running.compareAndSet(false, true)) {
            boolean handedOver = false;
            try {
                executor.execute(this::drain);
                handedOver = true;
            } finally {
                // Not expected (a CallbackExecutor does not reject). Never drain here instead: this may be
                // the I/O thread, and a drain started by another thread meanwhile would run next to it.
                // The tasks stay queued for the next execute.
                if (!handedOver) {
                    running.set(false);
                }
            }
        }
    }

    private void drain() {
        try {
            drain0();
        } finally {
            running.set(false);
            schedule();
        }
    }

    private void drain0() {
        Runnable r;
        while ((r = queue.poll()) != null) {
            try {
                r.run();
            } catch (Throwable t) {
                log.warn("a DtKV listener threw", t);
            }
        }
    }
}
