package io.poyang.raft.core;

import java.util.concurrent.TimeUnit;

/**
 * Which other voter should lead a group after this leader, for a leader that gives up its
 * leadership without a target named (a node about to stop): one hand-over to the right node, not
 * one to any node followed by the preferred-leader keeper's second hand-over an election timeout
 * later.
 * <ol>
 * <li>A transfer under way (an operator's, or the {@link PreferredLeaderKeeper}'s): its target —
 * starting another would only be refused, and that one already goes where it should.</li>
 * <li>The preferred leader, when it is not this node, is a voter, has answered within the last
 * election timeout (a dead node cannot take over), and is caught up as the keeper requires it — its
 * persisted index within {@link RaftConfig#maxAppendItems()} entries of this leader's last index —
 * or as far as the best other voter.</li>
 * <li>Otherwise the voter whose log is furthest along (the first of the configuration's order on a
 * tie).</li>
 * </ol>
 * Dispatcher thread.
 */
final class SuccessorChoice {

    private SuccessorChoice() {
    }

    /** The node {@code g}'s leadership should go to; 0 when there is no other voter. */
    static int of(RaftGroup g) {
        int underWay = g.transfer.target();
        if (underWay != 0) {
            return underWay;
        }
        RaftState s = g.state;
        Members m = s.members;
        int best = 0;
        long bestMatch = -1;
        for (int i = 0; i < m.slotCount(); i++) {
            int id = m.nodeAt(i);
            if (id != s.selfId && m.isVoter(id)) {
                long match = g.commitManager.matchIndexOf(id);
                if (match > bestMatch) {
                    best = id;
                    bestMatch = match;
                }
            }
        }
        int preferred = g.preferredLeader.preferredId();
        if (preferred == 0 || preferred == s.selfId || preferred == best || !m.isVoter(preferred)) {
            return best;
        }
        long match = g.commitManager.matchIndexOf(preferred);
        boolean caughtUp = match > 0
                && (match >= bestMatch || g.store.lastIndex() - match <= g.config.maxAppendItems());
        long electionTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(g.config.electionTimeoutMillis());
        boolean answered = g.commitManager.answeredWithin(preferred, g.nowNanos(), electionTimeoutNanos);
        return caughtUp && answered ? preferred : best;
    }
}
