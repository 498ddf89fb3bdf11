package io.poyang.raft.client;

import io.poyang.net.DecoderFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Where one raft group stands on one node, in detail (message GroupStatus of raft.proto, the
 * answer to ADMIN_GROUP_STATUS): role, term, leader, the log's first and last index, what is
 * persisted, committed and applied, the configuration (voters; during a joint change also the new
 * voters; observers), the node's preferred leader for the group and, on the leader, every other
 * member's match index and lag. A snapshot of one moment, taken on the group's dispatcher thread.
 * Immutable.
 *
 * <p>Fields added later (the preferred leader, 19) are varints an older reader skips and an older
 * node leaves out, which reads as 0: "none".
 */
public final class GroupStatus {

    static final FieldMessage.Schema SCHEMA = new FieldMessage.Schema("GroupStatus",
            new int[]{9, 13, 14, 15, 16}, new int[]{18});

    /** The progress of one other member, as the leader sees it. */
    public static final class Follower {
        private final int nodeId;
        private final long matchIndex;
        private final long lag;
        private final boolean observer;

        public Follower(int nodeId, long matchIndex, long lag, boolean observer) {
            this.nodeId = nodeId;
            this.matchIndex = matchIndex;
            this.lag = lag;
            this.observer = observer;
        }

        public int nodeId() {
            return nodeId;
        }

        /** The highest index the member has persisted that matches the leader's log (0: not known yet). */
        public long matchIndex() {
            return matchIndex;
        }

        /** Entries the member is behind the leader's last index. */
        public long lag() {
            return lag;
        }

        /** An observer (it replicates without voting). */
        public boolean isObserver() {
            return observer;
        }

        @Override
        public String toString() {
            return "node " + nodeId + (observer ? " (observer)" : "") + ": match " + matchIndex + ", lag " + lag;
        }
    }

    private final int groupId;
    private final int nodeId;
    private final RaftRole role;
    private final int term;
    private final int leaderId;
    private final long firstLogIndex;
    private final long lastLogIndex;
    private final long persistedIndex;
    private final long commitIndex;
    private final long lastApplied;
    private final int[] voters;
    private final boolean joint;
    private final int[] newVoters;
    private final int[] observers;
    private final List<Follower> followers;
    private final int transferTarget;
    private final String failure;
    private final int preferredLeader;

    /**
     * The constructor of versions before the preferred leader: a status with none (0).
     *
     * @deprecated kept for code written against those versions; use the constructor with {@code preferredLeader}
     */
    @Deprecated
    public GroupStatus(int groupId, int nodeId, RaftRole role, int term, int leaderId, long firstLogIndex,
                       long lastLogIndex, long persistedIndex, long commitIndex, long lastApplied, int[] voters,
                       boolean joint, int[] newVoters, int[] observers, List<Follower> followers, int transferTarget,
                       String failure) {
        this(groupId, nodeId, role, term, leaderId, firstLogIndex, lastLogIndex, persistedIndex, commitIndex,
                lastApplied, voters, joint, newVoters, observers, followers, transferTarget, failure, 0);
    }

    /**
     * @param newVoters      the voters a prepared (joint) change leads to; empty when none is prepared
     * @param followers      the other members' progress (the leader only; empty elsewhere)
     * @param transferTarget the node a leader transfer under way hands over to; 0 when none
     * @param failure        why the group stopped taking part on this node (it needs a restart); "" when it did not
     * @param preferredLeader the node this node's setting keeps the group's leadership on; 0 when none
     */
    public GroupStatus(int groupId, int nodeId, RaftRole role, int term, int leaderId, long firstLogIndex,
                       long lastLogIndex, long persistedIndex, long commitIndex, long lastApplied, int[] voters,
                       boolean joint, int[] newVoters, int[] observers, List<Follower> followers, int transferTarget,
                       String failure, int preferredLeader) {
        this.groupId = groupId;
        this.nodeId = nodeId;
        this.role = role;
        this.term = term;
        this.leaderId = leaderId;
        this.firstLogIndex = firstLogIndex;
        this.lastLogIndex = lastLogIndex;
        this.persistedIndex = persistedIndex;
        this.commitIndex = commitIndex;
        this.lastApplied = lastApplied;
        this.voters = voters.clone();
        this.joint = joint;
        this.newVoters = joint ? newVoters.clone() : new int[0];
        this.observers = observers.clone();
        this.followers = Collections.unmodifiableList(new ArrayList<>(followers));
        this.transferTarget = transferTarget;
        this.failure = failure == null ? "" : failure;
        this.preferredLeader = preferredLeader;
    }

    public int groupId() {
        return groupId;
    }

    /** The node that answered. */
    public int nodeId() {
        return nodeId;
    }

    public RaftRole role() {
        return role;
    }

