package io.poyang.dtkv.client;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs tasks one at a time, in submission order, on an underlying executor (which may have many
 * threads): watch and lock listeners must see events in the order they happened.
 */
final class SerialExecutor implements Executor {

    private static final PoyangLog log = PoyangLogs.get(SerialExecutor.class);

    private final Executor executor;
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();

    SerialExecutor(Executor executor) {
        this.executor = executor;
    }

    @Override
    public void execute(Runnable task) {
        queue.add(task);
        schedule();
    }

    private void schedule() {
        if (!queue.isEmpty() && running.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RuntimeException e) {
                running.set(false);
                drain0();   // the executor refused (shut down): run here rather than lose events
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
