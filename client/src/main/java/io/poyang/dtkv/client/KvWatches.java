package io.poyang.dtkv.client;

import io.poyang.codec.PbCallback;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvException;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvResp;
import io.poyang.dtkv.KvWatchEvent;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.dtkv.KvWatchReq;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ConnectionListener;
import io.poyang.net.NioConnection;
import io.poyang.net.RemoteException;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The client's watches: which keys it watches (per group), the latest state it has of each key
 * under them and the raft index that state was read at, and the re-registration after a reconnect
 * or failover.
 *
 * <p>Guarantee: a node may push a state older than one already seen (after failing over to a
 * lagging replica), so a state is passed on only when it was read at a higher index than the one
 * the client has for that key; re-registration sends those indexes, and the server sends whatever
 * is newer, every directory whole and every missing key as absent. So every listener ends with the
 * latest state of every key it watches; after a re-registration it may get the states of
 * directories and missing keys again (read at a newer index, they are passed on). Events go to
 * listeners on one serial executor, in order; a notification is acknowledged to the server once
 * its listeners ran, so a slow listener makes the server coalesce, not queue.
 *
 * <p>State is guarded by this object's monitor (watch traffic is small next to reads and writes).
 */
final class KvWatches implements ConnectionListener {

    private static final PoyangLog log = PoyangLogs.get(KvWatches.class);
    private static final long RESYNC_DELAY_MILLIS = 30;
    /** How soon a registration that failed (not refused) is sent again, whole; tests wait a few of these. */
    static final long RESYNC_RETRY_MILLIS = 200;
    /** Handles in the order they were made; a handle's own keys by their place in its list. */
    private static final Comparator<Map.Entry<KvWatch, Integer>> MADE_THEN_PLACE =
            Comparator.<Map.Entry<KvWatch, Integer>>comparingLong(e -> e.getKey().order)
                    .thenComparingInt(Map.Entry::getValue);

    private final KvClient.Shared shared;
    private final Map<Integer, GroupWatches> groups = new HashMap<>();
    private boolean resyncScheduled;
    /**
     * Test seam: hears every registration (add, remove, full re-sync) as it is handed to the raft
     * client; null in use. A resend in the background is silent by design (the listeners are told
     * only of a refusal), so a test that a refused key is not sent again needs to see the sends.
     * Set by {@link #hearSendsForTests}.
     */
    private volatile Consumer<KvWatchReq> sendsHeardForTests;

    private static final class GroupWatches {
        /** The handles, in the order they were made. */
        final Set<KvWatch> handles = new LinkedHashSet<>();
        /** Handles made so far: the next one's {@link KvWatch#order}. */
        long handlesMade;
        /**
         * Watched key → the handles watching it, in the order they were made, each with the key's
         * place in its list (the first, when it lists the key twice). A key is watched while some
         * handle is here; the handles a state reaches are found by looking up its key and each of
         * the key's directories ({@link KvWatches#watchersOf}), not by walking every handle's keys.
         */
        final Map<String, Map<KvWatch, Integer>> watchers = new HashMap<>();
        /**
         * Key → the raft index of the latest state seen (removed keys too), for keys some watch covers.
         * Sorted, so the states under a directory are a range ({@link KvWatches#addKeysAtOrUnder}).
         */
        final NavigableMap<String, Long> seenAt = new TreeMap<>();
        /** Key → its latest state, for keys that exist (sorted, as {@link #seenAt}). */
        final NavigableMap<String, KvNode> latest = new TreeMap<>();
        /**
         * Directory → what the parts of its resync have brought so far, while the server sends it in
         * parts (a directory too large for one notification); gone once the last part came.
         */
        final Map<String, ResyncParts> resyncParts = new HashMap<>();
        /**
         * Watched keys the leader refused to add (TOO_MANY_WATCHES): left out of full re-syncs, which
         * the node would refuse whole, silencing every watch of the group. A new watch of such a key
         * asks for it again; closing its last watch forgets it.
         */
        final Set<String> refused = new HashSet<>();
        /** The last full re-sync answered was refused (an add refused since may explain it: then it is sent again). */
        boolean syncAllRefused;
        /**
         * Adds and removes sent so far. A full re-sync replaces the node's watches with its list, so an
         * add or remove sent after the list was taken and applied before it would be undone: a re-sync
         * answered while this moved since it was taken is sent again.
         */
        long registrationsSent;
        boolean needsSync;
    }

