package io.poyang.common;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

/**
 * A component that starts once and stops once. {@link #start()} and {@link #stop()} may be called
 * from any thread; a second start is refused, a second stop is a no-op, and a stop before start
 * just marks the component stopped. Subclasses implement {@link #doStart()} and
 * {@link #doStop()}.
 */
public abstract class LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(LifeCycle.class);

    public enum Status {
        NEW, STARTING, RUNNING, STOPPING, STOPPED
    }

    private volatile Status status = Status.NEW;

    public final void start() {
        synchronized (this) {
            if (status != Status.NEW) {
                throw new IllegalStateException(describe() + " cannot start: it is " + status
                        + " (a component starts at most once; create a new one)");
            }
            status = Status.STARTING;
        }
        try {
            doStart();
            status = Status.RUNNING;
        } catch (RuntimeException | Error e) {
            status = Status.STOPPED;
            safeStopAfterFailedStart();
            throw e;
        } catch (Exception e) {
            status = Status.STOPPED;
            safeStopAfterFailedStart();
            throw new PoyangException(describe() + " failed to start: " + e.getMessage(), e);
        }
    }

    private void safeStopAfterFailedStart() {
        try {
            doStop();
        } catch (Throwable t) {
            log.warn("{} failed to clean up after a failed start", describe(), t);
        }
    }

    public final void stop() {
        synchronized (this) {
            if (status == Status.NEW) {
                status = Status.STOPPED;
                return;
            }
            if (status != Status.RUNNING && status != Status.STARTING) {
                return;
            }
            status = Status.STOPPING;
        }
        try {
            doStop();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new PoyangException(describe() + " failed to stop cleanly: " + e.getMessage(), e);
        } finally {
            status = Status.STOPPED;
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
            throw new StoppedException(describe() + " is " + s + ", not RUNNING");
        }
    }

    /** A short name for messages; the simple class name by default. */
    protected String describe() {
        return getClass().getSimpleName();
    }

    protected abstract void doStart() throws Exception;

    protected abstract void doStop() throws Exception;
}
