package io.poyang.dtkv.server;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The canonical text of a store's replicated state, for comparing replicas in tests. */
final class KvStateText {

    private KvStateText() {
    }

    static String of(KvStore store) {
        StringBuilder sb = new StringBuilder();
        sb.append("applied=").append(store.lastAppliedIndex()).append(" term=").append(store.lastAppliedTerm())
                .append(" clock=").append(store.logClockMillis()).append('\n');
        List<KvEntry> entries = new ArrayList<>();
        for (KvEntry e = store.tree.listHead(); e != null; e = e.listNext) {
            if (e.live()) {
                entries.add(e);
            }
        }
        entries.sort(Comparator.comparing(e -> e.key));
        for (KvEntry e : entries) {
            KvVersion v = e.latest;
            sb.append("node ").append(e.key).append(v.dir ? " dir" : " value=" + hex(v.value))
                    .append(" c=").append(v.createIndex).append(" u=").append(v.updateIndex)
                    .append(" parent=").append(e.parent.key).append(" children=").append(e.childCount());
            if (v.isTemp()) {
                sb.append(" owner=").append(v.ownerMost).append(':').append(v.ownerLeast).append(" ttl=")
                        .append(v.ttlMillis).append(" expireAt=").append(v.expireAtMillis)
                        .append(" tracked=").append(e.heapIndex >= 0);
            }
            sb.append('\n');
        }
        List<KvLock> locks = new ArrayList<>(store.locks.all());
        locks.sort(Comparator.comparing(l -> l.key));
        for (KvLock l : locks) {
            sb.append("lock ").append(l.key).append(" held=").append(l.held).append(" holder=").append(l.holderMost)
                    .append(':').append(l.holderLeast).append(" token=").append(l.fencingToken).append(" lease=")
                    .append(l.leaseMillis).append(" until=").append(l.leaseExpireAtMillis)
                    .append(" tracked=").append(l.heapIndex >= 0).append(" waiters=");
            for (KvLock.LockWaiter w : l.waiters) {
                sb.append('[').append(w.most).append(':').append(w.least).append(' ').append(w.leaseMillis)
                        .append(' ').append(w.waitUntilMillis).append(']');
            }
            sb.append('\n');
        }
        List<ClientSession> sessions = new ArrayList<>();
        long idleBefore = store.logClockMillis() - store.config().sessionIdleMillis;
        for (ClientSession s : store.sessions.all()) {
            if (s.lastActiveMillis >= idleBefore) {
                sessions.add(s);
            }
        }
        sessions.sort(Comparator.<ClientSession>comparingLong(s -> s.most).thenComparingLong(s -> s.least));
        for (ClientSession s : sessions) {
            sb.append("session ").append(s.most).append(':').append(s.least).append(" acked=").append(s.ackedBelow)
                    .append(" active=").append(s.lastActiveMillis).append(" results=");
            s.forEachResult((seq, resp) -> sb.append('[').append(seq).append(' ').append(resp).append(']'));
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
        }
        return sb.toString();
    }
}
