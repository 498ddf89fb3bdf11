package io.poyang.raft.client;

import io.poyang.net.DecoderFactory;

import java.util.Arrays;

/**
 * A raft group's configuration as the admin commands report it (message MembersConfig of
 * raft.proto): the voters, the observers, and during a prepared change (joint consensus) the
 * voters it leads to. Immutable; arrays are sorted copies.
 */
public final class GroupMembers {

    public static final DecoderFactory<GroupMembers> DECODER = AdminMessages.MEMBERS_CONFIG.mapped(GroupMembers::of);

    private final int[] voters;
    private final boolean joint;
    private final int[] newVoters;
    private final int[] observers;

    public GroupMembers(int[] voters, boolean joint, int[] newVoters, int[] observers) {
        this.voters = sorted(voters);
        this.joint = joint;
        this.newVoters = joint ? sorted(newVoters) : new int[0];
        this.observers = sorted(observers);
    }

    private static int[] sorted(int[] a) {
        int[] c = a == null ? new int[0] : a.clone();
        Arrays.sort(c);
        return c;
    }

    static GroupMembers of(FieldMessage m) {
        boolean joint = m.getBool(5);
        return new GroupMembers(m.getInts(1), joint, m.getInts(2), m.getInts(3));
    }

    /** The voters; during a prepared change, the voters before it. */
    public int[] voters() {
        return voters.clone();
    }

    /** A change is prepared: decisions need a majority of {@link #voters()} and of {@link #newVoters()}. */
    public boolean isJoint() {
        return joint;
    }

    /** The voters the prepared change leads to; empty when none is prepared. */
    public int[] newVoters() {
        return newVoters.clone();
    }

    /** During a prepared change, the observers it leads to; otherwise the observers. */
    public int[] observers() {
        return observers.clone();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GroupMembers)) {
            return false;
        }
        GroupMembers m = (GroupMembers) o;
        return joint == m.joint && Arrays.equals(voters, m.voters) && Arrays.equals(newVoters, m.newVoters)
                && Arrays.equals(observers, m.observers);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(voters) * 31 + Arrays.hashCode(newVoters) * 7 + Arrays.hashCode(observers);
    }

    @Override
    public String toString() {
        return "voters " + Arrays.toString(voters) + (joint ? " -> " + Arrays.toString(newVoters) : "")
                + (observers.length > 0 ? ", observers " + Arrays.toString(observers) : "");
    }
}