    public int term() {
        return term;
    }

    /** The leader the node knows of; 0 when none. */
    public int leaderId() {
        return leaderId;
    }

    /** The first index still in the node's log (entries below it are in a snapshot). */
    public long firstLogIndex() {
        return firstLogIndex;
    }

    public long lastLogIndex() {
        return lastLogIndex;
    }

    /** The highest index durable in the node's log (fsynced, unless the node runs with syncForce=false). */
    public long persistedIndex() {
        return persistedIndex;
    }

    public long commitIndex() {
        return commitIndex;
    }

    public long lastApplied() {
        return lastApplied;
    }

    /** The voters; during a joint change, the voters before it. */
    public int[] voters() {
        return voters.clone();
    }

    /** A membership change is prepared (joint consensus): decisions need a majority of {@link #voters} and of {@link #newVoters}. */
    public boolean isJoint() {
        return joint;
    }

    /** The voters of the prepared change; empty when none is prepared. */
    public int[] newVoters() {
        return newVoters.clone();
    }

    public int[] observers() {
        return observers.clone();
    }

    /** The other members' progress; filled only by the leader. */
    public List<Follower> followers() {
        return followers;
    }

    /** The node a leader transfer under way hands over to; 0 when none. */
    public int transferTarget() {
        return transferTarget;
    }

    /** Why the group stopped taking part on this node (it needs a restart); "" when it did not. */
    public String failure() {
        return failure;
    }

    /**
     * The node the group's leadership is kept on, as this node is set (the setting is each node's
     * own, not replicated: the nodes of a group may differ until each is told); 0 when none, and
     * from a node too old to say.
     */
    public int preferredLeader() {
        return preferredLeader;
    }

    /** Encodes this status as raft.proto's GroupStatus. */
    public FieldMessage toMessage() {
        int n = followers.size();
        long[] ids = new long[n];
        long[] match = new long[n];
        long[] observerIds = new long[n];
        int o = 0;
        for (int i = 0; i < n; i++) {
            Follower f = followers.get(i);
            ids[i] = f.nodeId;
            match[i] = f.matchIndex;
            if (f.observer) {
                observerIds[o++] = f.nodeId;
            }
        }
        return SCHEMA.builder().set(1, groupId).set(2, nodeId).set(3, term).set(4, leaderId).set(5, role.code())
                .set(6, commitIndex).set(7, lastApplied).set(8, lastLogIndex).set(9, voters).set(10, persistedIndex)
                .set(11, firstLogIndex).set(12, joint).set(13, newVoters).set(14, observers).set(15, ids)
                .set(16, match).set(17, transferTarget).set(18, failure).set(19, preferredLeader).build();
    }

    /** Decodes raft.proto's GroupStatus. */
    public static final DecoderFactory<GroupStatus> DECODER = SCHEMA.mapped(GroupStatus::of);

    static GroupStatus of(FieldMessage m) {
        long last = m.getLong(8);
        int[] ids = m.getInts(15);
        long[] match = m.getLongs(16);
        int[] observers = m.getInts(14);
        List<Follower> followers = new ArrayList<>(ids.length);
        for (int i = 0; i < ids.length; i++) {
            long mi = i < match.length ? match[i] : 0;
            boolean obs = false;
            for (int x : observers) {
                obs |= x == ids[i];
            }
            followers.add(new Follower(ids[i], mi, Math.max(0, last - mi), obs));
        }
        return new GroupStatus(m.getInt(1), m.getInt(2), RaftRole.of(m.getInt(5)), m.getInt(3), m.getInt(4),
                m.getLong(11), last, m.getLong(10), m.getLong(6), m.getLong(7), m.getInts(9), m.getBool(12),
                m.getInts(13), observers, followers, m.getInt(17), m.getString(18), m.getInt(19));
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("group ").append(groupId).append(" on node ").append(nodeId).append(": ")
                .append(role).append(" of term ").append(term).append(", leader ").append(leaderId)
                .append(", log ").append(firstLogIndex).append("..").append(lastLogIndex).append(", persisted ")
                .append(persistedIndex).append(", commit ").append(commitIndex).append(", applied ").append(lastApplied)
                .append(", voters ").append(Arrays.toString(voters));
        if (joint) {
            b.append(" -> ").append(Arrays.toString(newVoters));
        }
        b.append(", observers ").append(Arrays.toString(observers));
        if (!followers.isEmpty()) {
            b.append(", followers ").append(followers);
        }
        if (transferTarget != 0) {
            b.append(", handing over to ").append(transferTarget);
        }
        if (preferredLeader != 0) {
            b.append(", preferred leader ").append(preferredLeader);
        }
        if (!failure.isEmpty()) {
            b.append(", FAILED: ").append(failure);
        }
        return b.toString();
    }
}