    /** A directory resync that comes in parts, until its last one. */
    private static final class ResyncParts {
        /** The index the first part was read at: a key seen at or after it is newer than the resync. */
        final long firstIndex;
        final Set<String> present = new HashSet<>();

        ResyncParts(long firstIndex) {
            this.firstIndex = firstIndex;
        }
    }

    KvWatches(KvClient.Shared shared) {
        this.shared = shared;
    }

    /** Test seam, for tests only: {@code heard} gets every registration this client sends from now on (any thread). */
    void hearSendsForTests(Consumer<KvWatchReq> heard) {
        sendsHeardForTests = heard;
    }

    // ---------------------------------------------------------------- registering

    KvWatch watch(int groupId, KvWatchListener listener, String... keys) {
        if (keys.length == 0) {
            throw new IllegalArgumentException("watch at least one key or directory (\"\" is the root)");
        }
        for (String k : keys) {
            KvCode c = KvKeys.checkDirOrRoot(k);
            if (c != KvCode.SUCCESS) {
                throw new KvException(c, k, KvKeys.explain(c, k));
            }
        }
        KvWatch w = new KvWatch(this, groupId, new ArrayList<>(Arrays.asList(keys)), listener);
        List<String> fresh = new ArrayList<>();
        long[] known;
        synchronized (this) {
            GroupWatches g = groups.computeIfAbsent(groupId, id -> new GroupWatches());
            w.order = g.handlesMade++;
            g.handles.add(w);
            for (int i = 0; i < keys.length; i++) {
                String k = keys[i];
                Map<KvWatch, Integer> ws = g.watchers.get(k);
                if (ws == null) {
                    fresh.add(k);
                    ws = new LinkedHashMap<>();
                    g.watchers.put(k, ws);
                } else if (g.refused.remove(k)) {
                    fresh.add(k);   // refused before: this watch asks again (and is told if refused again)
                }
                ws.putIfAbsent(w, i);
            }
            known = new long[fresh.size()];
            for (int i = 0; i < known.length; i++) {
                Long s = g.seenAt.get(fresh.get(i));
                known[i] = s == null ? 0 : s;
            }
            if (!fresh.isEmpty()) {
                g.registrationsSent++;
            }
        }
        // What the client already has under the new keys (another handle watches them, or a directory
        // above them): the server sends only what is newer than that, so this handle starts from the
        // client's copy. The copy is read on the event executor, behind every notification queued
        // before this call: read here, it could be older than one of those, which reach this handle
        // too, and it would then be delivered after them.
        shared.eventExecutor.execute(() -> start(w));
        if (!fresh.isEmpty()) {
            send(groupId, new KvWatchReq(groupId, false, false, fresh, known), 0);
        }
        return w;
    }

    /**
     * Event executor: gives a new handle the client's copy of what it watches (seenAt holds only keys
     * some watch covers: accept, unwatch) and from then on lets notifications reach it. Notifications
     * run on the same executor, so the copy includes every one before it and none after it.
     */
    private void start(KvWatch w) {
        List<KvNode> cached = new ArrayList<>();
        synchronized (this) {
            w.started = true;
            GroupWatches g = groups.get(w.groupId);
            if (w.closed || g == null) {
                return;
            }
            // the kept states under each of its keys: ranges of the sorted map, not a walk of every state
            Set<String> covered = new LinkedHashSet<>();
            for (String k : w.keys) {
                addKeysAtOrUnder(g.seenAt, k, covered);
            }
            for (String key : covered) {
                KvNode node = g.latest.get(key);
                cached.add(node != null ? node : KvNode.absent(key));
            }
        }
        for (KvNode n : cached) {
            if (!w.closed) {
                try {
                    w.listener.onChange(w.coveringKey(n.key()), n);
                } catch (Throwable t) {
                    log.warn("a watch listener threw", t);
                }
            }
        }
    }

