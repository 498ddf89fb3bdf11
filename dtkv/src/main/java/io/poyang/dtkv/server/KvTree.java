package io.poyang.dtkv.server;

import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

/**
 * The tree's storage: a hash index from full key to {@link KvEntry}, each directory's live children
 * in a map sorted by key, all entries on one list in creation order, and multi-versioning while snapshots are
 * open. It knows nothing about operations' rules (that is {@link KvStore}); it installs versions.
 *
 * <h3>Versions and snapshots</h3>
 * With no snapshot open, installing a version drops the previous one and a removal unlinks the
 * entry at once: a put over an existing key costs one hash lookup and overwrites the current version
 * in place ({@link #putValue}). While snapshots are open, a
 * version some open snapshot can see (its modIndex is at or below the newest open snapshot's index)
 * is kept behind the new one ({@link KvVersion#prev}), the removal of an entry some open snapshot
 * can see leaves a tombstone version and the entry stays on the index and the list, and the entry
 * is remembered; when the last snapshot closes, those entries are trimmed back to their newest
 * version and tombstoned ones are unlinked. An entry no open snapshot can see (made after they all
 * opened) is unlinked at its removal, as with none open: what is kept is bounded by the keys that
 * existed when the snapshots opened and were changed since, not by the writes during them.
 *
 * <p>A snapshot walks the creation-ordered list from the head; entries it can see are never
 * unlinked while it is open, so its walk does not lose its place among them, and entries appended
 * after it opened are skipped because nothing in them is visible at its index (one of those is
 * unlinked when removed; a walk standing on it ends there, since only such entries follow it). A live entry is always after its parent on the
 * list (a parent exists before its children, and an entry only leaves the list when no snapshot is
 * open, when its children are gone too), so a snapshot lists parents before children.
 *
 * <p>Single-threaded: the apply thread owns it.
 */
final class KvTree {

    private final HashMap<String, KvEntry> index = new HashMap<>(1024);
    final KvEntry root;
    private KvEntry listHead;
    private KvEntry listTail;
    private int liveCount;

    /** Indexes of open snapshots, in the order they were opened (so ascending). */
    private final ArrayList<Long> openSnapshots = new ArrayList<>(2);
    private long newestOpenSnapshotIndex = -1;
    private final ArrayList<KvEntry> garbage = new ArrayList<>();
    /** Versions kept for snapshots right now (a gauge for tests and metrics). */
    private long keptVersions;

    KvTree() {
        root = new KvEntry(KvKeys.ROOT, null);
        root.latest = new KvVersion(null, true, false, 0, 0, 0, 0, 0, 0, 0);
    }

    /** The entry for the key (live or, while snapshots are open, a tombstone), or null. */
    KvEntry lookup(String key) {
        return key.isEmpty() ? root : index.get(key);
    }

    /** The live entry for the key, or null. */
    KvEntry live(String key) {
        KvEntry e = lookup(key);
        return e != null && e.live() ? e : null;
    }

    int liveCount() {
        return liveCount;
    }

    /** Entries on the index (live ones and tombstones kept for snapshots). */
    int entryCount() {
        return index.size();
    }

    long keptVersions() {
        return keptVersions;
    }

    int openSnapshotCount() {
        return openSnapshots.size();
    }

    /**
     * Creates the key under {@code parent} (a live directory) with version {@code v}, reusing a
     * tombstoned entry of the same key if a snapshot kept one.
     */
    KvEntry create(String key, KvEntry parent, KvVersion v) {
        KvEntry e = index.get(key);
        if (e == null) {
            e = new KvEntry(key, parent);
            index.put(key, e);
            appendToList(e);
        } else {
            e.parent = parent;
        }
        install(e, v);
        linkChild(parent, e);
        liveCount++;
        return e;
    }

    /** Installs a new version of a live entry. */
    void update(KvEntry e, KvVersion v) {
        install(e, v);
    }

    /**
     * A put over a live value entry at {@code index} (its create index stays). With no snapshot
     * open the current version is overwritten in place: no version object per put. With one open,
     * a new version is installed in front of the current one, which the snapshot may still read.
     */
    void putValue(KvEntry e, byte[] value, long index, long ownerMost, long ownerLeast, long ttlMillis,
                  long expireAtMillis) {
        KvVersion current = e.latest;
        if (openSnapshots.isEmpty()) {
            current.overwriteValue(value, index, ownerMost, ownerLeast, ttlMillis, expireAtMillis);
        } else {
            install(e, new KvVersion(value, false, false, current.createIndex, index, index, ownerMost, ownerLeast,
                    ttlMillis, expireAtMillis));
        }
    }

    /**
     * Removes a live entry (the caller checked it has no children). It leaves the index and the list
     * at once unless an open snapshot can read one of its versions: then a tombstone keeps it until
     * the last snapshot closes. A key made and removed while snapshots are open is therefore not
     * kept, however many such keys a long snapshot sees come and go.
     */
    void remove(KvEntry e, long modIndex) {
        unlinkChild(e.parent, e);
        liveCount--;
        if (openSnapshots.isEmpty() || !anOpenSnapshotSees(e)) {
            e.latest = null;
            dropEntry(e);
        } else {
            install(e, KvVersion.tombstone(modIndex));
        }
    }

