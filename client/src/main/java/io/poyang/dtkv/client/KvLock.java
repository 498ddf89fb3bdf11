package io.poyang.dtkv.client;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvLockEvent;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.client.RaftOutcomeUnknownException;

import java.lang.ref.ReferenceQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A distributed lock of a DtKV group, as this client holds it (get it with
 * {@link KvClient#lock(String)}; one object per name and group).
 *
 * <p>{@link #tryLock(long, long)} asks for the lock with a lease: granted at once when free (the
 * answer carries the <b>fencing token</b>, the raft index of the grant, which grows from one grant of
 * the lock to the next — pass it to the storage you protect); when held by another, a wait of 0
 * returns false, a longer wait queues this client (FIFO) and the server pushes the grant when the
 * holder unlocks or its lease runs out. If the wait ends first, the client leaves the queue (an
 * UNLOCK, which also gives back a grant that crossed it) and returns false.
 *
 * <p>A pushed grant is not taken on trust: every replica pushes the grants it applies, and one that
 * applies behind (after a partition, or replaying its log) can push a grant whose lease already ran
 * out and whose lock is now someone else's. So a waiting tryLock that hears of a grant asks the
 * leader again (a tryLock: the holder's is answered GRANTED, and a client no longer queued joins
 * the queue again) and holds only on a GRANTED answer. The same question is asked when the wait
 * passes a lease (at least {@value #MIN_CHECK_MILLIS} ms) with no grant, and when a connection of
 * the client comes back: pushes are best effort, and a lost one would leave the wait waiting in vain.
 *
 * <p>A tryLock that fails with {@link RaftOutcomeUnknownException} (no answer within the client's
 * timeout) may still have been granted, or have queued this client, on the server, where nothing
 * here would take it: the grant would sit unused for its lease, or a queue place would later be
 * granted to a client that does not wait for it. So before the failure is reported the client sends
 * one UNLOCK, which gives back whatever the request got; a tryLock the caller makes next goes
 * behind it. The same is done for a check whose outcome is unknown when its wait has ended.
 *
 * <p>The holder renews with {@link #updateLease}; a lease that runs out ends the hold for everyone
 * at once (the server pushes LOST). {@link #isHeld()} is the client's view of the lease, counted
 * from when the request that the GRANTED answer came to was sent (the tryLock, or for a grant after
 * waiting the question that confirmed it): the server started it no earlier, so the client's view
 * ends first. Pass the fencing token to what the lock protects: it is what makes a stale holder
 * harmless.
 *
 * <p>One tryLock at a time per object (and the client has one object per name): a tryLock made
 * while another has not ended — its answer has not come, or it waits in the queue — fails with
 * IllegalStateException. {@link #unlock()} ends such a tryLock (it returns false).
 *
 * <p>{@link KvClient#lock} returns the same object for a name as long as it exists. The client keeps
 * an object only while it is in use (held, or a tryLock on its way or waiting); one that is not is
 * kept by whoever refers to it, and once nobody does the garbage collector takes it, so locking
 * many names ({@code "order." + id}) does not make the client grow. The next {@code lock(name)} then
 * makes a new object (which the application cannot tell from the old one: it no longer refers to it).
 */
public final class KvLock {

    private static final PoyangLog log = PoyangLogs.get(KvLock.class);
    /** A waiting tryLock asks whether it holds after this long with no grant at the least (see {@link #checkLater}). */
    static final long MIN_CHECK_MILLIS = 1_000;

    /** Hears a lock lost by lease expiry (not by unlock). Runs on the client's event executor. */
    interface LossListener {
        void onLost(KvLock lock);
    }

    private final KvClient client;
    private final String name;
    /** This lock in the client's map ({@link KvLocks}), which keeps it strongly while it is in use. */
    final KvLocks.Entry entry;
    private long fencingToken;
    /**
     * The highest fencing token this lock object was ever granted (kept across unlocks). Tokens grow
     * from one grant to the next, so a GRANTED push at or below it is an old grant pushed again (by
     * a new leader, or another replica) and must not be taken for the grant of a later tryLock.
     * A new object of the name starts from 0 again: harmless, a pushed grant is held only once the
     * leader confirms it (see {@link KvLocks}).
     */
    private long highestToken;
    private long leaseDeadlineNanos;
    private boolean held;
    /** A queued tryLock waiting for its grant. */
    private CompletableFuture<Boolean> waiting;
    private long waitingLeaseMillis;
    /** When the wait ends ({@link System#nanoTime()}): the remaining wait is what a check asks for. */
    private long waitEndNanos;
    private ScheduledFuture<?> waitTimer;
    /** The next check of the wait when no grant comes ({@link #checkLater}). */
    private ScheduledFuture<?> checkTimer;
    /**
     * The wait whose check is on its way (one at a time per wait). Another future here is of a
     * wait that ended meanwhile; its answer takes nothing.
     */
    private CompletableFuture<Boolean> checking;
    /**
     * The newest pushed grant of the current wait that no check sent after it has answered yet: a
     * check answered QUEUED below this token may have been applied before that grant, so it asks again.
     */
    private long unconfirmedToken;
    /**
     * The tryLock whose answer has not come yet (a grant push may overtake its QUEUED answer). An
     * answer for any other future is of a tryLock that {@link #unlockAsync} ended: it takes nothing.
     */
    private CompletableFuture<Boolean> inFlight;
    /** The newest GRANTED token pushed while {@link #inFlight}'s answer had not come (0: none). */
    private long earlyToken;
    /**
     * The raft index of the entry that queued the current wait, or of its last check answered
     * QUEUED: a grant of the wait has a larger token, and an older one either is held still (the
     * check would have been answered GRANTED) or is over.
     */
    private long queuedAtIndex;
    /**
     * The client stopped and sent its unlock: an answer that arrives afterwards (a tryLock that was
     * in flight) grants nothing here, since the unlock behind it gives the lock back.
     */
    private boolean releasedAtStop;
    /**
     * GRANTED pushes that made a waiting tryLock of this object ask the leader ({@link #onEvent}).
     * Only tests read it ({@link #grantPushesHeardForTests}): it tells a grant learned by push from
     * one a wait's own check found.
     */
    private int grantPushesHeard;
    /**
     * Test seam: a waiting tryLock makes none of its own checks (after a lease, on reconnect), so it
     * learns of a grant only by push; it still asks again about a pushed grant when asking failed.
     * Set by {@link #holdOwnChecksForTests}.
     */
    private volatile boolean ownChecksHeld;
    volatile LossListener lossListener;
    /**
     * Guards the fields above. Not {@code this}: a renewal's answer takes it on the client's I/O
     * thread, which an application synchronizing on its KvLock object must not be able to block.
     */
    private final Object mon = new Object();

    KvLock(KvClient client, String name, String id, ReferenceQueue<KvLock> collected) {
        this.client = client;
        this.name = name;
        this.entry = new KvLocks.Entry(this, id, collected);
    }

    /**
     * Keeps this lock in the client's map while it is held, or a tryLock is on its way or waits:
     * an application may drop its reference meanwhile, and the next {@link KvClient#lock} of the
     * name must find this state (and a push, this tryLock). An unused lock is kept only by whoever
     * refers to it. Caller holds {@link #mon}, after changing any of these.
     */
    private void keepWhileInUse() {
        entry.inUse = held || waiting != null || inFlight != null ? this : null;
    }

    public String name() {
        return name;
    }

    /** The fencing token of the current hold (0 when not held). */
    public long fencingToken() {
        synchronized (mon) {
            return held ? fencingToken : 0;
        }
    }

    /** A tryLock of this object waits in the lock's queue for its GRANTED push. */
    boolean isQueued() {
        synchronized (mon) {
            return waiting != null;
        }
    }

    /**
     * Test seam, for tests only: whether the waiting tryLock has a question out to the leader (a
     * check on its way) or a pushed grant still to confirm. A test that hands in a grant push waits for
     * this to turn false (the leader's answer was handled) instead of sleeping. Reads existing state.
     */
    boolean checkOutstandingForTests() {
        synchronized (mon) {
            return checking != null || unconfirmedToken != 0;
        }
    }

    /**
     * Test seam, for tests only: from now on a waiting tryLock of this object asks the leader only
     * when a GRANTED push comes (no check after a lease, none on reconnect), so a test can tell that
     * a grant arrived by push. A wait would stay unconfirmed if its push were lost: never in use.
     */
    void holdOwnChecksForTests() {
        ownChecksHeld = true;
    }

    /** Test seam, for tests only: how many GRANTED pushes made a waiting tryLock of this object ask the leader. */
    int grantPushesHeardForTests() {
        synchronized (mon) {
            return grantPushesHeard;
        }
    }

    /** Whether this client holds the lock with a lease that has not run out (by its own clock). */
    public boolean isHeld() {
        synchronized (mon) {
            return held && leaseDeadlineNanos - System.nanoTime() > 0;
        }
    }

    /** When the current hold's lease runs out by this client's clock ({@link System#nanoTime()}); meaningful while held. */
    long leaseDeadlineNanos() {
        synchronized (mon) {
            return leaseDeadlineNanos;
        }
    }

    /** {@link #leaseDeadlineNanos()} while held, {@code otherwise} when not (lost, refused or released). */
    long leaseDeadlineNanosIfHeld(long otherwise) {
        synchronized (mon) {
            return held ? leaseDeadlineNanos : otherwise;
        }
    }

    /**
     * Takes the lock with a lease of {@code leaseMillis}, waiting in the queue up to
     * {@code waitMillis} (0: do not wait). True when held (see {@link #fencingToken()}).
     */
    public boolean tryLock(long leaseMillis, long waitMillis) {
        return KvClient.sync(tryLockAsync(leaseMillis, waitMillis));
    }

    /** {@link #tryLock(long, long)} reporting to {@code callback} (on the callback executor). */
    public void tryLock(long leaseMillis, long waitMillis, KvCallback<Boolean> callback) {
        relay(tryLockAsync(leaseMillis, waitMillis), callback);
    }

    public CompletableFuture<Boolean> tryLockAsync(long leaseMillis, long waitMillis) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        long sent = System.nanoTime();
        synchronized (mon) {
            // One at a time, counting one still on its way: the second's answer would take the
            // first's place as the wait, and nothing would ever end the first (a blocking tryLock
            // would hang). The client has one object per name, so two threads may well share it.
            if (waiting != null || inFlight != null) {
                result.completeExceptionally(new IllegalStateException("a tryLock of '" + name + "' has not ended yet"
                        + " (it is on its way or waiting in the queue); one at a time per lock object"));
                return result;
            }
            inFlight = result;
            earlyToken = 0;
            keepWhileInUse();
        }
        client.write(KvReq.tryLock(name, leaseMillis, waitMillis), null, KvClient.RAW, new KvCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp r) {
                onTryLockAnswer(r, sent, leaseMillis, waitMillis, result);
            }

            @Override
            public void onFailure(Throwable error) {
                boolean ours;
                boolean giveBack;
                synchronized (mon) {
                    ours = inFlight == result;   // else ended by unlock(), which completes it
                    if (ours) {
                        inFlight = null;
                        keepWhileInUse();
                    }
                    giveBack = mayHoldUnknown(error);
                }
                if (giveBack) {
                    // sent before the failure is reported: a tryLock the caller makes next goes behind it
                    giveBackUnknown("a tryLock");
                }
                if (ours) {
                    result.completeExceptionally(error);
                }
            }
        }, client.shared.config.timeoutMillis);
        return result;
    }

    /**
     * Whether a tryLock or a check of this object that failed with {@code error} may have left the
     * client holding the lock, or queued for it, on the server with nothing here to take it: its
     * outcome is unknown (it may have been applied, or may still be), and no hold or tryLock of this
     * object would take what it got. The server would then keep a grant for a client that never
     * uses it, or queue a client that does not wait, and grant it later; either way the lock sits
     * unused for a lease while others wait. Caller holds {@link #mon}.
     */
    private boolean mayHoldUnknown(Throwable error) {
        return error instanceof RaftOutcomeUnknownException && !releasedAtStop && !held && waiting == null
                && inFlight == null;
    }

    /**
     * Gives back what a tryLock or check whose outcome is unknown may have got ({@link #mayHoldUnknown}):
     * one UNLOCK, which releases a grant or leaves the queue and is harmless when there is neither. It
     * goes behind every copy of that request (their deadline passed, so none is sent again) on the
     * client's session, so the server applies it after the request if it applies the request at all.
     * Best effort: if it fails too, what the request got runs out with its lease (or its wait).
     */
    private void giveBackUnknown(String what) {
        log.info("lock '{}': the outcome of {} is unknown; releasing whatever it may have got", name, what);
        client.write(KvReq.unlock(name), null, KvClient.RAW, new KvCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
            }

            @Override
            public void onFailure(Throwable error) {
                log.info("lock '{}': the unlock after {} with an unknown outcome failed ({}); what it got runs out"
                        + " with its lease", name, what, error.toString());
            }
        }, client.shared.config.timeoutMillis);
    }

    private void onTryLockAnswer(KvResp r, long sentNanos, long leaseMillis, long waitMillis,
                                 CompletableFuture<Boolean> result) {
        boolean granted = false;
        boolean queued = false;
        boolean checkNow = false;
        synchronized (mon) {
            if (inFlight != result) {
                // unlock() ended this tryLock while it was on its way and completes it with false; the
                // unlock follows it on the same session, so a grant in this answer is already given back
                return;
            }
            inFlight = null;
            long early = earlyToken;   // only ever for this request
            earlyToken = 0;
            if (releasedAtStop) {
                // the unlock sent at stop follows this request on the same session: nothing is held
            } else if (r.lockState() == KvResp.LOCK_GRANTED) {
                // the leader's answer: confirmed, and the lease started no earlier than the send
                hold(r.fencingToken(), sentNanos, leaseMillis);
                granted = true;
            } else if (r.lockState() == KvResp.LOCK_QUEUED) {
                // A grant of this wait comes from an entry after the one that queued it; an older
                // token is a grant this object never took (its wait had ended, its UNLOCK gave it
                // back), pushed late by a replica that applies behind or replays its log.
                queuedAtIndex = r.raftIndex();
                waiting = result;
                waitingLeaseMillis = leaseMillis;
                waitEndNanos = sentNanos + TimeUnit.MILLISECONDS.toNanos(waitMillis);
                queued = true;
                try {
                    waitTimer = client.shared.timer.schedule(() -> onWaitOver(result), waitMillis,
                            TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    waiting = null;
                    queued = false;
                }
                if (queued) {
                    // a grant that overtook this answer is confirmed like any pushed grant
                    if (early > highestToken && early > queuedAtIndex) {
                        unconfirmedToken = early;
                        checkNow = true;
                    } else {
                        unconfirmedToken = 0;
                        checkLater(result, checkIntervalMillis(leaseMillis));
                    }
                }
            }
            keepWhileInUse();
        }
        if (granted) {
            result.complete(true);
        } else if (!queued) {
            result.complete(false);
        } else if (checkNow) {
            check(result);
        }
    }

    /** How long a wait goes with no grant before it asks whether it holds: a lease, or {@link #MIN_CHECK_MILLIS}. */
    private static long checkIntervalMillis(long leaseMillis) {
        return Math.max(leaseMillis, MIN_CHECK_MILLIS);
    }

    /** Schedules the check of wait {@code w} in {@code delayMillis}, replacing one scheduled. Caller holds {@link #mon}. */
    private void checkLater(CompletableFuture<Boolean> w, long delayMillis) {
        if (checkTimer != null) {
            checkTimer.cancel(false);
            checkTimer = null;
        }
        if (ownChecksHeld && unconfirmedToken == 0) {
            return;   // test seam: this wait asks only about a pushed grant (again, if asking failed)
        }
        try {
            checkTimer = client.shared.timer.schedule(() -> check(w), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            checkTimer = null;   // the client stops
        }
    }

    /**
     * Asks the leader whether wait {@code w} holds the lock: a tryLock with the wait's lease and what
     * is left of its wait. The server answers the holder GRANTED (renewing its lease from then),
     * keeps a waiter's queue place (QUEUED), and queues again, at the tail, a client it no longer
     * has in the queue (its grant ran out unseen), so the wait goes on for real. A grant is held
     * only on a GRANTED answer, counted from this send. Sent on the timer or event executor.
     */
    private void check(CompletableFuture<Boolean> w) {
        long sent = System.nanoTime();
        long leaseMillis;
        long waitLeftMillis;
        synchronized (mon) {
            if (waiting != w || checking == w || releasedAtStop) {
                return;   // granted or ended, or a check of this wait is on its way (its answer decides)
            }
            waitLeftMillis = TimeUnit.NANOSECONDS.toMillis(waitEndNanos - sent);
            if (waitLeftMillis < 1) {
                return;   // the wait is over: its timer leaves the queue
            }
            checking = w;
            leaseMillis = waitingLeaseMillis;
            if (checkTimer != null) {
                checkTimer.cancel(false);
                checkTimer = null;
            }
        }
        client.write(KvReq.tryLock(name, leaseMillis, waitLeftMillis), null, KvClient.RAW,
                new KvClient.OnArrivalCallback<KvResp>() {
                    @Override
                    public void onSuccess(KvResp r) {
                        onCheckAnswer(w, r, null, sent, leaseMillis);
                    }

                    @Override
                    public void onFailure(Throwable error) {
                        onCheckAnswer(w, null, error, sent, leaseMillis);
                    }
                }, client.shared.config.timeoutMillis);
    }

    /**
     * A check's answer, where it arrives (an I/O thread: the hold is recorded at once, as a renewal's
     * is; the tryLock's future completes on the callback executor).
     */
    private void onCheckAnswer(CompletableFuture<Boolean> w, KvResp r, Throwable error, long sentNanos,
                               long leaseMillis) {
        boolean granted = false;
        boolean ended = false;
        boolean again = false;
        boolean giveBack = false;
        synchronized (mon) {
            if (checking == w) {
                checking = null;
            }
            if (waiting != w || releasedAtStop) {
                // Ended meanwhile (unlock, its wait over, stop): the UNLOCK behind this check gives back
                // what it got. Not always when the check's outcome is unknown: a copy of it sent again
                // after a lost connection may have gone out after that UNLOCK, and be applied after it.
                giveBack = mayHoldUnknown(error);
            } else if (error != null) {
                // outcome unknown or refused: ask again a little later (sooner if a grant waits to be confirmed)
                checkLater(w, unconfirmedToken != 0 ? Math.min(checkIntervalMillis(leaseMillis), 200)
                        : checkIntervalMillis(leaseMillis));
                log.debug("lock '{}': asking whether a waiting tryLock holds failed ({})", name, error);
            } else if (r.lockState() == KvResp.LOCK_GRANTED) {
                hold(r.fencingToken(), sentNanos, leaseMillis);
                endWait();
                granted = true;
            } else if (r.lockState() == KvResp.LOCK_QUEUED) {
                queuedAtIndex = Math.max(queuedAtIndex, r.raftIndex());
                if (unconfirmedToken > queuedAtIndex) {
                    again = true;   // a grant pushed after this check was applied: ask about it
                } else {
                    unconfirmedToken = 0;   // over by now, or never this wait's: the wait goes on
                    checkLater(w, checkIntervalMillis(leaseMillis));
                }
            } else {
                endWait();   // not acquired: the server has no wait left for this client
                ended = true;
            }
        }
        if (giveBack) {
            giveBackUnknown("a check of a wait that ended");
        } else if (granted) {
            client.completeForCaller(w, true, null);
        } else if (ended) {
            client.completeForCaller(w, false, null);
        } else if (again) {
            try {
                client.shared.timer.execute(() -> check(w));
            } catch (RejectedExecutionException e) {
                // the client stops: the waiting tryLock ends with false
            }
        }
    }

    /** The current wait ends (granted, or refused): its timers stop. Caller holds {@link #mon}. */
    private void endWait() {
        waiting = null;
        unconfirmedToken = 0;
        if (waitTimer != null) {
            waitTimer.cancel(false);
            waitTimer = null;
        }
        if (checkTimer != null) {
            checkTimer.cancel(false);
            checkTimer = null;
        }
        keepWhileInUse();
    }

    private void hold(long token, long sentNanos, long leaseMillis) {
        held = true;
        fencingToken = token;
        highestToken = Math.max(highestToken, token);
        leaseDeadlineNanos = sentNanos + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    /** The wait of {@code w} passed with no grant: leave the queue (and give back a grant that crossed it). */
    private void onWaitOver(CompletableFuture<Boolean> w) {
        synchronized (mon) {
            if (waiting != w) {
                return;   // granted, or ended by unlock() (a later tryLock may wait now: not this timer's)
            }
            waitTimer = null;
            endWait();
        }
        client.write(KvReq.unlock(name), null, KvClient.RAW, new KvCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
                w.complete(false);
            }

            @Override
            public void onFailure(Throwable error) {
                w.complete(false);
            }
        }, client.shared.config.timeoutMillis);
    }

    /**
     * A push for this lock (event executor). A GRANTED push for the waiting tryLock is confirmed by
     * asking the leader ({@link #check}) before anything is held: it may come from a replica that
     * applies behind, for a grant whose lease ran out and whose lock is someone else's now.
     */
    void onEvent(KvLockEvent e) {
        CompletableFuture<Boolean> toCheck = null;
        boolean lost = false;
        synchronized (mon) {
            if (e.type() == KvLockEvent.GRANTED) {
                if (e.fencingToken() <= highestToken) {
                    return;   // a grant this object already had (held or released), pushed again
                }
                if (waiting != null) {
                    if (e.fencingToken() <= queuedAtIndex) {
                        return;   // from before this wait was queued or last checked: not its grant now
                    }
                    unconfirmedToken = Math.max(unconfirmedToken, e.fencingToken());
                    grantPushesHeard++;
                    toCheck = waiting;
                } else if (inFlight != null && e.fencingToken() > earlyToken) {
                    earlyToken = e.fencingToken();   // the newest: confirmed once queued (see onTryLockAnswer)
                }
            } else if (e.type() == KvLockEvent.LOST) {
                if (held && e.fencingToken() == fencingToken) {
                    held = false;
                    lost = true;
                    keepWhileInUse();
                }
            }
        }
        if (toCheck != null) {
            check(toCheck);   // a check already on its way asks again when answered below this token
        }
        LossListener l = lossListener;
        if (lost && l != null) {
            l.onLost(this);
        }
    }

    /**
     * Releases the lock (or leaves its queue). LOCK_NOT_HELD when this client has neither. A tryLock
     * of this object that has not ended (on its way, or waiting in the queue) ends with false once
     * the unlock is answered: a grant that crosses the unlock is the one the unlock gives back.
     */
    public void unlock() {
        KvClient.sync(unlockAsync());
    }

    /** {@link #unlock()} reporting to {@code callback} (on the callback executor). */
    public void unlock(KvCallback<Void> callback) {
        relay(unlockAsync(), callback);
    }

    public CompletableFuture<Void> unlockAsync() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        CompletableFuture<Boolean> ended;
        synchronized (mon) {
            held = false;
            fencingToken = 0;
            // A tryLock that has not ended ends here. The UNLOCK goes out behind it on one connection,
            // so the server applies it after the grant or the queue place the tryLock got and undoes
            // either: the tryLock's answer and a grant push that crosses the unlock must take nothing
            // (they find no tryLock of theirs here; a later tryLock's wait refuses a grant from
            // before its QUEUED entry). Only a resend after a lost connection could apply the
            // tryLock last; then too nothing is taken here, and that grant's lease runs out.
            ended = inFlight != null ? inFlight : waiting;
            inFlight = null;
            earlyToken = 0;
            endWait();
        }
        client.write(KvReq.unlock(name), null, KvClient.RAW, new KvCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
                if (ended != null) {
                    ended.complete(false);
                }
                f.complete(null);
            }

            @Override
            public void onFailure(Throwable error) {
                if (ended != null) {
                    ended.complete(false);
                }
                f.completeExceptionally(error);
            }
        }, client.shared.config.timeoutMillis);
        return f;
    }

    /** Renews the holder's lease from now: LEASE_EXPIRED when it already ran out, LOCK_NOT_HELD when not the holder. */
    public void updateLease(long leaseMillis) {
        KvClient.sync(updateLeaseAsync(leaseMillis));
    }

    /** {@link #updateLease(long)} reporting to {@code callback} (on the callback executor). */
    public void updateLease(long leaseMillis, KvCallback<Void> callback) {
        relay(updateLeaseAsync(leaseMillis), callback);
    }

    public CompletableFuture<Void> updateLeaseAsync(long leaseMillis) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        long sent = System.nanoTime();
        final long token;
        synchronized (mon) {
            token = fencingToken;   // the answer speaks of this hold, not of a later one
        }
        // The new deadline is recorded as the answer arrives, not when the callback executor gets to it:
        // behind a blocked executor the lease would otherwise seem to run out while the server renewed it
        // (an ElectionLock would report a loss it did not have). The future completes on the executor.
        client.write(KvReq.updateLease(name, leaseMillis), null, KvClient.RAW, new KvClient.OnArrivalCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
                synchronized (mon) {
                    if (held && fencingToken == token) {
                        leaseDeadlineNanos = sent + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
                    }
                }
                client.completeForCaller(f, null, null);
            }

            @Override
            public void onFailure(Throwable error) {
                if (error instanceof KvException) {
                    KvCode c = ((KvException) error).kvCode();
                    if (c == KvCode.LEASE_EXPIRED || c == KvCode.LOCK_NOT_HELD) {
                        synchronized (mon) {
                            if (fencingToken == token) {
                                held = false;
                                keepWhileInUse();
                            }
                        }
                    }
                }
                client.completeForCaller(f, null, error);
            }
        }, client.shared.config.timeoutMillis);
        return f;
    }

    /**
     * Hands a future's outcome to a callback. The futures here are completed on the client's callback
     * or event executor (never on an I/O thread unless the client is configured so), and so is the
     * callback; only a future already failed when made (a second tryLock on this object) reports at once.
     */
    private static <T> void relay(CompletableFuture<T> f, KvCallback<T> callback) {
        f.whenComplete((result, error) -> {
            try {
                if (error == null) {
                    callback.onSuccess(result);
                } else {
                    callback.onFailure(error instanceof java.util.concurrent.CompletionException
                            && error.getCause() != null ? error.getCause() : error);
                }
            } catch (Throwable t) {
                log.warn("a KvLock callback threw", t);
            }
        });
    }

    /**
     * The client stops (before its connections close): if this lock is held, its tryLock waits in
     * the queue or a tryLock is still on its way, one unlock is sent, best effort, so the next in line is not kept waiting a whole
     * lease by a client that is gone. The network's graceful stop waits for its answer (up to its
     * stop timeout); a failure only means the lease runs out as it would have.
     */
    void releaseOnStop() {
        synchronized (mon) {
            // a tryLock still on its way may yet be granted or queued: its unlock goes right behind it
            if (!held && waiting == null && inFlight == null) {
                return;
            }
            held = false;
            fencingToken = 0;
            releasedAtStop = true;
            keepWhileInUse();
        }
        client.write(KvReq.unlock(name), null, KvClient.RAW, new KvCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
            }

            @Override
            public void onFailure(Throwable error) {
                log.debug("lock '{}': the unlock sent at stop failed ({}); its lease will run out", name, error);
            }
        }, client.shared.config.timeoutMillis);
    }

    /**
     * A connection of the client came back: a grant pushed while it was down was lost, so a waiting
     * tryLock asks whether it holds (on the client's timer thread).
     */
    void onReconnected() {
        CompletableFuture<Boolean> w;
        synchronized (mon) {
            w = waiting;
        }
        if (w != null && !ownChecksHeld) {
            check(w);
        }
    }

    /** The client stops: a waiting tryLock ends with false. */
    void onClientClosed() {
        CompletableFuture<Boolean> w;
        synchronized (mon) {
            w = waiting;
            endWait();
        }
        if (w != null) {
            w.complete(false);
        }
    }

    @Override
    public String toString() {
        synchronized (mon) {
            return "KvLock(" + name + (held ? ", held, token " + fencingToken : "") + ")";
        }
    }
}
