package io.poyang.dtkv.server;

import io.poyang.dtkv.KvNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A snapshot of the state at one raft index, read chunk by chunk while applies go on (on the same
 * thread, between calls). The tree keeps the versions this snapshot sees until it is closed;
 * locks and sessions are copied when it opens, a session with many recorded answers in parts of
 * about a chunk each. Close it (also when abandoned), or older versions pile up.
 */
public final class KvSnapshot implements AutoCloseable {

    private final KvStore store;
    private final long index;
    private final long logClockMillis;
    private final int chunkBytes;
    private final List<KvLockRecord> locks;
    private final List<KvSessionRecord> sessions;
    private int nextLock;
    private int nextSession;
    private KvEntry cursor;
    private boolean done;
    private boolean closed;
    private long nodeCount;

    KvSnapshot(KvStore store, long index, long logClockMillis) {
        this.store = store;
        this.index = index;
        this.logClockMillis = logClockMillis;
        this.chunkBytes = store.config().snapshotChunkBytes;
        this.locks = new ArrayList<>(store.locks.size());
        for (KvLock lock : store.locks.all()) {
            locks.add(KvLockRecord.of(lock));
        }
        this.sessions = new ArrayList<>(store.sessions.size());
        for (ClientSession s : store.sessions.all()) {
            sessions.addAll(KvSessionRecord.of(s).split(chunkBytes));
        }
        // last, so nothing above can fail and leave versions kept for a snapshot nobody will close
        store.tree.openSnapshot(index);
        this.cursor = store.tree.listHead();
    }

    /** The raft index this snapshot shows the state at. */
    public long index() {
        return index;
    }

    public long logClockMillis() {
        return logClockMillis;
    }

    /** Nodes handed out so far. */
    public long nodeCount() {
        return nodeCount;
    }

    public boolean isDone() {
        return done;
    }

    /**
     * The next chunk, of about the configured size: the locks and sessions copied at open come
     * first, then the nodes (parents before children). The one with {@link KvSnapshotChunk#isLast()}
     * ends the snapshot; calling again after it is an error.
     */
    public KvSnapshotChunk nextChunk() {
        if (closed || done) {
            throw new IllegalStateException("snapshot at " + index + (closed ? " is closed" : " has no more chunks"));
        }
        int bytes = 0;
        List<KvLockRecord> chunkLocks = new ArrayList<>();
        while (nextLock < locks.size() && bytes < chunkBytes) {
            KvLockRecord l = locks.get(nextLock++);
            chunkLocks.add(l);
            bytes += l.encodedSize() + 8;
        }
        List<KvSessionRecord> chunkSessions = new ArrayList<>();
        // a session record (or part) may be as large as a chunk: one goes in only if it fits
        while (nextSession < sessions.size()
                && (bytes == 0 || bytes + sessions.get(nextSession).encodedSize() + 8 <= chunkBytes)) {
            KvSessionRecord r = sessions.get(nextSession++);
            chunkSessions.add(r);
            bytes += r.encodedSize() + 8;
        }
        List<KvNode> nodes = new ArrayList<>();
        while (cursor != null && bytes < chunkBytes) {
            KvEntry e = cursor;
            cursor = e.listNext;
            KvVersion v = e.latest == null ? null : e.latest.visibleAt(index);
            if (v != null && !v.removed) {
                KvNode n = v.toNode(e.key);
                nodes.add(n);
                bytes += n.encodedSize() + 8;
            }
        }
        done = cursor == null && nextLock == locks.size() && nextSession == sessions.size();
        nodeCount += nodes.size();
        return new KvSnapshotChunk(index, logClockMillis, nodes, chunkLocks, chunkSessions, done);
    }

    /** Releases the versions kept for this snapshot. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            store.tree.closeSnapshot(index);
        }
    }
}
