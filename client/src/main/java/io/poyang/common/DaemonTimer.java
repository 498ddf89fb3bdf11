package io.poyang.common;

import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one-thread timer the clients and the replication transport keep for retries, back-offs and
 * delays: a daemon thread (it never keeps a JVM alive), and cancelled tasks leave its queue at once
 * (a client that cancels a timeout per request would otherwise fill it with dead entries).
 */
public final class DaemonTimer {

    private DaemonTimer() {
    }

    /** A new timer whose thread is called {@code threadName}; shut it down with {@code shutdownNow}. */
    public static ScheduledExecutorService create(String threadName) {
        ScheduledThreadPoolExecutor t = new KeepingTimer(threadName);
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /**
     * Runs, on the calling thread, the tasks that {@code shutdownNow} took out of a timer made by
     * {@link #create}. Each is a retry, back-off or deadline of some request; run once its client
     * has stopped, it ends that request (the send is refused, and so is scheduling another try), so
     * that no caller waits forever on a request whose next try was thrown away. Call it after the
     * network has stopped. (The timer's own wrappers would only cancel themselves once it is shut
     * down, so the tasks as they were given are run.)
     */
    public static void runDropped(List<Runnable> dropped) {
        for (Runnable r : dropped) {
            if (r instanceof KeptTask) {
                try {
                    ((KeptTask<?>) r).task.run();
                } catch (RuntimeException e) {
                    // the request it belonged to fails its own way; the others still run
                }
            }
        }
    }

    private static final class KeepingTimer extends ScheduledThreadPoolExecutor {
        KeepingTimer(String threadName) {
            super(1, r -> {
                Thread th = new Thread(r, threadName);
                th.setDaemon(true);
                return th;
            });
        }

        @Override
        protected <V> RunnableScheduledFuture<V> decorateTask(Runnable r, RunnableScheduledFuture<V> scheduled) {
            return new KeptTask<>(r, scheduled, this);
        }
    }

    /** The executor's scheduled future, with the task it runs kept for {@link #runDropped}. */
    private static final class KeptTask<V> implements RunnableScheduledFuture<V> {
        final Runnable task;
        private final RunnableScheduledFuture<V> scheduled;
        private final ScheduledThreadPoolExecutor timer;

        KeptTask(Runnable task, RunnableScheduledFuture<V> scheduled, ScheduledThreadPoolExecutor timer) {
            this.task = task;
            this.scheduled = scheduled;
            this.timer = timer;
        }

        @Override
        public boolean isPeriodic() {
            return scheduled.isPeriodic();
        }

        @Override
        public void run() {
            scheduled.run();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return scheduled.getDelay(unit);
        }

        @Override
        public int compareTo(Delayed o) {
            return scheduled.compareTo(o instanceof KeptTask ? ((KeptTask<?>) o).scheduled : o);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = scheduled.cancel(mayInterruptIfRunning);
            if (cancelled) {
                // the queue holds this wrapper, which the executor's own removal on cancel does not
                // find; cancels are rare here (lock timers), so a scan of the queue is fine
                timer.remove(this);
            }
            return cancelled;
        }

        @Override
        public boolean isCancelled() {
            return scheduled.isCancelled();
        }

        @Override
        public boolean isDone() {
            return scheduled.isDone();
        }

        @Override
        public V get() throws InterruptedException, ExecutionException {
            return scheduled.get();
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            return scheduled.get(timeout, unit);
        }
    }
}
