package io.poyang.raft.core;

import java.util.Arrays;

/**
 * A group's configuration: who votes, and who only replicates. Immutable; a membership change
 * replaces the object, so code holding one sees a consistent set.
 *
 * <ul>
 * <li>{@link #voters()}: the voting members. During a joint-consensus change these are the
 * <em>old</em> voters and {@link #newVoters()} the new ones; every decision (commit, election,
 * lease, ReadIndex) then needs a majority of <em>each</em> set.</li>
 * <li>{@link #observers()}: nodes that receive the log but never vote and never count toward a
 * majority (learners). A node is never both a voter and an observer of the same set.</li>
 * </ul>
 *
 * <p>Every node of the configuration (old and new voters and observers) has a <em>slot</em>, its
 * position in {@link #allNodes()}; per-node bookkeeping (match indexes, acknowledgement times,
 * votes) is kept in arrays indexed by slot, and {@link #quorumValue} reduces such an array to the
 * value a majority of every voting set has reached.
 */
public final class Members {

    private static final int[] NONE = new int[0];

    private final int[] voters;
    /** The new voters during a joint change; null otherwise. */
    private final int[] newVoters;
    private final int[] observers;
    /** During a joint change: the observers before it (an abort goes back to them); else empty. */
    private final int[] oldObservers;
    private final int[] all;
    /** Per slot: true when the node votes in {@link #voters}. */
    private final boolean[] votesOld;
    /** Per slot: true when the node votes in {@link #newVoters}. */
    private final boolean[] votesNew;

    public Members(int... voters) {
        this(voters, null, NONE, NONE);
    }

    /** A configuration that is not in the middle of a change. */
    public Members(int[] voters, int[] observers) {
        this(voters, null, observers, NONE);
    }

    /**
     * @param voters    the voting members (the old ones during a joint change)
     * @param newVoters the new voting members while a change is prepared, else null
     * @param observers nodes that replicate without voting (none: an empty array); during a joint
     *                  change, the observers of the new configuration
     * @param oldObservers during a joint change, the observers before it; else empty
     */
    public Members(int[] voters, int[] newVoters, int[] observers, int[] oldObservers) {
        this.voters = checked(voters, "voters", false);
        this.newVoters = newVoters == null ? null : checked(newVoters, "new voters", false);
        this.observers = checked(observers == null ? NONE : observers, "observers", true);
        this.oldObservers = newVoters == null || oldObservers == null ? NONE
                : checked(oldObservers, "old observers", true);
        // A node is a voter or an observer of one configuration, not both. During a joint change the
        // observers belong to the new configuration and the old observers to the old one, so a voter
        // may become an observer (demotion) and an observer a voter (promotion) in one change.
        int[] sameSideVoters = this.newVoters != null ? this.newVoters : this.voters;
        for (int o : this.observers) {
            if (contains(sameSideVoters, o)) {
                throw new IllegalArgumentException("node " + o + " is both a voter and an observer: voters "
                        + Arrays.toString(sameSideVoters) + ", observers " + Arrays.toString(this.observers));
            }
        }
        for (int o : this.oldObservers) {
            if (contains(this.voters, o)) {
                throw new IllegalArgumentException("node " + o + " is both an old voter and an old observer: voters "
                        + Arrays.toString(this.voters) + ", old observers " + Arrays.toString(this.oldObservers));
            }
        }
        int[] u = union(union(union(this.voters, this.newVoters == null ? NONE : this.newVoters), this.observers),
                this.oldObservers);
        this.all = u;
        this.votesOld = new boolean[u.length];
        this.votesNew = new boolean[u.length];
        for (int i = 0; i < u.length; i++) {
            votesOld[i] = contains(this.voters, u[i]);
            votesNew[i] = this.newVoters != null && contains(this.newVoters, u[i]);
        }
    }

    private static int[] checked(int[] ids, String what, boolean mayBeEmpty) {
        if (ids.length == 0 && !mayBeEmpty) {
            throw new IllegalArgumentException("a raft group needs at least one voting member (" + what + ")");
        }
        int[] v = ids.clone();
        Arrays.sort(v);
        for (int i = 0; i < v.length; i++) {
            if (v[i] <= 0) {
                throw new IllegalArgumentException("node ids are positive: " + what + " " + Arrays.toString(ids));
            }
            if (i > 0 && v[i] == v[i - 1]) {
                throw new IllegalArgumentException("node " + v[i] + " is listed twice in " + what + ": "
                        + Arrays.toString(ids));
            }
        }
        return v;
    }

    private static boolean contains(int[] sorted, int id) {
        return Arrays.binarySearch(sorted, id) >= 0;
    }

    private static int[] union(int[] a, int[] b) {
        int[] u = Arrays.copyOf(a, a.length + b.length);
        int n = a.length;
        for (int x : b) {
            if (!contains(a, x)) {
                u[n++] = x;
            }
        }
        u = Arrays.copyOf(u, n);
        Arrays.sort(u);
        return u;
    }

