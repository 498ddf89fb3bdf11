package io.poyang.fiber;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A value of a {@link FiberGroup} that will be there later. Fibers wait for it with
 * {@link #await(FrameCall)}; code on the dispatcher thread completes it with {@link #complete} and
 * other threads with {@link #fireComplete} (an I/O thread finishing a write, an executor finishing
 * blocking work). Completes once; later completions are ignored and return false.
 *
 * <p>Waiting for a future is waiting for a value, so a timed-out await fails with a
 * {@link FiberTimeoutException} (delivered to the waiting frame's {@code handle}); a failed future
 * delivers its error the same way.
 *
 * <p>Everything but {@code fire*}, {@link #toCompletableFuture()} and {@link #getName()} must run
 * on the group's dispatcher thread.
 */
public final class FiberFuture<T> {

    private static final PoyangLog log = PoyangLogs.get(FiberFuture.class);

    private final String name;
    private final FiberGroup group;
    private boolean done;
    private T value;
    private Throwable error;
    private WaitQueue waiters;
    /** The first callback has its own field: most futures have at most one. */
    private BiConsumer<? super T, Throwable> callback;
    private List<BiConsumer<? super T, Throwable>> moreCallbacks;

    FiberFuture(String name, FiberGroup group) {
        this.name = name;
        this.group = group;
    }

    /** A future of {@code group} that is already complete with {@code value}. */
    public static <T> FiberFuture<T> completedFuture(FiberGroup group, T value) {
        FiberFuture<T> f = new FiberFuture<>("completed", group);
        f.done = true;
        f.value = value;
        return f;
    }

    /** A future of {@code group} that has already failed with {@code error}. */
    public static <T> FiberFuture<T> failedFuture(FiberGroup group, Throwable error) {
        FiberFuture<T> f = new FiberFuture<>("failed", group);
        f.done = true;
        f.error = error;
        return f;
    }

    public String getName() {
        return name;
    }

    public FiberGroup getGroup() {
        return group;
    }

    public boolean isDone() {
        group.checkThread("FiberFuture.isDone");
        return done;
    }

    /** The value, or null if not done or failed. */
    public T getResult() {
        group.checkThread("FiberFuture.getResult");
        return value;
    }

    /** The error, or null if not done or succeeded. */
    public Throwable getException() {
        group.checkThread("FiberFuture.getException");
        return error;
    }

    // ---------------------------------------------------------------- completion

    /** Completes with {@code value}, waking the waiters and running the callbacks. Dispatcher thread. */
    public boolean complete(T value) {
        group.checkThread("FiberFuture.complete");
        return complete0(value, null);
    }

    /** Fails with {@code error}. Dispatcher thread. */
    public boolean completeExceptionally(Throwable error) {
        group.checkThread("FiberFuture.completeExceptionally");
        if (error == null) {
            throw new IllegalArgumentException("a future fails with an error, not null");
        }
        return complete0(null, error);
    }

    /** Completes with {@code value} from any thread (at once on the dispatcher thread, else through its inbox). */
    public void fireComplete(T value) {
        if (group.dispatcher.isInDispatcherThread()) {
            complete0(value, null);
        } else if (!group.dispatcher.post(() -> complete0(value, null))) {
            log.warn("{} completed after dispatcher '{}' stopped; nobody will see it", this,
                    group.dispatcher.getName());
        }
    }

    /** Fails with {@code error} from any thread. */
    public void fireCompleteExceptionally(Throwable error) {
        if (error == null) {
            throw new IllegalArgumentException("a future fails with an error, not null");
        }
        if (group.dispatcher.isInDispatcherThread()) {
            complete0(null, error);
        } else if (!group.dispatcher.post(() -> complete0(null, error))) {
            log.warn("{} failed after dispatcher '{}' stopped; nobody will see it", this,
                    group.dispatcher.getName(), error);
        }
    }

    private boolean complete0(T v, Throwable e) {
        if (done) {
            return false;
        }
        done = true;
        value = v;
        error = e;
        WaitQueue q = waiters;
        if (q != null) {
            Fiber f;
            while ((f = q.peekFiber()) != null) {
                if (e == null) {
                    f.wake(v, null);
                } else {
                    f.wake(null, e);
                }
            }
        }
        BiConsumer<? super T, Throwable> cb = callback;
        if (cb != null) {
            callback = null;
            runCallback(cb);
            List<BiConsumer<? super T, Throwable>> more = moreCallbacks;
            if (more != null) {
                moreCallbacks = null;
                for (BiConsumer<? super T, Throwable> c : more) {
                    runCallback(c);
                }
            }
        }
        return true;
    }

    private void runCallback(BiConsumer<? super T, Throwable> cb) {
        try {
            cb.accept(value, error);
        } catch (Throwable t) {
            log.warn("a callback of {} failed", this, t);
        }
    }

    // ---------------------------------------------------------------- waiting

    /** Suspends the running fiber until the future completes; resumes with the value or its error. */
    public FrameCallResult await(FrameCall<T> resumePoint) {
        return await0(-1, resumePoint);
    }

    /**
     * Like {@link #await(FrameCall)}, but after {@code timeoutMillis} the frame's {@code handle}
     * gets a {@link FiberTimeoutException} instead (0 means: only if already done).
     */
    public FrameCallResult await(long timeoutMillis, FrameCall<T> resumePoint) {
        Fiber.checkTimeout(timeoutMillis);
        return await0(timeoutMillis, resumePoint);
    }

    private FrameCallResult await0(long timeoutMillis, FrameCall<T> resumePoint) {
        Fiber f = Fiber.current(group, "FiberFuture.await");
        f.beginCall(Fiber.ACTION_WAIT, "await", resumePoint);
        if (done) {
            return error == null ? f.resumeNow(value) : f.failNow(error);
        }
        if (timeoutMillis == 0) {
            return f.failNow(new FiberTimeoutException(f + " found " + this + " not complete (timeout 0 ms)"));
        }
        if (f.consumeInterrupt(this)) {
            return FrameCallResult.SUSPEND;
        }
        if (waiters == null) {
            waiters = new WaitQueue();
        }
        f.waitOn(this, Fiber.WAIT_FUTURE, waiters, timeoutMillis);
        return FrameCallResult.SUSPEND;
    }

    // ---------------------------------------------------------------- callbacks and composition

    /**
     * Runs {@code callback} with (value, error) on the dispatcher thread when the future completes,
     * or at once if it has. The callback must not suspend or block; errors it throws are logged.
     */
    public void whenComplete(BiConsumer<? super T, Throwable> callback) {
        group.checkThread("FiberFuture.whenComplete");
        if (done) {
            runCallback(callback);
        } else if (this.callback == null) {
            this.callback = callback;
        } else {
            if (moreCallbacks == null) {
                moreCallbacks = new ArrayList<>(2);
            }
            moreCallbacks.add(callback);
        }
    }

    /** A future completed with {@code fn(value)}, or with this future's error. */
    public <U> FiberFuture<U> thenApply(String resultName, Function<? super T, ? extends U> fn) {
        FiberFuture<U> result = new FiberFuture<>(resultName, group);
        whenComplete((v, e) -> {
            if (e != null) {
                result.complete0(null, e);
                return;
            }
            U u;
            try {
                u = fn.apply(v);
            } catch (Throwable t) {
                result.complete0(null, t);
                return;
            }
            result.complete0(u, null);
        });
        return result;
    }

    /**
     * A future that completes like the future {@code fn} returns for this one's value (an
     * asynchronous next step), or with this future's error.
     */
    public <U> FiberFuture<U> compose(String resultName, Function<? super T, FiberFuture<U>> fn) {
        FiberFuture<U> result = new FiberFuture<>(resultName, group);
        whenComplete((v, e) -> {
            if (e != null) {
                result.complete0(null, e);
                return;
            }
            FiberFuture<U> next;
            try {
                next = fn.apply(v);
            } catch (Throwable t) {
                result.complete0(null, t);
                return;
            }
            if (next == null) {
                result.complete0(null, new NullPointerException("the compose function of " + this + " returned null"));
                return;
            }
            next.whenComplete(result::complete0);
        });
        return result;
    }

    /**
     * A future that completes when all {@code futures} have completed: with null when all
     * succeeded, or with the first error (in argument order) otherwise. Dispatcher thread.
     */
    public static FiberFuture<Void> allOf(String name, FiberGroup group, FiberFuture<?>... futures) {
        group.checkThread("FiberFuture.allOf");
        FiberFuture<Void> result = new FiberFuture<>(name, group);
        if (futures.length == 0) {
            result.complete0(null, null);
            return result;
        }
        int[] remaining = {futures.length};
        Throwable[] firstError = new Throwable[1];
        int[] firstErrorIndex = {Integer.MAX_VALUE};
        for (int i = 0; i < futures.length; i++) {
            int index = i;
            futures[i].whenComplete((v, e) -> {
                if (e != null && index < firstErrorIndex[0]) {
                    firstErrorIndex[0] = index;
                    firstError[0] = e;
                }
                if (--remaining[0] == 0) {
                    result.complete0(null, firstError[0]);
                }
            });
        }
        return result;
    }

    /**
     * A {@link CompletableFuture} completed (on the dispatcher thread) when this one completes:
     * the way out for code that is not a fiber. It fails with {@link io.poyang.common.StoppedException}
     * if the dispatcher stops first. Its dependents run on the dispatcher thread unless given an
     * executor. Any thread.
     */
    public CompletableFuture<T> toCompletableFuture() {
        CompletableFuture<T> cf = new CompletableFuture<>();
        Dispatcher d = group.dispatcher;
        Runnable register = () -> {
            d.bridgeOpened(cf);   // failed if the dispatcher stops first
            whenComplete((v, e) -> {
                d.bridgeClosed(cf);
                if (e != null) {
                    cf.completeExceptionally(e);
                } else {
                    cf.complete(v);
                }
            });
        };
        if (group.dispatcher.isInDispatcherThread()) {
            register.run();
        } else if (!group.dispatcher.post(register)) {
            cf.completeExceptionally(new io.poyang.common.StoppedException("dispatcher '"
                    + group.dispatcher.getName() + "' has stopped"));
        }
        return cf;
    }

    @Override
    public String toString() {
        return "future '" + name + "'";
    }
}
