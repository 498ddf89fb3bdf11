package io.poyang.dtkv.client;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * An auto-renewing lock for leader election: once started it keeps asking for the lock (waiting in
 * the queue), and while it holds it renews the lease every third of the lease. The listener hears
 * {@link Listener#onAcquired} with the fencing token when this client becomes the leader and
 * {@link Listener#onLost} when it stops being one, on the client's event executor, in order.
 *
 * <p>Loss is reported honestly: on a LOST push, on a renewal refused (LEASE_EXPIRED, LOCK_NOT_HELD),
 * and also when renewals fail (timeouts, no leader) until the lease — counted from when the last
 * successful renewal was <em>sent</em> — has run out by this client's clock, at that moment (a
 * timer). The server frees the lock no earlier (a grant after waiting, too, counts from a request
 * the client sent: see {@link KvLock}), so {@link #isLeader()} is false before another client can
 * be granted it. After a loss it asks for the lock again. A grant whose lease is already over by
 * the time it is handled (a busy callback executor) is not reported: it asks again instead.
 * {@link #close()} stops, releasing the lock if held (no onLost for that); it does not wait for
 * the release, which {@link #closeAsync()} reports.
 *
 * <p>Stopping the client stops the election lock too: a leader stops claiming it at once
 * ({@link #isLeader()} false) and hears onLost, before the client releases the lock, which lets the
 * next candidate lead; a candidate stops asking.
 */
public final class ElectionLock implements AutoCloseable {

    private static final PoyangLog log = PoyangLogs.get(ElectionLock.class);
    /**
     * How long one tryLock waits in the queue. When it ends the candidate leaves the queue (KvLock's
     * UNLOCK) and asks again, at the tail: the order among waiting candidates is not kept across
     * rounds. The round bounds how long a candidate that died stays queued, where its turn would
     * cost the others a lease with no leader.
     */
    private static final long WAIT_ROUND_MILLIS = 10_000;

    /** Election callbacks. */
    public interface Listener {
        /** This client holds the lock: it is the leader; {@code fencingToken} orders leaderships. */
        void onAcquired(long fencingToken);

        /** This client no longer holds the lock (lease ran out, renewal refused, or not renewed in time). */
        void onLost();
    }

    private final KvClient client;
    private final KvLock lock;
    private final long leaseMillis;
    private final Listener listener;
    private boolean started;
    private boolean closed;
    private boolean leading;
    private long leaseDeadlineNanos;
    private long generation;
    private ScheduledFuture<?> renewTask;
    /** Fires when the lease runs out by this client's clock unless a renewal moved it first. */
    private ScheduledFuture<?> deadlineTask;
    /** The outcome of the release {@link #closeAsync()} started (null before it was called). */
    private CompletableFuture<Void> closing;

    ElectionLock(KvClient client, String name, long leaseMillis, Listener listener) {
        if (leaseMillis < 300) {
            throw new IllegalArgumentException("an election lease under 300 ms leaves no time to renew: " + leaseMillis);
        }
        this.client = client;
        this.lock = client.lock(name);
        this.leaseMillis = leaseMillis;
        this.listener = listener;
        lock.lossListener = l -> lost("the server reported the lease ran out");
    }

    /** Starts competing for the lock. */
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        client.shared.electionLocks.add(this);
        acquire();
    }

    /** Whether this client leads now (holds the lock with a live lease by its own clock). */
    public synchronized boolean isLeader() {
        return leading && leaseDeadline() - System.nanoTime() > 0;
    }

    /**
     * When the lease runs out by this client's clock: the later of the deadline this object set and
     * the one its lock recorded. The lock records a renewal the moment its answer arrives; this
     * object hears of it only when the callback executor runs, which a blocking task there can delay
     * past the lease (the loss would then be reported although every renewal succeeded). Caller
     * holds the monitor.
     */
    private long leaseDeadline() {
        long recordedByLock = lock.leaseDeadlineNanosIfHeld(leaseDeadlineNanos);
        return recordedByLock - leaseDeadlineNanos > 0 ? recordedByLock : leaseDeadlineNanos;
    }

    /** The fencing token of the current leadership (0 when not leading). */
    public long fencingToken() {
        return isLeader() ? lock.fencingToken() : 0;
    }

    private void acquire() {
        final long gen;
        synchronized (this) {
            if (closed) {
                return;
            }
            gen = generation;
        }
        lock.tryLockAsync(leaseMillis, WAIT_ROUND_MILLIS).whenComplete((ok, e) -> {
            boolean stale;
            boolean grantedAfterClose = false;
            boolean overAlready = false;
            synchronized (this) {
                stale = closed || gen != generation;
                if (stale) {
                    grantedAfterClose = closed && e == null && ok;
                } else if (e == null && ok && !lock.isHeld()) {
                    // the lease ran out by this client's clock before this ran (a blocked callback
                    // executor): another client may lead by now, so this is no leadership to report
                    overAlready = true;
                } else if (e == null && ok) {
                    leading = true;
                    // the lock's own view: from when the request the grant answered was sent (the tryLock,
                    // or the check that confirmed a grant after waiting), not from `sent`, which may be a
                    // whole wait earlier
                    leaseDeadlineNanos = lock.leaseDeadlineNanos();
                    generation++;
                    long token = lock.fencingToken();
                    scheduleRenew();
                    scheduleDeadline();
                    // last: an executor that runs it inline runs it here, and a close() in it must find
                    // the timers set, to cancel them
                    client.shared.eventExecutor.execute(() -> listener.onAcquired(token));
                    return;
                }
            }
            if (stale) {
                if (grantedAfterClose) {
                    // granted after close() (the tryLock waited in the queue): nobody leads with it, and
                    // kept it would stop every other candidate for a whole lease; give it back now
                    giveBack();
                }
                return;
            }
            if (e != null) {
                log.debug("election lock '{}': asking failed ({}); asking again", lock.name(), e.toString());
            } else if (overAlready) {
                log.info("election lock '{}': granted, but the lease ran out before the grant was handled (a busy"
                        + " callback executor?); not reporting it, asking again", lock.name());
            }
            later(this::acquire, e == null ? 0 : Math.min(leaseMillis / 3, 500));
        });
    }

    private void giveBack() {
        lock.unlockAsync().whenComplete((v, e) -> {
            if (e != null) {
                log.info("election lock '{}': giving back a grant that came after close failed ({}); its lease"
                        + " will run out", lock.name(), e.toString());
            }
        });
    }

    private void scheduleRenew() {
        final long gen = generation;
        try {
            renewTask = client.shared.timer.scheduleAtFixedRate(() -> renew(gen), leaseMillis / 3, leaseMillis / 3,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the client stops
        }
    }

    /**
     * Reports the loss the moment the lease runs out by this client's clock, not at the next renewal
     * round: the server frees the lock no earlier (its lease counts from when the renewal was applied,
     * later than it was sent), so the listener hears onLost before another client can be granted it
     * (give or take this timer's delay). Caller holds the monitor.
     */
    private void scheduleDeadline() {
        if (deadlineTask != null) {
            deadlineTask.cancel(false);
        }
        final long gen = generation;
        long delayNanos = Math.max(0, leaseDeadline() - System.nanoTime());
        try {
            deadlineTask = client.shared.timer.schedule(() -> {
                synchronized (this) {
                    if (closed || gen != generation || !leading) {
                        return;
                    }
                    if (leaseDeadline() - System.nanoTime() <= 0) {
                        lostLocked("the lease ran out before a renewal succeeded");
                    } else {
                        scheduleDeadline();   // renewed, and the callback that says so has not run yet
                    }
                }
            }, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the client stops
        }
    }

    private void renew(long gen) {
        synchronized (this) {
            if (closed || gen != generation || !leading) {
                return;
            }
            if (leaseDeadline() - System.nanoTime() <= 0) {
                // no renewal got through within the lease: we cannot claim to lead any longer
                lostLocked("the lease ran out before a renewal succeeded");
                return;
            }
        }
        long sent = System.nanoTime();
        lock.updateLeaseAsync(leaseMillis).whenComplete((v, e) -> {
            if (e == null) {
                synchronized (this) {
                    if (gen == generation && leading) {
                        leaseDeadlineNanos = sent + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
                        scheduleDeadline();
                    }
                }
                return;
            }
            if (e instanceof KvException) {
                KvCode c = ((KvException) e).kvCode();
                if (c == KvCode.LEASE_EXPIRED || c == KvCode.LOCK_NOT_HELD) {
                    synchronized (this) {
                        if (gen == generation) {
                            lostLocked("a renewal was refused: " + c);
                        }
                    }
                }
            }
            // other failures: the next round tries again; the deadline check above reports loss in time
        });
    }

    private void lost(String why) {
        synchronized (this) {
            lostLocked(why);
        }
    }

    private void lostLocked(String why) {
        if (!leading || closed) {
            return;
        }
        leading = false;
        generation++;
        cancelTimers();
        log.info("election lock '{}': leadership lost: {}", lock.name(), why);
        client.shared.eventExecutor.execute(listener::onLost);
        later(this::acquire, 0);
    }

    private void cancelTimers() {
        if (renewTask != null) {
            renewTask.cancel(false);
            renewTask = null;
        }
        if (deadlineTask != null) {
            deadlineTask.cancel(false);
            deadlineTask = null;
        }
    }

    private void later(Runnable r, long delayMillis) {
        try {
            client.shared.timer.schedule(r, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the client stops
        }
    }

    /**
     * The client stops, before it releases its locks: stop competing, and if leading, stop claiming
     * it now and tell the listener. The release that follows lets the next candidate lead at once;
     * until this, {@link #isLeader()} would have stayed true for up to a lease. The client then
     * releases the lock, or leaves its queue, itself ({@link KvLock#releaseOnStop()}). Not asking
     * again matters too: a tryLock sent after that release would queue a client that is gone.
     */
    void onClientStop() {
        Boolean wasLeading = markClosed();
        if (wasLeading == null) {
            return;
        }
        if (wasLeading) {
            log.info("election lock '{}': leadership ends: the client stops", lock.name());
            client.shared.eventExecutor.execute(listener::onLost);
        }
    }

    /**
     * Marks this election lock closed and ends its timers and leadership: whether it was leading,
     * or null when it was closed already (by {@link #close} or {@link #onClientStop}).
     */
    private synchronized Boolean markClosed() {
        if (closed) {
            return null;
        }
        closed = true;
        boolean wasLeading = leading;
        leading = false;
        generation++;
        cancelTimers();
        return wasLeading;
    }

    /**
     * Stops competing and releases the lock if held (a grant that its waiting tryLock gets later is
     * given back when it arrives); the listener hears no onLost for that. It does not wait for the
     * release: it sends the unlock and returns, and a failed release is logged (the lease then runs
     * out). So it may be called anywhere, also in a listener or a callback of the client that runs
     * on the thread that must deliver the unlock's answer (the I/O thread, with
     * {@code callbackOnIoThread} or an executor that runs tasks inline), where waiting for that
     * answer would stall for the client's whole timeout. {@link #closeAsync()} tells when the lock
     * is released.
     */
    @Override
    public void close() {
        closeAsync();
    }

    /**
     * {@link #close()}, returning a future that completes once the release is answered (at once when
     * there was nothing to release: not leading, or already closed by the client's stop), or fails
     * with the unlock's error. Every call returns the first call's future. Like the client's other
     * futures it completes on the callback executor: chain on it, or wait for it on a thread of the
     * application's own, not in a listener or callback of the client (with a single-threaded
     * executor the wait would block the very thread that completes it).
     */
    public CompletableFuture<Void> closeAsync() {
        client.shared.electionLocks.remove(this);
        CompletableFuture<Void> done;
        Boolean wasLeading;
        synchronized (this) {
            if (closing != null) {
                return closing;
            }
            closing = done = new CompletableFuture<>();
            wasLeading = markClosed();
        }
        if (wasLeading == null) {
            done.complete(null);   // the client stopped first and released its locks itself
            return done;
        }
        lock.lossListener = null;
        if (!wasLeading) {
            done.complete(null);
            return done;
        }
        lock.unlockAsync().whenComplete((v, e) -> {
            if (e == null) {
                done.complete(null);
                return;
            }
            log.info("election lock '{}': releasing at close failed ({}); its lease will run out", lock.name(),
                    e.toString());
            done.completeExceptionally(e);
        });
        return done;
    }
}