    void unwatch(KvWatch w) {
        List<String> gone = new ArrayList<>();
        synchronized (this) {
            GroupWatches g = groups.get(w.groupId);
            if (g == null || !g.handles.remove(w)) {
                return;
            }
            List<String> unwatched = new ArrayList<>();
            for (String k : w.keys) {
                Map<KvWatch, Integer> ws = g.watchers.get(k);
                if (ws == null || ws.remove(w) == null) {
                    continue;   // a key it lists twice, done at its first
                }
                if (ws.isEmpty()) {
                    g.watchers.remove(k);
                    unwatched.add(k);
                    if (!g.refused.remove(k)) {
                        gone.add(k);   // (a refused key is not watched on the node)
                    }
                }
            }
            if (!gone.isEmpty()) {
                g.registrationsSent++;
            }
            // forget states no watch covers any more (and the indexes they were seen at: a later watch
            // of such a key must get its current state from the server, not "nothing newer"); only
            // states under a key nobody watches now can have lost their cover
            Set<String> mayBeUncovered = new LinkedHashSet<>();
            for (String k : unwatched) {
                addKeysAtOrUnder(g.seenAt, k, mayBeUncovered);
            }
            for (String k : mayBeUncovered) {
                if (!covered(g, k)) {
                    g.seenAt.remove(k);
                    g.latest.remove(k);
                }
            }
        }
        if (!gone.isEmpty()) {
            send(w.groupId, new KvWatchReq(w.groupId, true, false, gone, new long[gone.size()]), 0);
        }
    }

    /**
     * Whether a watch covers {@code key}: the key itself or one of its directories (the root
     * included) is watched. Looks up the key's ancestors, not every watched key: {@link #unwatch}
     * asks this for every state it keeps, under the monitor the I/O thread also takes.
     */
    /**
     * Adds to {@code out} the keys of {@code m} under directory {@code dir}: strictly under it, or for
     * the root every key (the root's own too). A range of the sorted map, since every key under "d"
     * starts with "d." and so sorts from "d." up to, not including, "d/" ('/' follows '.').
     */
    static void addKeysUnder(NavigableMap<String, ?> m, String dir, java.util.Collection<String> out) {
        if (dir.isEmpty()) {
            out.addAll(m.keySet());
            return;
        }
        out.addAll(m.subMap(dir + KvKeys.SEPARATOR, true, dir + (char) (KvKeys.SEPARATOR + 1), false).keySet());
    }

    /**
     * Adds to {@code out} (a set) the keys of {@code m} that a watch of {@code key} covers: the key
     * and all under it.
     */
    static void addKeysAtOrUnder(NavigableMap<String, ?> m, String key, java.util.Collection<String> out) {
        if (m.containsKey(key)) {
            out.add(key);
        }
        addKeysUnder(m, key, out);
    }

    private static boolean covered(GroupWatches g, String key) {
        for (String k = key; ; k = KvKeys.parentOf(k)) {
            if (g.watchers.containsKey(k)) {
                return true;
            }
            if (k.isEmpty()) {
                return false;
            }
        }
    }

    /**
     * Sends a registration to the group's leader; a failure makes the whole set be sent again.
     * {@code sentBefore}: for a full re-sync, the group's {@code registrationsSent} when it was taken.
     *
     * <p>A full re-sync not answered within {@code readAttemptMillis} (the leader's group stuck) is
     * sent again, the same copy, to the leader of the highest term ({@code callLeaderIdempotent}):
     * a copy applied after a later add or remove would undo it, but {@link #syncAllAccepted} sees
     * that the group's {@code registrationsSent} moved and registers the group again. An add or a
     * remove is sent once, with {@code readAttemptMillis} to be answered: a second copy of it, sent
     * after an add or remove of the same key that was made meanwhile and answered, would undo that
     * one and nothing would notice (a remove resent after a new watch of its key left that watch
     * silent for good). An add that gets no answer makes the group be registered again whole
     * instead; a remove that gets none is dropped as before (the node that holds it serves it in
     * order, or drops the connection's watches when it stops leading or the connection closes).
     */
    private void send(int groupId, KvWatchReq req, long sentBefore) {
        Consumer<KvWatchReq> heard = sendsHeardForTests;
        if (heard != null) {
            heard.accept(req);
        }
        RpcCallback<KvResp> callback = new RpcCallback<KvResp>() {
            @Override
            public void onSuccess(KvResp result) {
                if (req.isSyncAll()) {
                    syncAllAccepted(groupId, sentBefore);
                }
            }

            @Override
            public void onFailure(Throwable error) {
                if (req.isRemove()) {
                    return;
                }
                if (error instanceof RemoteException
                        && ((RemoteException) error).responseCode() == ResponseCode.BIZ_ERROR) {
                    // the leader refused it (TOO_MANY_WATCHES): sending it again gets the same
                    refused(groupId, req, (RemoteException) error);
                    return;
                }
                log.info("registering watches of group {} failed ({}); trying again", groupId, error.toString());
                markNeedsSync(groupId);
            }
        };
        try {
            if (req.isSyncAll()) {
                shared.raft.callLeaderIdempotent(groupId, KvCommands.KV_WATCH, req, KvResp.Decoder::new,
                        shared.config.timeoutMillis, shared.readAttemptMillis, callback);
            } else {
                shared.raft.callLeader(groupId, KvCommands.KV_WATCH, req, KvResp.Decoder::new,
                        Math.min(shared.config.timeoutMillis, shared.readAttemptMillis), callback);
            }
        } catch (RuntimeException e) {
            markNeedsSync(groupId);
        }
    }

