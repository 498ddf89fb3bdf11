package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.KvWatchReq;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watches of the clients connected to this node (not replicated: each node serves its own
 * clients, and a client that moves to another node registers there again).
 *
 * <p>A watch on a key fires when that key is created, changed or removed; a watch on a directory
 * (or on the root, "") fires for the directory itself and for every key under it, at any depth.
 * TTL refreshes (updateTtl) do not fire: they change no value.
 *
 * <p>Flow, for the server (phase B) to drive:
 * <ol>
 *   <li>{@link #watch} registers or removes watches. Each key comes with the raft index of the
 *   latest state the client has seen of it: a key whose state is newer (or that is gone, or that
 *   the client has never seen) is queued at once, and a directory is always queued for a full
 *   re-sync (its whole current subtree), so a client that reconnects, here or to another node,
 *   ends up with the latest state of everything it watches.</li>
 *   <li>Applies mark changed keys pending for each watcher (a hash-free walk up the parents of
 *   the changed node; nothing at all when no one watches).</li>
 *   <li>After applying, {@link #takeReady} gives the watchers with something pending and no
 *   notification in flight; {@link #nextNotify} builds the next notification for one of them,
 *   reading the <em>current</em> state of each pending key, and marks it in flight.</li>
 *   <li>When the client acknowledges (or the push fails), {@link #onNotifyDone}: a watcher with more
 *   pending goes back to the ready queue; an undelivered notification's keys become pending again.</li>
 * </ol>
 * A slow watcher therefore never holds up writes: while its notification is in flight, changes
 * only add keys to its pending set, where repeated changes of a key coalesce into one (its latest
 * state is what is sent). Notifications carry the applied index they were read at; clients ignore
 * a state older than one they already have (possible after failing over to a lagging node).
 *
 * <p>Single-threaded: the apply thread.
 */
public final class WatchManager {

    private final KvStore store;
    private final int groupId;
    private final int maxEventsPerNotify;
    private final int maxNotifyBytes;
    private final int maxWatchesPerWatcher;
    private final HashMap<String, WatchedKey> watchedKeys = new HashMap<>();
    private final HashMap<Long, Watcher> watchers = new HashMap<>();
    private final ArrayDeque<Watcher> ready = new ArrayDeque<>();

    WatchManager(KvStore store, int groupId, int maxEventsPerNotify, int maxNotifyBytes, int maxWatchesPerWatcher) {
        this.store = store;
        this.groupId = groupId;
        this.maxEventsPerNotify = maxEventsPerNotify;
        this.maxNotifyBytes = maxNotifyBytes;
        this.maxWatchesPerWatcher = maxWatchesPerWatcher;
    }

    /** Watched keys (over all watchers). */
    public int watchedKeyCount() {
        return watchedKeys.size();
    }

    public int watcherCount() {
        return watchers.size();
    }

    /** Keys pending for a watcher (0 for an unknown one): bounded by what it watches. */
    public int pendingCount(long watcherId) {
        Watcher w = watchers.get(watcherId);
        return w == null ? 0 : w.pending.size() + w.pendingResync.size()
                + (w.partialResyncDir == null ? 0 : w.partialResyncKeys.size() - w.partialResyncNext);
    }

    /**
     * Adds, replaces ({@code syncAll}) or removes watches of a watcher (a connection or client id
     * chosen by the server). Returns SUCCESS, INVALID_KEY / KEY_TOO_LONG with the failed position, or
     * TOO_MANY_WATCHES (nothing is changed then).
     */
    public KvResp watch(long watcherId, KvWatchReq req) {
        List<String> keys = req.keys();
        for (int i = 0; i < keys.size(); i++) {
            KvCode c = KvKeys.checkDirOrRoot(keys.get(i));
            if (c != KvCode.SUCCESS) {
                return KvResp.fail(c, store.lastAppliedIndex(), KvKeys.explain(c, keys.get(i))).failedPosition(i + 1);
            }
        }
        Watcher w = watchers.get(watcherId);
        if (!req.isRemove()) {
            int after = watchCountAfter(w, keys, req.isSyncAll());
            if (after > maxWatchesPerWatcher) {
                return KvResp.fail(KvCode.TOO_MANY_WATCHES, store.lastAppliedIndex(), "this connection would watch "
                        + after + " keys and directories of group " + groupId + ", over the node's limit of "
                        + maxWatchesPerWatcher + " (KvConfig.maxWatchesPerConnection); watch their directory instead,"
                        + " or spread the watches over more connections");
            }
        }
        if (req.isRemove()) {
            if (w != null) {
                unwatch(w, keys);
                dropIfEmpty(w);
            }
            return KvResp.success(store.lastAppliedIndex());
        }
        if (w == null) {
            w = new Watcher(watcherId);
            watchers.put(watcherId, w);
        }
        if (req.isSyncAll()) {
            // a set, not the request's list: a client re-registering 10,000 keys would otherwise
            // cost 10,000 x 10,000 comparisons on the dispatcher
            Set<String> wanted = new HashSet<>(keys);
            List<String> dropped = new ArrayList<>();
            for (String k : w.watches.keySet()) {
                if (!wanted.contains(k)) {
                    dropped.add(k);
                }
            }
            unwatch(w, dropped);
        }
        long[] known = req.knownIndexes();
        for (int i = 0; i < keys.size(); i++) {
            String k = keys.get(i);
            if (!w.watches.containsKey(k)) {
                WatchedKey wk = watchedKeys.get(k);
                if (wk == null) {
                    wk = new WatchedKey(k);
                    watchedKeys.put(k, wk);
                    KvEntry e = store.tree.lookup(k);
                    if (e != null) {
                        e.watched = wk;
                    }
                }
                wk.watchers.add(w);
                w.watches.put(k, wk);
            }
            queueInitialState(w, k, known[i]);
        }
        dropIfEmpty(w);
        return KvResp.success(store.lastAppliedIndex());
    }

    /**
     * How many keys {@code w} would watch after registering {@code keys} (replacing its watches with
     * them when {@code syncAll}): exact when over the limit; within it, possibly an upper bound.
     */
    private int watchCountAfter(Watcher w, List<String> keys, boolean syncAll) {
        int now = w == null || syncAll ? 0 : w.watches.size();
        if ((long) now + keys.size() <= maxWatchesPerWatcher) {
            return now + keys.size();   // at most that many: within the limit without counting duplicates
        }
        Set<String> distinct = new HashSet<>(keys);
        if (syncAll || w == null) {
            return distinct.size();
        }
        int added = 0;
        for (String k : distinct) {
            if (!w.watches.containsKey(k)) {
                added++;
            }
        }
        return now + added;
    }

    /** What a client that has seen {@code key} at {@code knownIndex} is missing. */
    private void queueInitialState(Watcher w, String key, long knownIndex) {
        KvEntry e = store.tree.live(key);
        if (e != null && e.latest.dir) {
            w.pendingResync.add(key);
        } else if (e == null || knownIndex == 0 || e.latest.updateIndex > knownIndex) {
            w.pending.putIfAbsent(key, key);
        } else {
            return;
        }
        makeReady(w);
    }

    /** Drops a watcher and all its watches (its connection closed). */
    public void removeWatcher(long watcherId) {
        Watcher w = watchers.remove(watcherId);
        if (w == null) {
            return;
        }
        // nothing of it is sent any more: dropped first, so the watches go without rerouting changes
        w.pending.clear();
        w.pendingResync.clear();
        w.dropPartialResync();
        ready.remove(w);
        unwatch(w, new ArrayList<>(w.watches.keySet()));
    }

    /** Ends {@code w}'s watches of {@code keys} (those it has), then reroutes its pending changes in one pass. */
    private void unwatch(Watcher w, Collection<String> keys) {
        Set<String> ended = new HashSet<>();
        for (String key : keys) {
            WatchedKey wk = w.watches.remove(key);
            if (wk == null) {
                continue;
            }
            ended.add(key);
            wk.watchers.remove(w);
            if (wk.watchers.isEmpty()) {
                watchedKeys.remove(key);
                KvEntry e = store.tree.lookup(key);
                if (e != null && e.watched == wk) {
                    e.watched = null;
                }
            }
            w.pendingResync.remove(key);
            if (key.equals(w.partialResyncDir)) {
                w.dropPartialResync();
            }
        }
        if (ended.isEmpty() || w.pending.isEmpty()) {
            return;
        }
        for (Iterator<Map.Entry<String, String>> it = w.pending.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, String> change = it.next();
            if (ended.contains(change.getValue())) {
                // A watch of the same watcher above the key (a directory, the root) may still cover
                // the change: it goes through that one, or that watch would never hear of it.
                String other = coveringWatch(w, change.getKey());
                if (other == null) {
                    it.remove();
                } else {
                    change.setValue(other);
                }
            }
        }
    }

    /** The watch of {@code w} nearest at or above {@code key} (the key, a directory above it, the root), or null. */
    private static String coveringWatch(Watcher w, String key) {
        for (String k = key; ; k = KvKeys.parentOf(k)) {
            if (w.watches.containsKey(k)) {
                return k;
            }
            if (k.isEmpty()) {
                return null;
            }
        }
    }

    private void dropIfEmpty(Watcher w) {
        if (w.watches.isEmpty() && !w.inFlight) {
            removeWatcher(w.id);
        }
    }

    // ---- called by the store while applying ----

    void onCreated(KvEntry e) {
        if (!watchedKeys.isEmpty()) {
            e.watched = watchedKeys.get(e.key);
        }
    }

    void onChanged(KvEntry e) {
        if (watchedKeys.isEmpty()) {
            return;
        }
        for (KvEntry x = e; x != null; x = x.parent) {
            WatchedKey wk = x.watched;
            if (wk != null) {
                for (int i = 0, n = wk.watchers.size(); i < n; i++) {
                    Watcher w = wk.watchers.get(i);
                    w.pending.putIfAbsent(e.key, wk.key);
                    makeReady(w);
                }
            }
        }
    }

    /** The whole state was replaced (a snapshot was installed): relink and re-send everything watched. */
    void onStateReplaced() {
        for (WatchedKey wk : watchedKeys.values()) {
            KvEntry e = store.tree.lookup(wk.key);
            if (e != null) {
                e.watched = wk;
            }
        }
        for (Watcher w : watchers.values()) {
            w.dropPartialResync(); // its keys were listed from the state that was replaced
            for (String k : w.watches.keySet()) {
                queueInitialState(w, k, 0);
            }
        }
    }

    private void makeReady(Watcher w) {
        if (!w.queued && !w.inFlight) {
            w.queued = true;
            ready.addLast(w);
        }
    }

    // ---- the push loop (phase B) ----

    /** The watchers with changes to send and nothing in flight, in the order they became ready. */
    public List<Long> takeReady() {
        List<Long> out = new ArrayList<>(ready.size());
        for (Watcher w : ready) {
            w.queued = false;
            out.add(w.id);
        }
        ready.clear();
        return out;
    }

    /**
     * Builds the next notification for a watcher, with the current state of its pending keys (at
     * most the configured number of events and about the configured bytes), and marks it in flight.
     * A directory resync larger than that goes in parts, one per notification (see
     * {@link KvWatchEvent#hasMore()}): one event of a directory with a few large values could
     * otherwise outgrow the 8 MiB frame and never be sent. Null when it has nothing pending, a
     * notification is already in flight, or it is unknown.
     */
    public KvWatchNotify nextNotify(long watcherId) {
        Watcher w = watchers.get(watcherId);
        if (w == null || w.inFlight || !w.hasPending()) {
            return null;
        }
        List<KvWatchEvent> events = new ArrayList<>();
        int bytes = 0;
        if (w.partialResyncDir != null && w.pendingResync.contains(w.partialResyncDir)) {
            w.dropPartialResync(); // asked for again (a re-registration): it starts over below
        }
        if (w.partialResyncDir != null) {
            String dir = w.partialResyncDir;
            List<KvNode> part = new ArrayList<>();
            int partBytes = 0;
            while (w.partialResyncNext < w.partialResyncKeys.size() && partBytes < maxNotifyBytes) {
                String k = w.partialResyncKeys.get(w.partialResyncNext++);
                KvEntry e = store.tree.live(k);
                if (e != null) { // one removed since the first part comes as a change
                    KvNode n = e.latest.toNode(k);
                    part.add(n);
                    partBytes += n.encodedSize();
                }
            }
            boolean more = w.partialResyncNext < w.partialResyncKeys.size();
            KvWatchEvent event = new KvWatchEvent(dir, null, true, part, more, true);
            events.add(event);
            bytes += event.encodedSize();
            w.inFlightPartDir = dir;
            if (!more) {
                w.dropPartialResync();
            }
        }
        for (Iterator<String> it = w.pendingResync.iterator(); it.hasNext() && events.size() < maxEventsPerNotify
                && bytes < maxNotifyBytes && w.partialResyncDir == null; ) {
            String k = it.next();
            it.remove();
            KvEntry e = store.tree.live(k);
            List<KvNode> subtree = new ArrayList<>();
            if (e != null && e.latest.dir) {
                KvTree.collectSubtree(e, subtree);
            }
            KvNode self = e == null ? KvNode.absent(k) : (k.isEmpty() ? null : e.latest.toNode(k));
            KvWatchEvent event = new KvWatchEvent(k, self, true, subtree);
            if (event.encodedSize() > maxNotifyBytes) {
                event = firstPart(w, k, self, subtree, maxNotifyBytes - bytes);
            } else {
                w.inFlightResyncs.add(k);
            }
            events.add(event);
            bytes += event.encodedSize();
        }
        for (Iterator<Map.Entry<String, String>> it = w.pending.entrySet().iterator();
             it.hasNext() && events.size() < maxEventsPerNotify && bytes < maxNotifyBytes; ) {
            Map.Entry<String, String> change = it.next();
            it.remove();
            KvWatchEvent event = KvWatchEvent.change(change.getValue(), store.nodeOf(change.getKey()));
            events.add(event);
            bytes += event.encodedSize();
            w.inFlightChanges.add(new String[]{change.getKey(), change.getValue()});
        }
        w.inFlight = true;
        w.queued = false;
        ready.remove(w);
        return new KvWatchNotify(groupId, store.lastAppliedIndex(), events);
    }

    /**
     * Starts sending the resync of {@code dir} in parts: lists its keys, and returns the first part
     * (the directory's own state and the first nodes, about {@code budgetBytes}, at least one).
     */
    private KvWatchEvent firstPart(Watcher w, String dir, KvNode self, List<KvNode> subtree, int budgetBytes) {
        ArrayList<String> keys = new ArrayList<>(subtree.size());
        for (KvNode n : subtree) {
            keys.add(n.key());
        }
        List<KvNode> part = new ArrayList<>();
        int partBytes = 0;
        int next = 0;
        while (next < subtree.size() && (part.isEmpty() || partBytes < budgetBytes)) {
            KvNode n = subtree.get(next++);
            part.add(n);
            partBytes += n.encodedSize();
        }
        boolean more = next < subtree.size();
        if (more) {
            w.partialResyncDir = dir;
            w.partialResyncKeys = keys;
            w.partialResyncNext = next;
        }
        w.inFlightPartDir = dir;
        return new KvWatchEvent(dir, self, true, part, more, false);
    }

    /**
     * The notification in flight was acknowledged ({@code delivered}) or failed. A failed one's keys
     * are pending again (their state is read anew when sent); anything pending makes the watcher
     * ready again.
     */
    public void onNotifyDone(long watcherId, boolean delivered) {
        Watcher w = watchers.get(watcherId);
        if (w == null) {
            return;
        }
        if (!delivered) {
            for (String[] c : w.inFlightChanges) {
                // the watch it came through may be gone while another one above still covers it
                String via = w.watches.containsKey(c[1]) ? c[1] : coveringWatch(w, c[0]);
                if (via != null) {
                    w.pending.putIfAbsent(c[0], via);
                }
            }
            for (String k : w.inFlightResyncs) {
                if (w.watches.containsKey(k)) {
                    w.pendingResync.add(k);
                }
            }
            String partDir = w.inFlightPartDir;
            if (partDir != null) {
                // a part went missing: the directory's resync starts over from its first part
                if (partDir.equals(w.partialResyncDir)) {
                    w.dropPartialResync();
                }
                if (w.watches.containsKey(partDir)) {
                    w.pendingResync.add(partDir);
                }
            }
        }
        w.inFlightChanges.clear();
        w.inFlightResyncs.clear();
        w.inFlightPartDir = null;
        w.inFlight = false;
        if (w.hasPending()) {
            makeReady(w);
        } else {
            dropIfEmpty(w);
        }
    }
}
