package io.poyang.dtkv.server;

import io.poyang.dtkv.KvNode;

/**
 * Replaces a store's whole state with a snapshot's: feed every chunk in order with
 * {@link #accept}, then {@link #finish}. The old state is dropped at the first chunk. A snapshot
 * that breaks the tree's rules (a node before its parent, a key twice, chunks of different
 * snapshots) fails with IllegalStateException; the store is then unusable until a complete restore.
 */
public final class KvSnapshotRestorer {

    private final KvStore store;
    private long snapshotIndex = -1;
    private boolean finished;
    private boolean sawLast;

    KvSnapshotRestorer(KvStore store) {
        this.store = store;
    }

    public void accept(KvSnapshotChunk chunk) {
        if (finished || sawLast) {
            throw new IllegalStateException("the snapshot already ended; start a new restore");
        }
        if (snapshotIndex < 0) {
            store.clearForRestore();
            snapshotIndex = chunk.snapshotIndex();
            store.restoreHeader(chunk.snapshotIndex(), chunk.logClockMillis());
        } else if (chunk.snapshotIndex() != snapshotIndex) {
            throw new IllegalStateException("chunk of snapshot " + chunk.snapshotIndex() + " inside snapshot "
                    + snapshotIndex);
        }
        for (KvNode n : chunk.nodes()) {
            store.restoreNode(n);
        }
        for (KvLockRecord l : chunk.locks()) {
            store.locks.restore(l.toLock());
        }
        for (KvSessionRecord r : chunk.sessions()) {
            // a session with many answers comes in several parts (KvSessionRecord.split)
            ClientSession s = store.sessions.get(r.most, r.least);
            if (s == null) {
                s = store.sessions.create(r.most, r.least, r.ackedBelow);
            }
            s.lastActiveMillis = r.lastActiveMillis;
            for (KvSessionRecord.Result res : r.results) {
                if (s.fits(res.seq, Integer.MAX_VALUE)) {
                    s.record(res.seq, res.resp);
                }
            }
        }
        sawLast = chunk.isLast();
    }

    /**
     * Ends the restore; the store continues from the snapshot's index. {@code lastTerm} is the raft
     * term of the snapshot's last entry (raft's snapshot metadata): the store needs it to tell the
     * first entry of a newer term, whose gap it takes out of every deadline. 0 when not known: the
     * next entry then starts the count without moving deadlines.
     */
    public void finish(int lastTerm) {
        if (!sawLast) {
            throw new IllegalStateException("the snapshot ended before its last chunk; the restore is incomplete");
        }
        finished = true;
        store.finishRestore();
        store.restoreTerm(lastTerm);
    }
}