    /**
     * The leader refused a registration (nothing of it was applied there). Asking again would be
     * refused again, so the handles it covered are told instead (and it is logged): a full re-sync
     * covers all of the group's handles, an added set the handles watching one of its keys. The keys
     * of a refused add are left out of later full re-syncs (the node refuses a registration whole).
     * A full re-sync that carried such a key, refused before or after it, is sent again without.
     */
    private void refused(int groupId, KvWatchReq req, RemoteException refusal) {
        String why = refusal.remoteMessage() == null ? "" : refusal.remoteMessage();
        KvException error = new KvException(refusal.bizCode(), req.keys().isEmpty() ? "" : req.keys().get(0),
                "watching " + req.keys().size() + " key(s) of group " + groupId
                + (req.isSyncAll() ? " (all of this client's, again)" : "")
                + " was refused by the leader" + (why.isEmpty() ? "" : ": " + why));
        List<KvWatch> told = new ArrayList<>();
        boolean again = false;
        synchronized (this) {
            GroupWatches g = groups.get(groupId);
            if (g == null) {
                return;
            }
            if (req.isSyncAll()) {
                g.syncAllRefused = true;
                for (String k : req.keys()) {
                    again |= g.refused.contains(k);   // its add was refused after this re-sync was taken
                }
            } else {
                for (String k : req.keys()) {
                    if (g.watchers.containsKey(k)) {
                        g.refused.add(k);
                    }
                }
                // the last re-sync was refused, perhaps for these keys: it may go through without them
                again = g.syncAllRefused;
            }
            Set<String> keys = new HashSet<>(req.keys());
            for (KvWatch w : g.handles) {
                boolean affected = req.isSyncAll();
                for (String k : w.keys) {
                    affected |= keys.contains(k);
                }
                if (affected) {
                    told.add(w);
                }
            }
        }
        if (again) {
            markNeedsSync(groupId);
        }
        if (again && req.isSyncAll()) {
            log.info("{}; registering the group's watches again without the keys refused before", error.getMessage());
            return;
        }
        log.error("{}", error.getMessage());
        shared.eventExecutor.execute(() -> {
            for (KvWatch w : told) {
                if (!w.closed) {
                    try {
                        w.listener.onError(error);
                    } catch (Throwable t) {
                        log.warn("a watch listener threw", t);
                    }
                }
            }
        });
    }

    /**
     * A full re-sync was applied (I/O thread). An add or remove sent since it was taken may have been
     * applied before it and undone by it (an add made while it was on its way, or one routed faster
     * while the client looked for the leader): then the group is registered again, as it is now.
     * (Mostly it came after, and the second re-sync only repeats states.)
     */
    private void syncAllAccepted(int groupId, long sentBefore) {
        synchronized (this) {
            GroupWatches g = groups.get(groupId);
            if (g == null) {
                return;
            }
            g.syncAllRefused = false;
            if (g.registrationsSent == sentBefore) {
                return;
            }
            g.needsSync = true;
        }
        scheduleResync(RESYNC_DELAY_MILLIS);
    }

