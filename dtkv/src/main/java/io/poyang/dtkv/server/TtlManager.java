package io.poyang.dtkv.server;

import io.poyang.dtkv.KvReq;

import java.util.ArrayList;
import java.util.List;

/**
 * Tracks when temp nodes and lock leases run out, on every replica, and tells the leader which
 * expiries to propose.
 *
 * <p>Every replica keeps the same deadlines (log-clock milliseconds, set by applies), so a new
 * leader has them all at once: nothing is lost on a leader change. Only the leader proposes: the
 * raft wiring calls {@link #pollDue} from a timer on the leader (at {@link #nextDueMillis}) and
 * proposes each returned EXPIRE / EXPIRE_LOCK request as an ordinary log entry. Applying one checks
 * that the node (by create index) or the grant (by fencing token) is still the one that ran out and
 * that its deadline is at or before the entry's log clock; otherwise it is STALE_EXPIRE and changes
 * nothing. So a proposal that races an updateTtl, a re-creation or an unlock is harmless.
 *
 * <p>Leader changes never shorten a TTL. Deadlines are in the log clock, which is the old leader's
 * clock until the new term's first entry is applied; that entry moves every deadline later by the
 * gap between the two clocks' readings, on every replica (KvStore#advanceClock). Between the
 * election and that apply, the new leader measures with its own clock, so {@link #onLeaderStart}
 * takes its clock reading and, when it is ahead of the log clock, expires everything that much
 * later ({@link #leaderOffsetMillis}); once the term's first entry is applied the deadlines
 * themselves have moved and the offset goes back to 0 ({@link #onTermApplied}). A proposal that is
 * not applied within {@code expireRetryMillis} (lost in a leader change, say) is proposed again.
 *
 * <p>Single-threaded: the apply thread.
 */
public final class TtlManager {

    private final KvStore store;
    private final DeadlineHeap<KvEntry> nodes;
    private final DeadlineHeap<KvLock> leases;
    private final long expireRetryMillis;
    private boolean leader;
    private long offsetMillis;

    TtlManager(KvStore store, DeadlineHeap<KvEntry> nodes, DeadlineHeap<KvLock> leases, long expireRetryMillis) {
        this.store = store;
        this.nodes = nodes;
        this.leases = leases;
        this.expireRetryMillis = expireRetryMillis;
    }

    /**
     * This node became leader. Call when it is elected, with its wall clock, before it applies its
     * own first entry (whose timestamp would move the log clock to the new leader's clock and hide
     * the gap). A store that has applied nothing has no deadlines and gets no offset.
     */
    public void onLeaderStart(long localNowMillis) {
        leader = true;
        long clock = store.logClockMillis();
        offsetMillis = clock == 0 ? 0 : Math.max(0, localNowMillis - clock);
        clearProposed(nodes);
        clearProposed(leases);
    }

    /**
     * The store applied the first entry of a newer term and moved every deadline by the gap the
     * offset was standing in for: from now on deadlines are in this term's clock.
     */
    void onTermApplied() {
        offsetMillis = 0;
    }

    /** This node is no longer leader: it proposes nothing until the next {@link #onLeaderStart}. */
    public void onLeaderEnd() {
        leader = false;
    }

    public boolean isLeader() {
        return leader;
    }

    /** How much later than their log-clock deadlines this leader expires things (see the class comment). */
    public long leaderOffsetMillis() {
        return offsetMillis;
    }

    /** Temp nodes with a deadline. */
    public int trackedNodeCount() {
        return nodes.size();
    }

    /** Held locks (each has a lease deadline). */
    public int trackedLeaseCount() {
        return leases.size();
    }

    /**
     * Leader only: when, by this node's wall clock, the next expiry becomes due (Long.MAX_VALUE:
     * nothing to expire). A timer set for then and calling {@link #pollDue} needs no polling.
     */
    public long nextDueMillis() {
        long d = Math.min(nodes.firstDeadline(), leases.firstDeadline());
        return d == Long.MAX_VALUE ? d : d + offsetMillis;
    }

    /**
     * Leader only: the expiries to propose now, at most {@code max}. Each is returned once; if it
     * is not applied within the retry time it comes again. Not leader: an empty list.
     */
    public List<KvReq> pollDue(long localNowMillis, int max) {
        List<KvReq> out = new ArrayList<>();
        if (!leader) {
            return out;
        }
        long due = localNowMillis - offsetMillis;
        nodes.forEachDue(due, e -> {
            if (e.proposedAtMillis == 0 || localNowMillis - e.proposedAtMillis >= expireRetryMillis) {
                e.proposedAtMillis = localNowMillis;
                out.add(KvReq.expire(e.key, e.latest.createIndex));
            }
            return out.size() < max;
        });
        if (out.size() < max) {
            leases.forEachDue(due, lock -> {
                if (lock.proposedAtMillis == 0 || localNowMillis - lock.proposedAtMillis >= expireRetryMillis) {
                    lock.proposedAtMillis = localNowMillis;
                    out.add(KvReq.expireLock(lock.key, lock.fencingToken));
                }
                return out.size() < max;
            });
        }
        return out;
    }

    private static void clearProposed(DeadlineHeap<?> heap) {
        heap.forEachDue(Long.MAX_VALUE, item -> {
            item.proposedAtMillis = 0;
            return true;
        });
    }
}
