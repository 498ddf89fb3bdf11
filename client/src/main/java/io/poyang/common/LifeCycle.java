package io.poyang.common;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

/**
 * A component that starts once and stops once. {@link #start()} and {@link #stop()} may be called
 * from any thread; a second start is refused, a second stop is a no-op, and a stop before start
 * just marks the component stopped. Subclasses implement {@link #doStart()} and
 * {@link #doStop()}; the two never run at the same time.
 *
 * <p>A {@code stop()} that arrives while the component is starting first tells the start
 * ({@link #stopRequestedWhileStarting()}: a component with a long start, such as one recovering
 * logs, gives it up there and its {@code doStart()} throws), then waits for the start to end and
 * stops what it started. A {@code stop()} that arrives while another thread is stopping waits for
 * that stop to finish: when {@code stop()} returns, the component is {@link Status#STOPPED}.
 * {@code doStart()} aborts a start by throwing, not by calling {@code stop()}; a start that fails
 * after a stop was requested throws {@link StoppedException}.
 */
public abstract class LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(LifeCycle.class);

    public enum Status {
        NEW, STARTING, RUNNING, STOPPING, STOPPED
    }

    private volatile Status status = Status.NEW;
    /** The thread running doStart or doStop; guarded by this. */
    private Thread transitionThread;
    /** A stop() came while starting (the start is told once); guarded by this. */
    private boolean stopRequestedWhileStarting;

    public final void start() {
        synchronized (this) {
            if (status != Status.NEW) {
                throw new IllegalStateException(describe() + " cannot start: it is " + status
                        + " (a component starts at most once; create a new one)");
            }
            status = Status.STARTING;
            transitionThread = Thread.currentThread();
        }
        Throwable failure = null;
        try {
            doStart();
        } catch (Throwable t) {
            failure = t;
        }
        if (failure != null) {
            safeStopAfterFailedStart();
        }
        boolean stopped;
        synchronized (this) {
            status = failure == null ? Status.RUNNING : Status.STOPPED;
            transitionThread = null;
            stopped = stopRequestedWhileStarting;
            notifyAll();
        }
        if (failure != null && stopped && !(failure instanceof Error)) {
            throw new StoppedException(describe() + " was stopped while it started: " + failure, failure);
        }
        if (failure instanceof RuntimeException) {
            throw (RuntimeException) failure;
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        if (failure != null) {
            throw new PoyangException(describe() + " failed to start: " + failure, failure);
        }
    }

    /**
     * Called (holding this object's lock) when {@link #stop()} finds the component never started:
     * a component that accepts work before it starts refuses it from now on here. Default: nothing.
     */
    protected void stoppedBeforeStart() {
    }

    /**
     * Called once, on the thread calling {@link #stop()} and without this object's lock, when a stop
     * arrives while {@code doStart()} runs: a component whose start may take long (recovering logs,
     * waiting for peers) makes it end soon, with {@code doStart()} throwing. The stop then waits for
     * the start to end either way. Default: nothing (the stop waits for the whole start).
     */
    protected void stopRequestedWhileStarting() {
    }

    private void safeStopAfterFailedStart() {
        try {
            doStop();
        } catch (Throwable t) {
            log.warn("{} failed to clean up after a failed start", describe(), t);
        }
    }

    public final void stop() {
        boolean tellStart = false;
        synchronized (this) {
            if (status == Status.NEW) {
                status = Status.STOPPED;
                stoppedBeforeStart();
                return;
            }
            if (transitionThread == Thread.currentThread()) {
                if (status == Status.STARTING) {
                    throw new IllegalStateException(describe() + ".stop() called from its own doStart();"
                            + " throw from doStart() to abort the start instead");
                }
                return; // stop() from inside doStop(): already stopping
            }
            if (status == Status.STARTING && !stopRequestedWhileStarting) {
                stopRequestedWhileStarting = true;
                tellStart = true;
            }
        }
        if (tellStart) {
            try {
                stopRequestedWhileStarting();
            } catch (RuntimeException | Error e) {
                log.warn("{} failed to cut its start short for a stop; waiting for the whole start", describe(), e);
            }
        }
        synchronized (this) {
            awaitNot(Status.STARTING);
            if (status != Status.RUNNING) {
                awaitNot(Status.STOPPING);
                return;
            }
            status = Status.STOPPING;
            transitionThread = Thread.currentThread();
        }
        try {
            doStop();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new PoyangException(describe() + " failed to stop cleanly: " + e, e);
        } finally {
            synchronized (this) {
                status = Status.STOPPED;
                transitionThread = null;
                notifyAll();
            }
        }
    }

    /** Waits, holding the monitor, until the status leaves {@code transient}; keeps the interrupt flag. */
    private void awaitNot(Status transientStatus) {
        boolean interrupted = false;
        while (status == transientStatus) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    public final Status status() {
        return status;
    }

    public final boolean isRunning() {
        return status == Status.RUNNING;
    }

    /** Throws {@link StoppedException} unless the component is running. */
    protected final void checkRunning() {
        Status s = status;
        if (s != Status.RUNNING) {
            throw new StoppedException(describe() + " is " + s + ", not RUNNING; "
                    + (s == Status.NEW || s == Status.STARTING ? "start it first" : "create and start a new one"));
        }
    }

    /** A short name for messages; the simple class name by default. */
    protected String describe() {
        return getClass().getSimpleName();
    }

    protected abstract void doStart() throws Exception;

    protected abstract void doStop() throws Exception;
}
