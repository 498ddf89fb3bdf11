package io.poyang.fiber;

import io.poyang.common.StoppedException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A single-threaded world of fibers. Everything a group owns (its fibers and the futures,
 * conditions and channels made by it) is touched only on its dispatcher's thread, so it needs no
 * locks. The methods named {@code fire*}, {@link #requestShutdown()}, {@link #shutdownFuture()},
 * {@link #snapshot()} and {@link #dumpState(long)} may be called from any thread; the others are
 * checked, and a call from the wrong thread stops the group.
 *
 * <p>Life: create it with its dispatcher, start it with {@link Dispatcher#startGroup}, start fibers
 * with {@link #fireFiber} or {@link Fiber#start()}. {@link #requestShutdown()} lets normal fibers
 * finish (fibers waiting in a channel take are woken with nothing), then drops the daemon fibers,
 * leaves the dispatcher and completes {@link #shutdownFuture()}.
 */
public final class FiberGroup {

    private static final PoyangLog log = PoyangLogs.get(FiberGroup.class);
    /** Snapshots in misuse messages list at most this many fibers. */
    private static final int MAX_FIBERS_IN_MESSAGE = 50;

    private final String name;
    final Dispatcher dispatcher;
    private final CompletableFuture<Void> shutdownFuture = new CompletableFuture<>();

    /** Set from any thread; read by fireFiber to refuse work for a dying group. */
    private volatile boolean shutdownRequested;
    /** Set on the dispatcher thread when the request is processed. */
    private volatile boolean shouldStop;
    boolean started;
    boolean finished;
    /** The first misuse seen in this group; the dispatcher stops the group after the step. */
    FiberException fatalError;

    // ready queue (dispatcher thread)
    private Fiber readyHead;
    private Fiber readyTail;
    /** In the dispatcher's queue of groups with ready fibers (or being run). */
    boolean queuedInDispatcher;
    FiberGroup nextReadyGroup;

    // live fibers (dispatcher thread)
    private Fiber liveHead;
    private int normalFiberCount;
    private int daemonFiberCount;

    public FiberGroup(String name, Dispatcher dispatcher) {
        if (name == null || dispatcher == null) {
            throw new IllegalArgumentException("a fiber group needs a name and a dispatcher");
        }
        this.name = name;
        this.dispatcher = dispatcher;
    }

    public String getName() {
        return name;
    }

    public Dispatcher getDispatcher() {
        return dispatcher;
    }

    /** True on this group's dispatcher thread. */
    public boolean isInGroupThread() {
        return dispatcher.isInDispatcherThread();
    }

    /** True once shutdown has been requested and the request reached the group. Any thread. */
    public boolean isShouldStop() {
        return shouldStop;
    }

    /** Completes when the group has finished (normally, or exceptionally when stopped by a misuse). Any thread. */
    public CompletableFuture<Void> shutdownFuture() {
        return shutdownFuture;
    }

    // ---------------------------------------------------------------- factories

    public <T> FiberFuture<T> newFuture(String futureName) {
        return new FiberFuture<>(futureName, this);
    }

    public FiberCondition newCondition(String conditionName) {
        return new FiberCondition(conditionName, this);
    }

    public <T> FiberChannel<T> newChannel() {
        return new FiberChannel<>("channel", this);
    }

    public <T> FiberChannel<T> newChannel(String channelName) {
        return new FiberChannel<>(channelName, this);
    }

    /**
     * Runs blocking work (a file write, an fsync, a DNS lookup …) on {@code executor} and returns
     * a future of this group that completes, on the dispatcher, with its result or error. Any
     * thread. A rejected task fails the future.
     */
    public <T> FiberFuture<T> executeBlocking(String futureName, Executor executor, Callable<T> task) {
        FiberFuture<T> future = newFuture(futureName);
        try {
            executor.execute(() -> {
                T value;
                try {
                    value = task.call();
                } catch (Throwable e) {
                    future.fireCompleteExceptionally(e);
                    return;
                }
                future.fireComplete(value);
            });
        } catch (RuntimeException e) {
            future.fireCompleteExceptionally(e);
        }
        return future;
    }

    // ---------------------------------------------------------------- fibers

    /**
     * Starts a fiber from any thread. Returns false (and starts nothing) when shutdown of the group
     * was already requested or the dispatcher has stopped. On the dispatcher thread the fiber starts
     * at once, otherwise as soon as the dispatcher reads its inbox; a fiber fired from another
     * thread just as the group finishes (a shutdown requested meanwhile, with no fiber left) is
     * not started, with a warning.
     */
    public boolean fireFiber(Fiber fiber) {
        if (fiber.group != this) {
            throw new IllegalArgumentException(fiber + " belongs to group '" + fiber.group.getName()
                    + "', not '" + name + "'");
        }
        if (shutdownRequested) {
            return false;
        }
        if (dispatcher.isInDispatcherThread()) {
            fiber.start();
        } else {
            return dispatcher.post(() -> {
                if (finished) {
                    log.warn("{} was not started: group '{}' finished before it could start", fiber, name);
                } else if (fiber.state == Fiber.STATE_NEW) {
                    startFiber(fiber);
                } else {
                    log.warn("{} was fired twice; the second start is ignored", fiber);
                }
            });
        }
        return true;
    }

    /** Starts a normal fiber running {@code entryFrame}; see {@link #fireFiber(Fiber)}. */
    public boolean fireFiber(String fiberName, FiberFrame<?> entryFrame) {
        return fireFiber(new Fiber(fiberName, this, entryFrame, false));
    }

    void startFiber(Fiber fiber) {
        if (finished) {
            throw new FiberException("cannot start " + fiber + ": group '" + name + "' has finished");
        }
        if (!started) {
            dispatcher.noteNotStartedGroup(this);
        }
        FiberFrame<?> entry = fiber.entryFrame;
        entry.enter(fiber, null);
        fiber.top = entry;
        if (fiber.isDaemon()) {
            daemonFiberCount++;
        } else {
            normalFiberCount++;
        }
        fiber.nextLive = liveHead;
        if (liveHead != null) {
            liveHead.prevLive = fiber;
        }
        liveHead = fiber;
        makeReady(fiber);
    }

    void makeReady(Fiber fiber) {
        if (finished) {
            return;
        }
        fiber.state = Fiber.STATE_READY;
        fiber.nextReady = null;
        if (readyTail == null) {
            readyHead = fiber;
        } else {
            readyTail.nextReady = fiber;
        }
        readyTail = fiber;
        if (!queuedInDispatcher && started) {
            dispatcher.enqueueReadyGroup(this);
        }
    }

    Fiber pollReady() {
        Fiber f = readyHead;
        if (f != null) {
            readyHead = f.nextReady;
            if (readyHead == null) {
                readyTail = null;
            }
            f.nextReady = null;
        }
        return f;
    }

    boolean hasReadyFibers() {
        return readyHead != null;
    }

    /** The fiber's entry frame returned or failed. */
    void fiberEnded(Fiber fiber, Throwable uncaught) {
        unlinkLive(fiber);
        fiber.finished();
        if (uncaught != null) {
            if (uncaught instanceof FiberInterruptedException) {
                log.info("{} of group '{}' ended by interrupt: {}", fiber, name, uncaught.getMessage());
            } else {
                log.warn("{} of group '{}' ended with an error no frame handled", fiber, name, uncaught);
            }
        }
        if (shouldStop && normalFiberCount == 0) {
            finishShutdown();
        }
    }

    private void unlinkLive(Fiber fiber) {
        if (fiber.isDaemon()) {
            daemonFiberCount--;
        } else {
            normalFiberCount--;
        }
        Fiber p = fiber.prevLive;
        Fiber n = fiber.nextLive;
        if (p == null) {
            liveHead = n;
        } else {
            p.nextLive = n;
        }
        if (n != null) {
            n.prevLive = p;
        }
        fiber.prevLive = null;
        fiber.nextLive = null;
    }

    // ---------------------------------------------------------------- shutdown

    /**
     * Asks the group to finish: normal fibers run to their end, fibers waiting in a channel take
     * are woken with nothing (null / an empty batch) and takes no longer wait, then daemon fibers
     * are dropped and {@link #shutdownFuture()} completes. Idempotent; any thread.
     */
    public void requestShutdown() {
        if (shutdownRequested) {
            return;
        }
        shutdownRequested = true;
        if (dispatcher.isInDispatcherThread()) {
            onShutdownRequested();
        } else if (!dispatcher.post(this::onShutdownRequested)) {
            shutdownFuture.completeExceptionally(new StoppedException("dispatcher '" + dispatcher.getName()
                    + "' stopped before group '" + name + "' could shut down"));
        }
    }

    private void onShutdownRequested() {
        if (finished || shouldStop) {
            return;
        }
        shutdownRequested = true;
        shouldStop = true;
        if (!started) {
            dispatcher.noteNotStartedGroup(this);
        }
        // Channel takers would otherwise wait forever for items nobody will send.
        for (Fiber f = liveHead; f != null; f = f.nextLive) {
            if (f.state == Fiber.STATE_WAITING
                    && (f.waitKind == Fiber.WAIT_TAKE || f.waitKind == Fiber.WAIT_TAKE_ALL)) {
                f.wake(null, null);
            }
        }
        if (normalFiberCount == 0) {
            finishShutdown();
        }
    }

    /** All normal fibers are done: drop the daemons and leave the dispatcher. */
    private void finishShutdown() {
        if (finished) {
            return;
        }
        Fiber running = dispatcher.currentFiber;
        if (running != null && running.group == this && running.state == Fiber.STATE_RUNNING) {
            // Asked from inside a step of one of this group's daemons: dropping that fiber under its
            // own running step would break the step's return. Finish once the step is over.
            finishAfterStep = true;
            return;
        }
        dropAll();
        dispatcher.groupFinished(this);
        log.debug("fiber group '{}' finished", name);
        shutdownFuture.complete(null);
    }

    /** Set when shutdown finished inside a step of this group's own fiber; see {@link #finishShutdown()}. */
    private boolean finishAfterStep;

    /** Finishes a shutdown that was put off until the running step ended. Dispatcher thread. */
    void finishIfDeferred() {
        if (finishAfterStep) {
            finishAfterStep = false;
            // The step may have started a normal fiber after asking for the shutdown (a helper the
            // shutdown needs): it runs first, and the group finishes when the last one ends.
            if (normalFiberCount == 0) {
                finishShutdown();
            }
        }
    }

    private void dropAll() {
        finished = true;
        while (liveHead != null) {
            Fiber f = liveHead;
            unlinkLive(f);
            f.drop();
        }
        readyHead = null;
        readyTail = null;
    }

    /** Stops the group at once because of a misuse; every fiber is dropped. Dispatcher thread. */
    void stopFatally(FiberException error) {
        if (finished) {
            return;
        }
        String snapshot = describeFibers();
        FiberException stopped = new FiberException("fiber group '" + name + "' was stopped: "
                + error.getMessage() + "\n" + snapshot, error);
        log.error("{}", stopped.getMessage(), error);
        shouldStop = true;
        shutdownRequested = true;
        dropAll();
        dispatcher.groupFinished(this);
        shutdownFuture.completeExceptionally(stopped);
    }

    /** Stops the group at once when its dispatcher stops before it finished. */
    void stopByDispatcher() {
        if (finished) {
            return;
        }
        log.warn("dispatcher '{}' stopped before fiber group '{}' finished; dropping its fibers:\n{}",
                dispatcher.getName(), name, describeFibers());
        shouldStop = true;
        shutdownRequested = true;
        dropAll();
        shutdownFuture.completeExceptionally(new StoppedException("dispatcher '" + dispatcher.getName()
                + "' stopped before fiber group '" + name + "' finished"));
    }

    // ---------------------------------------------------------------- misuse

    /** Builds the misuse error, marks the group for a fatal stop after this step, and returns it to throw. */
    FiberException misuse(Fiber fiber, String what) {
        FiberException e = new FiberException(fiber + " of group '" + name + "' " + what
                + "; frames (innermost first): " + String.join(" <- ", fiber.frameNames()));
        if (fatalError == null) {
            fatalError = e;
        }
        return e;
    }

    /** Throws unless on this group's dispatcher thread. */
    void checkThread(String op) {
        if (Thread.currentThread() != dispatcher.thread) {
            throw wrongThread(op);
        }
    }

    /**
     * A call from a thread that is not the dispatcher: the group's state may already be corrupt,
     * so the group is stopped (on its own thread), and the caller gets the error.
     */
    FiberException wrongThread(String op) {
        FiberException e = new FiberException(op + " on group '" + name + "' was called from thread '"
                + Thread.currentThread().getName() + "', but the group runs on dispatcher thread '"
                + dispatcher.thread.getName() + "'; from other threads use the fire* methods");
        if (!dispatcher.post(() -> stopFatally(e))) {
            log.error("{} (the dispatcher has stopped)", e.getMessage());
        }
        return e;
    }

    // ---------------------------------------------------------------- snapshots

    /** A consistent picture of the group, taken on its dispatcher thread. Any thread. */
    public CompletableFuture<FiberGroupSnapshot> snapshot() {
        CompletableFuture<FiberGroupSnapshot> result = new CompletableFuture<>();
        if (dispatcher.isInDispatcherThread()) {
            result.complete(takeSnapshot());
        } else if (!dispatcher.post(() -> result.complete(takeSnapshot()))) {
            result.completeExceptionally(new StoppedException("dispatcher '" + dispatcher.getName() + "' has stopped"));
        }
        return result;
    }

    /**
     * The group's state as text, for debugging a stuck group from any thread. When the dispatcher
     * does not answer within {@code timeoutMillis} (a fiber step is blocking its thread) the text
     * shows the dispatcher thread's Java stack instead.
     */
    public String dumpState(long timeoutMillis) {
        try {
            return snapshot().get(timeoutMillis, TimeUnit.MILLISECONDS).toString();
        } catch (TimeoutException e) {
            StringBuilder sb = new StringBuilder();
            sb.append("fiber group '").append(name).append("': dispatcher thread '").append(dispatcher.thread.getName())
                    .append("' did not answer within ").append(timeoutMillis)
                    .append(" ms; a step may be blocking it. Its stack:\n");
            for (StackTraceElement el : dispatcher.thread.getStackTrace()) {
                sb.append("    at ").append(el).append('\n');
            }
            return sb.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "fiber group '" + name + "': interrupted while waiting for a snapshot";
        } catch (ExecutionException e) {
            return "fiber group '" + name + "': no snapshot: " + e.getCause().getMessage();
        }
    }

    FiberGroupSnapshot takeSnapshot() {
        List<FiberGroupSnapshot.FiberInfo> fibers = new ArrayList<>();
        long now = dispatcher.timestamp.nanoTime();
        for (Fiber f = liveHead; f != null; f = f.nextLive) {
            String waitingOn = null;
            long waitingMillis = 0;
            if (f.state == Fiber.STATE_WAITING) {
                waitingOn = f.describeWait();
                if (f.timedWait || f.waitKind == Fiber.WAIT_SLEEP) {
                    waitingOn += " (timeout " + f.waitTimeoutMillis + " ms)";
                }
                waitingMillis = Math.max(0, (now - f.waitSinceNanos) / 1_000_000);
            }
            fibers.add(new FiberGroupSnapshot.FiberInfo(f.getName(), f.isDaemon(), f.stateName(), waitingOn,
                    waitingMillis, f.frameNames()));
        }
        return new FiberGroupSnapshot(name, dispatcher.getName(), shouldStop, finished, normalFiberCount,
                daemonFiberCount, fibers);
    }

    private String describeFibers() {
        StringBuilder sb = new StringBuilder();
        sb.append("fibers of group '").append(name).append("' (").append(normalFiberCount).append(" normal, ")
                .append(daemonFiberCount).append(" daemon):");
        int n = 0;
        for (Fiber f = liveHead; f != null; f = f.nextLive) {
            if (++n > MAX_FIBERS_IN_MESSAGE) {
                sb.append("\n  …");
                break;
            }
            sb.append("\n  ").append(f).append(' ').append(f.stateName());
            if (f.state == Fiber.STATE_WAITING) {
                sb.append(" on ").append(f.describeWait());
            }
            sb.append(": ").append(String.join(" <- ", f.frameNames()));
        }
        return sb.toString();
    }

    int normalFiberCount() {
        return normalFiberCount;
    }

    int daemonFiberCount() {
        return daemonFiberCount;
    }

    @Override
    public String toString() {
        return "fiber group '" + name + "'";
    }
}
