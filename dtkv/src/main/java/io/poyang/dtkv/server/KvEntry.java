package io.poyang.dtkv.server;

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

    // children of a directory, in no particular order (list sorts by name)
    KvEntry firstChild;
    KvEntry prevSibling;
    KvEntry nextSibling;
    int childCount;

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

    boolean isLiveDir() {
        return latest != null && !latest.removed && latest.dir;
    }
}
