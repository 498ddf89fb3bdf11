package io.poyang.dtkv.server;

import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * The exactly-once sessions of all clients, keyed by the client's 128-bit id. Insertion-ordered so
 * snapshots and sweeps visit them in the same order on every replica.
 *
 * <p>This is the one exactly-once mechanism of DtKV writes: DtKV writes reach raft without a raft
 * session, so raft's generic session table never sees them (dtkv/README.md, "Sessions", says why
 * DtKV keeps its own: acknowledged-answer trimming, a 65,536-write window for pipelining clients,
 * O(1) lookups, typed codes, chunked snapshots).
 */
final class ClientSessions {

    private final LinkedHashMap<SessionKey, ClientSession> sessions = new LinkedHashMap<>();
    /** Reused for lookups so finding a session allocates nothing. */
    private final SessionKey probe = new SessionKey(0, 0);

    ClientSession get(long most, long least) {
        probe.most = most;
        probe.least = least;
        return sessions.get(probe);
    }

    ClientSession create(long most, long least, long ackedBelow) {
        ClientSession s = new ClientSession(most, least, ackedBelow, 16);
        sessions.put(new SessionKey(most, least), s);
        return s;
    }

    void remove(ClientSession s) {
        probe.most = s.most;
        probe.least = s.least;
        sessions.remove(probe);
    }

    /** Forgets sessions idle since before {@code idleBeforeMillis}. */
    void sweep(long idleBeforeMillis) {
        for (Iterator<ClientSession> it = sessions.values().iterator(); it.hasNext(); ) {
            if (it.next().lastActiveMillis < idleBeforeMillis) {
                it.remove();
            }
        }
    }

    /**
     * Moves every session's last activity later by {@code gapMillis}: at a new term, with the TTL
     * deadlines, so the gap of a leader change (the old leader's silence, the election, the skew of
     * the two clocks, a whole-cluster outage) does not count as idle time. Otherwise a new leader
     * whose clock runs an hour ahead would forget every session, and a retry of a write already
     * applied would be applied again under a new one.
     */
    void shiftIdleClocks(long gapMillis) {
        for (ClientSession s : sessions.values()) {
            s.lastActiveMillis += gapMillis;
        }
    }

    Collection<ClientSession> all() {
        return sessions.values();
    }

    int size() {
        return sessions.size();
    }

    void clear() {
        sessions.clear();
    }

    private static final class SessionKey {
        long most;
        long least;

        SessionKey(long most, long least) {
            this.most = most;
            this.least = least;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SessionKey && ((SessionKey) o).most == most && ((SessionKey) o).least == least;
        }

        @Override
        public int hashCode() {
            long h = most * 0x9E3779B97F4A7C15L ^ least;
            return (int) (h ^ (h >>> 32));
        }
    }
}
