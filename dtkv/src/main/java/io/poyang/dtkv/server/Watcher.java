package io.poyang.dtkv.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;

/**
 * One client's (or connection's) watches and what it has not been told yet. Pending changes are a
 * set of keys, so a key that changes again before the watcher is told is sent once, with its
 * latest state: the watcher's backlog is bounded by the number of keys it watches, whatever the
 * write rate.
 */
final class Watcher {

    final long id;
    final HashMap<String, WatchedKey> watches = new HashMap<>();
    /** Changed key -> the watch it was found through (the nearest watched key at or above it). */
    final LinkedHashMap<String, String> pending = new LinkedHashMap<>();
    /** Watched keys whose whole subtree must be sent again. */
    final LinkedHashSet<String> pendingResync = new LinkedHashSet<>();
    /** A notification was handed out and not yet reported done. */
    boolean inFlight;
    /** Sitting in the manager's ready queue. */
    boolean queued;
    /** What the notification in flight carried, to send again if it was not delivered. */
    final ArrayList<String[]> inFlightChanges = new ArrayList<>();
    final ArrayList<String> inFlightResyncs = new ArrayList<>();

    /**
     * A directory whose resync is too large for one notification and goes in parts, one per
     * notification, or null. Its keys were listed when the first part was built (parents before
     * children); each later part reads the current state of the next ones.
     */
    String partialResyncDir;
    ArrayList<String> partialResyncKeys;
    int partialResyncNext;
    /** The directory a part of whose resync the notification in flight carries, or null. */
    String inFlightPartDir;

    Watcher(long id) {
        this.id = id;
    }

    boolean hasPending() {
        return !pending.isEmpty() || !pendingResync.isEmpty() || partialResyncDir != null;
    }

    void dropPartialResync() {
        partialResyncDir = null;
        partialResyncKeys = null;
        partialResyncNext = 0;
    }
}
