package io.poyang.fiber;

import io.poyang.common.LifeCycle;
import io.poyang.common.MpscLinkedQueue;
import io.poyang.common.StoppedException;
import io.poyang.common.TimeSource;
import io.poyang.common.Timestamp;
import io.poyang.log.ImpossibleStates;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One thread that runs many {@link FiberGroup}s.
 *
 * <p>Each round of its loop: refresh the cached clock, run the tasks other threads posted to the
 * lock-free inbox, fire the due timers in deadline order, then give every group that has ready
 * fibers one turn of at most {@code maxStepsPerGroupRound} frame steps. Within a turn a fiber runs
 * at most {@code maxStepsPerFiberRun} steps before it goes to the back of its group's queue, so a
 * fiber that keeps waking itself cannot hold the group, and a busy group cannot hold the others.
 * With nothing ready the thread parks until the next timer deadline or until another thread posts
 * work.
 *
 * <p>Code running on the dispatcher can defer a task to the end of the current round
 * ({@link #runAtRoundEnd}): what the round's fibers produce for the same destination (the
 * AppendEntries of several raft groups to one peer, say) then leaves together, without a timer.
 *
 * <p>Waking is cheap for a busy dispatcher: a poster unparks the thread only when the thread has
 * announced that it is about to park (a flag it sets, then re-checks the inbox, before parking),
 * so messages to a running dispatcher cost one queue insert and no system call, and no wakeup is
 * lost.
 */
public final class Dispatcher extends LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(Dispatcher.class);

    /** The longest timer delay (about 73 years): far enough from overflow for deadline differences. */
    static final long MAX_DELAY_NANOS = Long.MAX_VALUE / 4;

    public static final int DEFAULT_MAX_STEPS_PER_GROUP_ROUND = 512;
    public static final int DEFAULT_MAX_STEPS_PER_FIBER_RUN = 64;
    public static final long DEFAULT_STOP_TIMEOUT_MILLIS = 10_000;
    /** Inbox tasks run per round at most, so a flood from other threads cannot starve the fibers. */
    private static final int MAX_INBOX_TASKS_PER_ROUND = 4096;

    private static final int AWAKE = 0;
    private static final int PARKED = 1;
    private static final VarHandle PARK_STATE;
    private static final VarHandle UNPARK_COUNT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PARK_STATE = l.findVarHandle(Dispatcher.class, "parkState", int.class);
            UNPARK_COUNT = l.findVarHandle(Dispatcher.class, "unparkCount", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    final DispatcherThread thread;
    private final MpscLinkedQueue<Runnable> inbox = new MpscLinkedQueue<>();
    final Timestamp timestamp;
    private final int maxStepsPerGroupRound;
    private final int maxStepsPerFiberRun;
    private final long stopTimeoutMillis;

    @SuppressWarnings("unused") // accessed through PARK_STATE
    private volatile int parkState;
    @SuppressWarnings("unused") // accessed through UNPARK_COUNT
    private volatile long unparkCount;
    /** Set once the loop has ended; posts after that are refused. */
    private volatile boolean loopEnded;
    /** Guards the final drain of the inbox against posts that arrive as the loop ends (rare: at stop). */
    private final Object endLock = new Object();
    /** Tasks posted after the final drain, taken out by {@link #takeBackLate}: their posters get false. */
    private final java.util.ArrayList<Runnable> lateTasks = new java.util.ArrayList<>();

    // ---- dispatcher-thread state
    Fiber currentFiber;
    private final List<FiberGroup> groups = new ArrayList<>();
    /** Groups not started yet that already have fibers or a shutdown request: settled when the loop ends. */
    private final java.util.Set<FiberGroup> notStartedWithWork = new java.util.LinkedHashSet<>();
    private FiberGroup readyGroupsHead;
    private FiberGroup readyGroupsTail;
    private Fiber[] timerHeap = new Fiber[64];
    private int timerCount;
    private long timerSeq;
    private boolean stopRequested;
    private long forceStopAtNanos;

    // ---- statistics: plain fields written by the dispatcher thread; other threads read them racily
    private long roundCount;
    private long stepCount;
    private long parkCount;

    public Dispatcher(String name) {
        this(name, TimeSource.SYSTEM);
    }

    public Dispatcher(String name, TimeSource timeSource) {
        this(name, timeSource, DEFAULT_MAX_STEPS_PER_GROUP_ROUND, DEFAULT_MAX_STEPS_PER_FIBER_RUN,
                DEFAULT_STOP_TIMEOUT_MILLIS);
    }

    /**
     * @param maxStepsPerGroupRound frame steps a group may run per round before the next group's turn
     * @param maxStepsPerFiberRun   frame steps a fiber may run before it goes behind the other ready fibers
     * @param stopTimeoutMillis     how long {@link #stop()} lets groups finish before dropping them
     */
    public Dispatcher(String name, TimeSource timeSource, int maxStepsPerGroupRound, int maxStepsPerFiberRun,
                      long stopTimeoutMillis) {
        if (maxStepsPerGroupRound < 1 || maxStepsPerFiberRun < 1) {
            throw new IllegalArgumentException("step budgets must be at least 1: group " + maxStepsPerGroupRound
                    + ", fiber " + maxStepsPerFiberRun);
        }
        if (stopTimeoutMillis < 0) {
            throw new IllegalArgumentException("stopTimeoutMillis must not be negative: " + stopTimeoutMillis);
        }
        this.name = name;
        this.timestamp = new Timestamp(timeSource);
        this.maxStepsPerGroupRound = maxStepsPerGroupRound;
        this.maxStepsPerFiberRun = maxStepsPerFiberRun;
        this.stopTimeoutMillis = stopTimeoutMillis;
        this.thread = new DispatcherThread(this, this::loop, name);
    }

    public String getName() {
        return name;
    }

    public boolean isInDispatcherThread() {
        return Thread.currentThread() == thread;
    }

    /** The clock of this dispatcher, refreshed once per round. Dispatcher thread only. */
    public Timestamp timestamp() {
        return timestamp;
    }

    @Override
    protected String describe() {
        return "dispatcher '" + name + "'";
    }

    @Override
    protected void doStart() {
        thread.start();
    }

    /**
     * Stopped without ever running (or its start failed before the thread ran): no loop will run
     * what is posted, so posts return false from now on (fireFiber false, startGroup fails at once)
     * instead of queueing work forever. Tasks posted before are dropped: nothing will ever run them.
     */
    @Override
    protected void stoppedBeforeStart() {
        markEndedWithoutLoop();
    }

    private void markEndedWithoutLoop() {
        synchronized (endLock) {
            stopRequested = true;
            loopEnded = true;
            int dropped = 0;
            while (inbox.poll() != null) {
                dropped++;
            }
            if (dropped > 0) {
                log.warn("dispatcher '{}' stopped before it ran: {} task(s) posted to it are dropped", name, dropped);
            }
        }
    }

    /**
     * Asks every group to shut down, waits up to the stop timeout for them to finish, then drops
     * the rest (their shutdown futures fail with {@link StoppedException}) and ends the thread.
     */
    @Override
    protected void doStop() throws InterruptedException {
        if (!thread.isAlive() && thread.getState() == Thread.State.NEW) {
            markEndedWithoutLoop();   // the start failed before the thread ran
            return;
        }
        if (!post(this::onStopRequested)) {
            return;
        }
        if (isInDispatcherThread()) {
            return;
        }
        long joinMillis = stopTimeoutMillis > Long.MAX_VALUE - 5_000 ? Long.MAX_VALUE : stopTimeoutMillis + 5_000;
        thread.join(joinMillis);
        if (thread.isAlive()) {
            log.error("dispatcher '{}' did not end within {} ms of stop; a fiber step may be blocking it",
                    name, joinMillis);
        }
    }

    /**
     * Adds a group to this running dispatcher. The future completes once the group runs (its
     * fibers fired earlier start then) and fails if the dispatcher is stopping or the group was
     * already started. Any thread.
     */
    public CompletableFuture<Void> startGroup(FiberGroup group) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        if (group.dispatcher != this) {
            result.completeExceptionally(new IllegalArgumentException(group + " was made for dispatcher '"
                    + group.dispatcher.getName() + "', not '" + name + "'"));
            return result;
        }
        Runnable task = () -> {
            if (stopRequested) {
                result.completeExceptionally(new StoppedException(describe() + " is stopping; cannot start " + group));
            } else if (group.started || group.finished) {
                result.completeExceptionally(new FiberException(group + " was already started or has finished"));
            } else {
                group.started = true;
                notStartedWithWork.remove(group);
                groups.add(group);
                if (group.hasReadyFibers()) {
                    enqueueReadyGroup(group);
                }
                result.complete(null);
            }
        };
        if (!post(task)) {
            result.completeExceptionally(new StoppedException(describe() + " has stopped; cannot start " + group));
        }
        return result;
    }

    /**
     * Queues a task for the dispatcher thread and wakes the thread if it is parked. Any thread.
     * Returns false when the dispatcher loop has ended and the task will never run.
     */
    boolean post(Runnable task) {
        if (loopEnded) {
            return false;
        }
        inbox.offer(task);
        if (loopEnded) {
            // the loop ended between the check above and the offer: its final drain may have missed it
            return !takeBackLate(task);
        }
        // The offer above is a full fence, so this read cannot be reordered before it: either we
        // see PARKED here, or the dispatcher sees our task when it re-checks the inbox after
        // setting PARKED.
        if ((int) PARK_STATE.getVolatile(this) == PARKED && PARK_STATE.compareAndSet(this, PARKED, AWAKE)) {
            UNPARK_COUNT.getAndAdd(this, 1L);
            LockSupport.unpark(thread);
        }
        return true;
    }

    /** Wakes the dispatcher for a new round (e.g. after a test moved a manual clock). Any thread. */
    public void wakeup() {
        post(() -> {
        });
    }

    // ---------------------------------------------------------------- round-end tasks

    /** Tasks deferred to the end of the current round; dispatcher thread only. */
    private final ArrayList<Runnable> roundEndTasks = new ArrayList<>();

    /**
     * Runs {@code task} once on this thread's dispatcher after the fibers of the current round ran,
     * before the dispatcher parks or starts the next round: a way to batch what several fibers of
     * one round send, with no timer and no wait beyond the round. Returns false, and does nothing,
     * when the calling thread is not a dispatcher thread. A task may defer another; it runs in the
     * same end of round. A task that throws is logged and the others still run.
     */
    public static boolean runAtRoundEnd(Runnable task) {
        Thread t = Thread.currentThread();
        if (!(t instanceof DispatcherThread)) {
            return false;
        }
        ((DispatcherThread) t).dispatcher.roundEndTasks.add(task);
        return true;
    }

    private void runRoundEndTasks() {
        ArrayList<Runnable> tasks = roundEndTasks;
        if (tasks.isEmpty()) {
            return;
        }
        // indexed: a task may add another, which runs in this same pass
        for (int i = 0; i < tasks.size(); i++) {
            try {
                tasks.get(i).run();
            } catch (Throwable e) {
                log.error("dispatcher '{}': a round-end task failed", name, e);
            }
        }
        tasks.clear();
    }

    // ---------------------------------------------------------------- the loop

    private void loop() {
        try {
            while (true) {
                timestamp.refresh();
                roundCount++;
                runInbox();
                fireDueTimers();
                runReadyGroups();
                runRoundEndTasks();
                if (stopRequested) {
                    if (groups.isEmpty()) {
                        break;
                    }
                    if (timestamp.nanoTime() - forceStopAtNanos >= 0) {
                        stopAllGroups();
                        break;
                    }
                }
                if (readyGroupsHead == null) {
                    park();
                }
            }
        } catch (Throwable t) {
            ImpossibleStates.report("dispatcher '{}' loop died", name, t);
        } finally {
            synchronized (endLock) {
                loopEnded = true;
                drainInboxAfterEnd();
            }
            runRoundEndTasks();   // what the last round or the final drain deferred still runs
            log.debug("dispatcher '{}' ended", name);
        }
    }

    /**
     * A post that saw the loop end right after its offer: once the final drain is over (it holds
     * {@link #endLock} throughout), whatever is still in the inbox was offered after it and never
     * runs. Those tasks are taken out, and each poster learns whether its own was one of them (then
     * its post returns false, and it fails what the task would have completed). Returns true when
     * {@code task} did not run.
     */
    private boolean takeBackLate(Runnable task) {
        synchronized (endLock) {
            Runnable t;
            while ((t = inbox.poll()) != null) {
                lateTasks.add(t);
            }
            for (int i = 0; i < lateTasks.size(); i++) {
                if (lateTasks.get(i) == task) {
                    lateTasks.remove(i);
                    return true;
                }
            }
            return false;   // the final drain ran it
        }
    }

    /** Tasks posted while the loop ended still run once, so futures waiting on them are settled. */
    private void drainInboxAfterEnd() {
        Runnable task;
        while ((task = inbox.poll()) != null) {
            runTask(task);
        }
        stopAllGroups();
        failPendingBridges();
    }

    /**
     * CompletableFutures handed out by {@link FiberFuture#toCompletableFuture} whose fiber future has
     * not completed yet. Dispatcher thread. When the loop ends they fail: no completion can reach
     * them any more, and code outside the fibers would otherwise wait on them forever.
     */
    private final java.util.Set<CompletableFuture<?>> pendingBridges =
            java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    void bridgeOpened(CompletableFuture<?> bridge) {
        pendingBridges.add(bridge);
    }

    void bridgeClosed(CompletableFuture<?> bridge) {
        pendingBridges.remove(bridge);
    }

    private void failPendingBridges() {
        for (CompletableFuture<?> bridge : new ArrayList<>(pendingBridges)) {
            bridge.completeExceptionally(new StoppedException(describe() + " stopped before the future completed"));
        }
        pendingBridges.clear();
    }

    /** Drops every group still here, started or not (their shutdown futures fail). Dispatcher thread. */
    private void stopAllGroups() {
        for (FiberGroup g : new ArrayList<>(groups)) {
            g.stopByDispatcher();
        }
        groups.clear();
        for (FiberGroup g : new ArrayList<>(notStartedWithWork)) {
            g.stopByDispatcher();
        }
        notStartedWithWork.clear();
    }

    /** A group that is not started yet got a fiber or a shutdown request. Dispatcher thread. */
    void noteNotStartedGroup(FiberGroup g) {
        notStartedWithWork.add(g);
    }

    private void onStopRequested() {
        if (stopRequested) {
            return;
        }
        stopRequested = true;
        forceStopAtNanos = timestamp.nanoTime() + Math.min(TimeUnit.MILLISECONDS.toNanos(stopTimeoutMillis), MAX_DELAY_NANOS);
        for (FiberGroup g : new ArrayList<>(groups)) {
            g.requestShutdown();
        }
    }

    private void runInbox() {
        Runnable task;
        int n = 0;
        while (n++ < MAX_INBOX_TASKS_PER_ROUND && (task = inbox.poll()) != null) {
            runTask(task);
        }
    }

    private void runTask(Runnable task) {
        try {
            task.run();
        } catch (Throwable t) {
            ImpossibleStates.report("a task posted to dispatcher '{}' failed", name, t);
        }
    }

    private void park() {
        if (Thread.interrupted()) {
            // LockSupport.park returns at once while the flag is set: left set (by a step that
            // restored it, or by outside code), it would turn every idle round into a busy spin.
            log.warn("dispatcher '{}': its thread was interrupted; the interrupt is cleared (fibers are"
                    + " interrupted with Fiber.interrupt, the dispatcher is stopped with stop())", name);
        }
        long delayNanos = -1;
        if (timerCount > 0) {
            delayNanos = timerHeap[0].deadlineNanos - timestamp.source().nanoTime();
            if (delayNanos <= 0) {
                return;
            }
        }
        if (stopRequested) {
            long untilForce = forceStopAtNanos - timestamp.source().nanoTime();
            if (untilForce <= 0) {
                return;
            }
            delayNanos = delayNanos < 0 ? untilForce : Math.min(delayNanos, untilForce);
        }
        PARK_STATE.setVolatile(this, PARKED);
        if (!inbox.isEmpty()) {
            PARK_STATE.setVolatile(this, AWAKE);
            return;
        }
        parkCount++;
        if (delayNanos < 0) {
            LockSupport.park(this);
        } else {
            LockSupport.parkNanos(this, delayNanos);
        }
        PARK_STATE.setVolatile(this, AWAKE);
    }

    // ---------------------------------------------------------------- groups

    void enqueueReadyGroup(FiberGroup group) {
        group.queuedInDispatcher = true;
        group.nextReadyGroup = null;
        if (readyGroupsTail == null) {
            readyGroupsHead = group;
        } else {
            readyGroupsTail.nextReadyGroup = group;
        }
        readyGroupsTail = group;
    }

    private void runReadyGroups() {
        // Only the groups queued at the start of the round get a turn in it; a group re-queued
        // during the round waits for the next one, after timers and the inbox.
        FiberGroup last = readyGroupsTail;
        while (readyGroupsHead != null) {
            FiberGroup g = readyGroupsHead;
            readyGroupsHead = g.nextReadyGroup;
            if (readyGroupsHead == null) {
                readyGroupsTail = null;
            }
            g.nextReadyGroup = null;
            // queuedInDispatcher stays true while the group runs, so waking its fibers does not queue it twice.
            if (!g.finished) {
                try {
                    runGroup(g);
                } catch (Throwable t) {
                    // A broken group stops alone; the dispatcher and its other groups go on.
                    ImpossibleStates.report("fiber group '{}' failed on dispatcher '{}'", g.getName(), name, t);
                    g.stopFatally(new FiberException("fiber group '" + g.getName() + "' failed: " + t, t));
                }
            }
            g.queuedInDispatcher = false;
            if (!g.finished && g.hasReadyFibers()) {
                enqueueReadyGroup(g);
            }
            if (g == last) {
                break;
            }
        }
    }

    private void runGroup(FiberGroup g) {
        int budget = maxStepsPerGroupRound;
        while (budget > 0) {
            Fiber f = g.pollReady();
            if (f == null) {
                return;
            }
            int steps = runFiber(f, Math.min(budget, maxStepsPerFiberRun));
            stepCount += steps;
            budget -= steps;
            if (g.finished) {
                return;
            }
        }
    }

    void groupFinished(FiberGroup g) {
        groups.remove(g);
        notStartedWithWork.remove(g);
    }

    // ---------------------------------------------------------------- running a fiber

    /**
     * Runs the fiber's steps until it waits, yields, finishes or uses {@code budget} steps.
     * Returns the number of steps run.
     */
    private int runFiber(Fiber fiber, int budget) {
        FiberGroup group = fiber.group;
        currentFiber = fiber;
        fiber.state = Fiber.STATE_RUNNING;
        int steps = 0;
        try {
            while (true) {
                FiberFrame<?> frame = fiber.top;
                if (fiber.resumeError != null && frame.stage == FiberFrame.STAGE_FINALLY) {
                    // An error in doFinally (or a step it resumed) ends the frame, replacing any pending error.
                    Throwable e = fiber.resumeError;
                    fiber.resumeError = null;
                    if (frame.pendingError != null && frame.pendingError != e) {
                        e.addSuppressed(frame.pendingError);
                    }
                    frame.pendingError = e;
                    frame.resumePoint = null;
                    if (popFrame(fiber, frame)) {
                        return steps;
                    }
                    continue;
                }
                if (steps >= budget) {
                    group.makeReady(fiber);
                    return steps;
                }
                steps++;
                fiber.stepAction = Fiber.ACTION_NONE;
                FrameCallResult token;
                try {
                    token = step(fiber, frame);
                } catch (Throwable t) {
                    if (group.fatalError != null) {
                        group.stopFatally(group.fatalError);
                        return steps;
                    }
                    if (fiber.stepAction != Fiber.ACTION_NONE) {
                        group.misuse(fiber, "threw " + t + " after a suspending call (" + fiber.stepActionName
                                + ") in the same step; return the call's token at once");
                        group.stopFatally(group.fatalError);
                        return steps;
                    }
                    fiber.resumeInput = null;
                    fiber.resumeError = t;
                    continue;
                }
                if (group.fatalError != null) {
                    group.stopFatally(group.fatalError);
                    return steps;
                }
                byte action = fiber.stepAction;
                if (token == null || action == Fiber.ACTION_NONE
                        || (token == FrameCallResult.RETURN) != (action == Fiber.ACTION_RETURN)) {
                    group.misuse(fiber, "returned " + token + " from a step that "
                            + (action == Fiber.ACTION_NONE ? "made no suspending call"
                            : "made the call " + fiber.stepActionName)
                            + "; return the token of the step's one suspending call or Fiber.frameReturn()");
                    group.stopFatally(group.fatalError);
                    return steps;
                }
                switch (action) {
                    case Fiber.ACTION_CALL:
                    case Fiber.ACTION_RESUME:
                        continue;
                    case Fiber.ACTION_RETURN:
                        if (frame.stage != FiberFrame.STAGE_FINALLY && frame.overridesFinally) {
                            frame.finallyDue = true;
                            continue;
                        }
                        if (popFrame(fiber, frame)) {
                            return steps;
                        }
                        continue;
                    case Fiber.ACTION_YIELD:
                        group.makeReady(fiber);
                        return steps;
                    default:
                        // ACTION_WAIT: the fiber is parked on something (or was already woken by this very step).
                        return steps;
                }
            }
        } finally {
            currentFiber = null;
            group.finishIfDeferred();
        }
    }

    /** Runs one step of the top frame: its body, a resume point, handle or doFinally. */
    @SuppressWarnings("unchecked")
    private static FrameCallResult step(Fiber fiber, FiberFrame<?> frame) throws Throwable {
        Throwable error = fiber.resumeError;
        if (error != null) {
            fiber.resumeError = null;
            fiber.resumeInput = null;
            frame.resumePoint = null;
            if (frame.stage == FiberFrame.STAGE_BODY) {
                frame.stage = FiberFrame.STAGE_HANDLE;
                return frame.handle(error);
            }
            // handle (or a step it resumed) failed: doFinally runs, then the error goes to the caller.
            frame.stage = FiberFrame.STAGE_FINALLY;
            frame.pendingError = error;
            return frame.doFinally();
        }
        if (frame.finallyDue) {
            frame.finallyDue = false;
            frame.stage = FiberFrame.STAGE_FINALLY;
            return frame.doFinally();
        }
        FrameCall<Object> rp = frame.resumePoint;
        Object input = fiber.resumeInput;
        fiber.resumeInput = null;
        if (fiber.drainChannel != null) {
            input = null;
            fiber.drainChannel.drainAfterWake(fiber);
        }
        if (rp == null) {
            return frame.execute(input);
        }
        frame.resumePoint = null;
        return rp.execute(input);
    }

    /**
     * The top frame is done: hand its result or error to the caller. Returns true when it was the
     * entry frame and the fiber has ended.
     */
    private static boolean popFrame(Fiber fiber, FiberFrame<?> frame) {
        Throwable error = frame.pendingError;
        Object result = frame.result;
        FiberFrame<?> caller = frame.caller;
        frame.leave();
        fiber.top = caller;
        if (caller == null) {
            fiber.group.fiberEnded(fiber, error);
            return true;
        }
        if (error != null) {
            fiber.resumeError = error;
        } else {
            fiber.resumeInput = result;
        }
        return false;
    }

    // ---------------------------------------------------------------- timers

    void addTimer(Fiber fiber, long timeoutMillis) {
        // Capped well below Long.MAX_VALUE: deadlines are compared by difference, which must not
        // overflow even against a timer that is long overdue.
        long delayNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(timeoutMillis), MAX_DELAY_NANOS);
        // A fresh reading, not the round's cached one: a timeout must never end early, and the
        // round may have started a while ago.
        fiber.deadlineNanos = timestamp.source().nanoTime() + delayNanos;
        fiber.timerSeq = timerSeq++;
        if (timerCount == timerHeap.length) {
            timerHeap = Arrays.copyOf(timerHeap, timerCount * 2);
        }
        int i = timerCount++;
        timerHeap[i] = fiber;
        fiber.timerIndex = i;
        siftUp(i);
    }

    void removeTimer(Fiber fiber) {
        int i = fiber.timerIndex;
        if (i < 0 || i >= timerCount || timerHeap[i] != fiber) {
            ImpossibleStates.report("timer of {} is not in the heap of dispatcher '{}'", fiber, name);
            return;
        }
        fiber.timerIndex = -1;
        int last = --timerCount;
        Fiber moved = timerHeap[last];
        timerHeap[last] = null;
        if (i != last) {
            timerHeap[i] = moved;
            moved.timerIndex = i;
            siftDown(i);
            if (moved.timerIndex == i) {
                siftUp(i);
            }
        }
        if (timerHeap.length > 1024 && timerCount < timerHeap.length / 4) {
            timerHeap = Arrays.copyOf(timerHeap, timerHeap.length / 2);
        }
    }

    private void fireDueTimers() {
        long now = timestamp.nanoTime();
        while (timerCount > 0) {
            Fiber f = timerHeap[0];
            if (f.deadlineNanos - now > 0) {
                return;
            }
            removeTimer(f);
            f.onTimeout();
        }
    }

    private static boolean before(Fiber a, Fiber b) {
        long d = a.deadlineNanos - b.deadlineNanos;
        return d < 0 || (d == 0 && a.timerSeq < b.timerSeq);
    }

    private void siftUp(int i) {
        Fiber f = timerHeap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Fiber p = timerHeap[parent];
            if (!before(f, p)) {
                break;
            }
            timerHeap[i] = p;
            p.timerIndex = i;
            i = parent;
        }
        timerHeap[i] = f;
        f.timerIndex = i;
    }

    private void siftDown(int i) {
        Fiber f = timerHeap[i];
        int half = timerCount >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            Fiber c = timerHeap[child];
            int right = child + 1;
            if (right < timerCount && before(timerHeap[right], c)) {
                child = right;
                c = timerHeap[child];
            }
            if (!before(c, f)) {
                break;
            }
            timerHeap[i] = c;
            c.timerIndex = i;
            i = child;
        }
        timerHeap[i] = f;
        f.timerIndex = i;
    }

    // ---------------------------------------------------------------- statistics

    /** Pending timers (sleeps and timed waits). Dispatcher thread, or racy elsewhere. */
    int timerCount() {
        return timerCount;
    }

    public long roundCount() {
        return roundCount;
    }

    /** Frame steps run since start. */
    public long stepCount() {
        return stepCount;
    }

    /** Times the thread parked for lack of work. */
    public long parkCount() {
        return parkCount;
    }

    /** Times another thread had to unpark the dispatcher to deliver work. */
    public long unparkCount() {
        return (long) UNPARK_COUNT.getVolatile(this);
    }

    @Override
    public String toString() {
        return describe();
    }
}