    /**
     * Whether some open snapshot can read a version of the live entry {@code e}: a snapshot at S
     * reads the newest version with modIndex at or below S, and every open snapshot is at or below
     * the newest one. A version kept behind the latest ({@link KvVersion#prev}) was kept because one
     * could. When neither holds, the entry was made after every open snapshot opened (one that was on
     * the list when a snapshot opened had a version at or below its index, kept since), so every
     * entry after it on the creation-ordered list was too: unlinking it cannot make a snapshot's walk
     * miss anything it would have listed, even when the walk's cursor is on it (the walk then ends).
     */
    private boolean anOpenSnapshotSees(KvEntry e) {
        KvVersion v = e.latest;
        return v.prev != null || v.modIndex <= newestOpenSnapshotIndex;
    }

    private void install(KvEntry e, KvVersion v) {
        KvVersion old = e.latest;
        if (old != null && !openSnapshots.isEmpty()) {
            if (old.modIndex <= newestOpenSnapshotIndex) {
                v.prev = old; // some open snapshot may read it
                keptVersions++;
            } else {
                v.prev = old.prev; // no snapshot sees old, but older ones may still be needed
            }
            // A tombstone must be dropped when snapshots close even if nothing older is kept.
            if ((v.prev != null || v.removed) && !e.inGarbage) {
                e.inGarbage = true;
                garbage.add(e);
            }
        }
        e.latest = v;
    }

    private void dropEntry(KvEntry e) {
        index.remove(e.key);
        unlinkFromList(e);
    }

    // ---- snapshots ----

    /** Registers a snapshot at {@code snapshotIndex} (the index applied last); versions it sees are kept until it closes. */
    void openSnapshot(long snapshotIndex) {
        if (snapshotIndex < newestOpenSnapshotIndex) {
            throw new IllegalStateException("snapshot at " + snapshotIndex + " opened after one at "
                    + newestOpenSnapshotIndex + "; snapshots are opened at the applied index, which only grows");
        }
        openSnapshots.add(snapshotIndex);
        newestOpenSnapshotIndex = snapshotIndex;
    }

    /** Closes a snapshot; when none is left open, drops every version kept for snapshots. */
    void closeSnapshot(long snapshotIndex) {
        if (!openSnapshots.remove(Long.valueOf(snapshotIndex))) {
            throw new IllegalStateException("no snapshot at " + snapshotIndex + " is open");
        }
        if (!openSnapshots.isEmpty()) {
            // Trimming below a still-open snapshot would need per-version bookkeeping; versions
            // wait until the last one closes (snapshots are rare and short).
            return;
        }
        newestOpenSnapshotIndex = -1;
        for (int i = 0, n = garbage.size(); i < n; i++) {
            KvEntry e = garbage.get(i);
            e.inGarbage = false;
            if (e.latest != null) {
                e.latest.prev = null;
                if (e.latest.removed) {
                    e.latest = null;
                    dropEntry(e);
                }
            }
        }
        garbage.clear();
        keptVersions = 0;
    }

    /** Drops every node (for a restore; no snapshot may be open). */
    void clearAll() {
        index.clear();
        listHead = null;
        listTail = null;
        liveCount = 0;
        root.children = null;
        garbage.clear();
        keptVersions = 0;
    }

    KvEntry listHead() {
        return listHead;
    }

    // ---- children ----

    private static void linkChild(KvEntry parent, KvEntry e) {
        if (parent.children == null) {
            parent.children = new TreeMap<>();
        }
        parent.children.put(e.key, e);
    }

    private static void unlinkChild(KvEntry parent, KvEntry e) {
        parent.children.remove(e.key);
        if (parent.children.isEmpty()) {
            parent.children = null; // an emptied directory holds no map, as one never filled does not
        }
    }

    /** The live children of a directory, sorted by key (a view: do not change the tree while iterating it). */
    static Collection<KvEntry> sortedChildren(KvEntry dir) {
        return dir.children == null ? Collections.emptyList() : dir.children.values();
    }

    /**
     * The live children of {@code dir} whose key sorts after {@code startAfter} (null: all), by key:
     * a seek in the sorted children, O(log n), then O(1) per child taken, so a list page costs time in
     * proportion to its own size and the log of the directory's, not to the directory's size. The
     * iterator is a view: take what is needed before the tree changes.
     */
    static Iterator<KvEntry> childrenAfter(KvEntry dir, String startAfter) {
        if (dir.children == null) {
            return Collections.emptyIterator();
        }
        return (startAfter == null ? dir.children : dir.children.tailMap(startAfter, false)).values().iterator();
    }

    /** Every live node under {@code dir} (any depth), parents before children, siblings by key. */
    static void collectSubtree(KvEntry dir, List<KvNode> out) {
        for (KvEntry c : sortedChildren(dir)) {
            out.add(c.latest.toNode(c.key));
            if (c.latest.dir) {
                collectSubtree(c, out);
            }
        }
    }

    // ---- the creation-ordered list ----

    private void appendToList(KvEntry e) {
        e.listPrev = listTail;
        e.listNext = null;
        if (listTail != null) {
            listTail.listNext = e;
        } else {
            listHead = e;
        }
        listTail = e;
        e.inList = true;
    }

    private void unlinkFromList(KvEntry e) {
        if (!e.inList) {
            return;
        }
        if (e.listPrev != null) {
            e.listPrev.listNext = e.listNext;
        } else {
            listHead = e.listNext;
        }
        if (e.listNext != null) {
            e.listNext.listPrev = e.listPrev;
        } else {
            listTail = e.listPrev;
        }
        e.listPrev = null;
        e.listNext = null;
        e.inList = false;
    }
}