    private void markNeedsSync(int groupId) {
        synchronized (this) {
            GroupWatches g = groups.get(groupId);
            if (g == null) {
                return;
            }
            g.needsSync = true;
        }
        scheduleResync(RESYNC_RETRY_MILLIS);
    }

    // ---------------------------------------------------------------- re-sync after reconnect / failover

    @Override
    public void onConnected(NioConnection connection) {
        boolean any;
        synchronized (this) {
            any = false;
            for (GroupWatches g : groups.values()) {
                any |= g.needsSync;
            }
        }
        if (any) {
            scheduleResync(RESYNC_DELAY_MILLIS);
        }
    }

    @Override
    public void onClosed(NioConnection connection) {
        // The node holding our watches may be gone (or its connection only): register everything
        // again with the leader; the indexes we send make the server send only what is newer (but
        // directories whole and missing keys as absent again).
        synchronized (this) {
            if (groups.isEmpty()) {
                return;
            }
            for (GroupWatches g : groups.values()) {
                g.needsSync = true;
            }
        }
        scheduleResync(RESYNC_DELAY_MILLIS);
    }

    private void scheduleResync(long delayMillis) {
        synchronized (this) {
            if (resyncScheduled) {
                return;
            }
            resyncScheduled = true;
        }
        try {
            shared.timer.schedule(this::resync, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the client is stopping
        }
    }

    private void resync() {
        sendSyncAlls(takeSyncAlls());
    }

    /** A full re-sync of one group: what the client watches there, taken under the monitor and sent after. */
    static final class SyncAll {
        final KvWatchReq req;
        /** The group's {@code registrationsSent} when it was taken. */
        final long sentBefore;

        SyncAll(KvWatchReq req, long sentBefore) {
            this.req = req;
            this.sentBefore = sentBefore;
        }
    }

    /** The full re-syncs of the groups that need one (package-private: a test sends them late). */
    List<SyncAll> takeSyncAlls() {
        List<SyncAll> syncs = new ArrayList<>();
        synchronized (this) {
            resyncScheduled = false;
            for (Map.Entry<Integer, GroupWatches> e : groups.entrySet()) {
                GroupWatches g = e.getValue();
                if (!g.needsSync) {
                    continue;
                }
                g.needsSync = false;
                g.resyncParts.clear(); // the server starts every directory's resync again
                List<String> keys = new ArrayList<>(g.watchers.size());
                for (String k : g.watchers.keySet()) {
                    if (!g.refused.contains(k)) {
                        keys.add(k);
                    }
                }
                long[] known = new long[keys.size()];
                for (int i = 0; i < keys.size(); i++) {
                    Long s = g.seenAt.get(keys.get(i));
                    known[i] = s == null ? 0 : s;
                }
                syncs.add(new SyncAll(new KvWatchReq(e.getKey(), false, true, keys, known), g.registrationsSent));
            }
        }
        return syncs;
    }

    void sendSyncAlls(List<SyncAll> syncs) {
        for (SyncAll s : syncs) {
            send(s.req.groupId(), s.req, s.sentBefore);
        }
    }

    // ---------------------------------------------------------------- pushes

    ReqProcessor<KvWatchNotify> processor() {
        return new ReqProcessor<KvWatchNotify>() {
            @Override
            public PbCallback<KvWatchNotify> createDecoder() {
                return new KvWatchNotify.Decoder();
            }

            @Override
            public WritePacket process(ReqContext context, KvWatchNotify notify) {
                shared.eventExecutor.execute(() -> {
                    try {
                        onNotify(notify);
                    } finally {
                        context.respond(WritePacket.response(null));
                    }
                });
                return null;
            }
        };
    }

    /** Applies a notification to the client's states and calls the listeners (event executor). */
    void onNotify(KvWatchNotify notify) {
        if (notify.moved()) {
            // the node dropped our watches (it lost the leadership, or its replica failed): register
            // them with the leader; the indexes sent make it send only what is newer
            log.info("node dropped the watches of group {} (no longer its leader); registering them again",
                    notify.groupId());
            markNeedsSync(notify.groupId());
            return;
        }
        long index = notify.raftIndex();
        List<Object[]> calls = new ArrayList<>();
        synchronized (this) {
            GroupWatches g = groups.get(notify.groupId());
            if (g == null) {
                return;
            }
            for (KvWatchEvent e : notify.events()) {
                if (e.isResync()) {
                    String dir = e.watchKey();
                    ResyncParts parts = g.resyncParts.remove(dir);
                    if (!e.isContinued()) {
                        parts = new ResyncParts(index);   // a first part: whatever came before is over
                    } else if (parts == null) {
                        // a later part of a resync this client set aside when it asked for a new one
                        // (a connection closed): current states, but no key is known gone from it
                        if (e.node() != null) {
                            accept(g, e.node(), index, calls);
                        }
                        for (KvNode n : e.subtree()) {
                            accept(g, n, index, calls);
                        }
                        continue;
                    }
                    Set<String> present = parts.present;
                    if (e.node() != null) {
                        accept(g, e.node(), index, calls);
                        present.add(e.node().key());
                    }
                    for (KvNode n : e.subtree()) {
                        accept(g, n, index, calls);
                        present.add(n.key());
                    }
                    if (e.hasMore()) {
                        // a key is known gone only once every part has come: keep what came so far
                        g.resyncParts.put(dir, parts);
                        continue;
                    }
                    List<String> under = new ArrayList<>();
                    addKeysUnder(g.latest, dir, under);
                    for (String k : under) {
                        if (!present.contains(k)) {
                            // gone, unless a change newer than the resync's start told us of it (a key
                            // made while later parts were on their way: it is in no part)
                            Long seen = g.seenAt.get(k);
                            if (seen == null || seen < parts.firstIndex) {
                                accept(g, KvNode.absent(k), index, calls);
                            }
                        }
                    }
                } else if (e.node() != null) {
                    accept(g, e.node(), index, calls);
                }
            }
        }
        for (Object[] c : calls) {
            KvWatch w = (KvWatch) c[0];
            if (!w.closed) {
                try {
                    w.listener.onChange((String) c[1], (KvNode) c[2]);
                } catch (Throwable t) {
                    log.warn("a watch listener threw", t);
                }
            }
        }
    }

    private static void accept(GroupWatches g, KvNode node, long index, List<Object[]> calls) {
        String key = node.key();
        Long seen = g.seenAt.get(key);
        if (seen != null && index <= seen) {
            return;   // an older or equal state than the one we have (a lagging replica, a repeat)
        }
        List<Map.Entry<KvWatch, Integer>> found = watchersOf(g, key);
        if (found.isEmpty()) {
            return;   // sent before its watch was closed: keep nothing no watch covers
        }
        for (Map.Entry<KvWatch, Integer> e : found) {
            KvWatch w = e.getKey();
            if (w.started) {
                calls.add(new Object[]{w, w.keys.get(e.getValue()), node});
            }   // else its start, queued behind this notification, delivers the state recorded below
        }
        g.seenAt.put(key, index);
        if (node.exists()) {
            g.latest.put(key, node);
        } else {
            g.latest.remove(key);
        }
    }

    /**
     * The handles whose watch covers {@code key}, in the order they were made, each once with the
     * place in its list of its first key that covers it (the one {@link KvWatch#coveringKey} gives):
     * the handles watching the key itself or one of its directories, the root included. Looks up the
     * key's ancestors, not every handle's keys: a notification asks this for every state it brings,
     * under the monitor the I/O thread also takes.
     */
    private static List<Map.Entry<KvWatch, Integer>> watchersOf(GroupWatches g, String key) {
        List<Map.Entry<KvWatch, Integer>> found = new ArrayList<>();
        int levels = 0;
        for (String k = key; ; k = KvKeys.parentOf(k)) {
            Map<KvWatch, Integer> ws = g.watchers.get(k);
            if (ws != null) {
                found.addAll(ws.entrySet());
                levels++;
            }
            if (k.isEmpty()) {
                break;
            }
        }
        if (levels > 1) {
            // handles of several levels: in the order they were made, and a handle found at more than
            // one level (it watches the key and a directory above it) once, with its first such key
            found.sort(MADE_THEN_PLACE);
            int n = 0;
            for (int i = 0; i < found.size(); i++) {
                if (n == 0 || found.get(n - 1).getKey() != found.get(i).getKey()) {
                    found.set(n++, found.get(i));
                }
            }
            found.subList(n, found.size()).clear();
        }
        return found;
    }
}