    // ---------------------------------------------------------------- changes

    /** The joint configuration on the way to {@code target} (its voters and observers). */
    Members jointWith(Members target) {
        if (isJoint() || target.isJoint()) {
            throw new IllegalStateException("a membership change is already prepared: " + this);
        }
        return new Members(voters, target.voters, target.observers, observers);
    }

    /** The configuration a joint one leads to: the new voters and observers. */
    Members committed() {
        return isJoint() ? new Members(newVoters, null, observers, NONE) : this;
    }

    /** The configuration before a joint one: the old voters and observers. */
    Members aborted() {
        return isJoint() ? new Members(voters, null, oldObservers, NONE) : this;
    }

    /** The observers before a joint change (empty when not joint). */
    public int[] oldObservers() {
        return oldObservers.clone();
    }

    // ---------------------------------------------------------------- queries

    /** The voting members (the old ones during a joint change), sorted. */
    public int[] voters() {
        return voters.clone();
    }

    /** The new voting members while a change is prepared, else null. */
    public int[] newVoters() {
        return newVoters == null ? null : newVoters.clone();
    }

    /** The observers (learners), sorted. */
    public int[] observers() {
        return observers.clone();
    }

    /** Every node of the configuration, sorted: slot i is {@code allNodes()[i]}. */
    public int[] allNodes() {
        return all.clone();
    }

    public boolean isJoint() {
        return newVoters != null;
    }

    public int voterCount() {
        return voters.length;
    }

    /** Nodes with a slot (voters, new voters and observers). */
    int slotCount() {
        return all.length;
    }

    int nodeAt(int slot) {
        return all[slot];
    }

    /** The slot of {@code nodeId}, or -1 when it is not in the configuration. */
    int slotOf(int nodeId) {
        int i = Arrays.binarySearch(all, nodeId);
        return i < 0 ? -1 : i;
    }

    /** A voter in either set of a joint change. */
    public boolean isVoter(int nodeId) {
        return contains(voters, nodeId) || (newVoters != null && contains(newVoters, nodeId));
    }

    boolean isVoterSlot(int slot) {
        return votesOld[slot] || votesNew[slot];
    }

    /** An observer (of the new configuration during a joint change, or an old one that is kept until it commits). */
    public boolean isObserver(int nodeId) {
        return contains(nodeId) && !isVoter(nodeId);
    }

    /** In the configuration at all (voter or observer). */
    public boolean contains(int nodeId) {
        return slotOf(nodeId) >= 0;
    }

    /** The only voter, when the group has exactly one (not joint); else 0. */
    int soleVoter() {
        return newVoters == null && voters.length == 1 ? voters[0] : 0;
    }

    /** Votes (or persisted copies) needed of the (old) voters: a majority. */
    public int quorum() {
        return voters.length / 2 + 1;
    }

    /**
     * The largest value that a majority of every voting set has reached: for each set, the
     * quorum-th highest of its members' values, and the smaller of the two during a joint change.
     * {@code bySlot} holds one value per slot (observers' are ignored); {@code scratch} is a work
     * array of at least {@link #slotCount()} longs.
     */
    long quorumValue(long[] bySlot, long[] scratch) {
        long v = quorumOf(bySlot, scratch, votesOld, voters.length);
        if (newVoters != null) {
            v = Math.min(v, quorumOf(bySlot, scratch, votesNew, newVoters.length));
        }
        return v;
    }

    private static long quorumOf(long[] bySlot, long[] scratch, boolean[] member, int count) {
        int n = 0;
        for (int i = 0; i < member.length; i++) {
            if (member[i]) {
                scratch[n++] = bySlot[i];
            }
        }
        // insertion sort, descending: groups have a handful of voters
        for (int i = 1; i < n; i++) {
            long x = scratch[i];
            int j = i - 1;
            while (j >= 0 && scratch[j] < x) {
                scratch[j + 1] = scratch[j];
                j--;
            }
            scratch[j + 1] = x;
        }
        return scratch[count / 2];
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Members)) {
            return false;
        }
        Members m = (Members) o;
        return Arrays.equals(voters, m.voters) && Arrays.equals(newVoters, m.newVoters)
                && Arrays.equals(observers, m.observers) && Arrays.equals(oldObservers, m.oldObservers);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(voters) * 31 + Arrays.hashCode(newVoters) * 17 + Arrays.hashCode(observers);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(Arrays.toString(voters));
        if (newVoters != null) {
            b.append(" -> ").append(Arrays.toString(newVoters));
        }
        if (observers.length > 0) {
            b.append(" observers ").append(Arrays.toString(observers));
        }
        if (oldObservers.length > 0) {
            b.append(" (before: observers ").append(Arrays.toString(oldObservers)).append(')');
        }
        return b.toString();
    }
}
