package io.poyang.dtkv.server;

import java.util.TreeMap;

/**
 * One key of the tree: its versions (newest first), its place under its parent, its place in the
 * tree's creation-ordered list (what snapshots walk), and its TTL deadline when it is a temp node.
 * An entry outlives a removal while a snapshot is open (its newest version is then a tombstone),
 * so the snapshot can still read the older version; it is dropped when the last snapshot closes.
 */
final class KvEntry extends DeadlineHeap.Item {

    final String key;
    /** The parent directory's entry (the root's is null). */
    KvEntry parent;
    KvVersion latest;

    /**
     * The live children of a directory by full key (null while it has none): kept sorted so that a
     * list comes out in key order without sorting and a list page seeks to the first key after its
     * cursor in O(log n) instead of visiting every child. Only {@link KvTree} changes it.
     */
    TreeMap<String, KvEntry> children;

    // the tree's creation-ordered list
    KvEntry listPrev;
    KvEntry listNext;
    boolean inList;

    /** Whether the entry sits in the tree's list of entries to trim when snapshots close. */
    boolean inGarbage;
    /** The watch on this key, if any (linked by the WatchManager). */
    WatchedKey watched;

    KvEntry(String key, KvEntry parent) {
        this.key = key;
        this.parent = parent;
    }

    /** Whether the key exists now. */
    boolean live() {
        return latest != null && !latest.removed;
    }

    /** How many live children this directory has. */
    int childCount() {
        return children == null ? 0 : children.size();
    }

    boolean isLiveDir() {
        return latest != null && !latest.removed && latest.dir;
    }
}
