package io.poyang.dtkv.server;

import io.poyang.codec.PbUtil;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvKeys;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvOp;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.log.ImpossibleStates;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;

/**
 * The DtKV state machine: applies write requests in raft index order and answers reads. Applying
 * depends only on the request, the entry's raft index and the leader's timestamp in the entry
 * (never on local time or randomness), so every replica, and a replica restored from a snapshot and
 * replaying the log after it, reaches the same state. See dtkv/README.md for every operation's rules.
 *
 * <p>Time: the <em>log clock</em> is the largest leader timestamp applied so far, so it never goes
 * back even when a new leader's clock is behind the old one's. TTL and lease deadlines are log-clock
 * milliseconds ({@code clock + ttl}); an entry "sees" a deadline as passed when it is at or before
 * the log clock.
 *
 * <p>Single-threaded: the raft apply fiber calls {@link #apply}, reads, snapshot steps and the
 * TTL/watch methods, all on the same thread. Nothing here blocks.
 */
public final class KvStore {

    private final KvConfig config;
    final KvTree tree = new KvTree();
    final ClientSessions sessions = new ClientSessions();
    private final DeadlineHeap<KvEntry> ttlHeap = new DeadlineHeap<>();
    private final DeadlineHeap<KvLock> leaseHeap = new DeadlineHeap<>();
    final LockManager locks;
    private final TtlManager ttlManager;
    private final WatchManager watchManager;

    private long lastAppliedIndex;
    /** The term of the entry applied last (0 before the first, or after a restore that did not say). */
    private int lastAppliedTerm;
    private long logClockMillis;

    public KvStore(KvConfig config) {
        this.config = config;
        this.locks = new LockManager(leaseHeap, config.groupId);
        this.ttlManager = new TtlManager(this, ttlHeap, leaseHeap, config.expireRetryMillis);
        this.watchManager = new WatchManager(this, config.groupId, config.maxEventsPerNotify, config.maxNotifyBytes,
                config.maxWatchesPerConnection);
    }

    public KvStore() {
        this(new KvConfig());
    }

    public KvConfig config() {
        return config;
    }

    /** Lock grants and losses for pushing to clients. */
    public void setListener(KvListener listener) {
        locks.setListener(listener == null ? KvListener.NONE : listener);
    }

    public TtlManager ttlManager() {
        return ttlManager;
    }

    public WatchManager watchManager() {
        return watchManager;
    }

    /** The raft index applied last (0 before the first). */
    public long lastAppliedIndex() {
        return lastAppliedIndex;
    }

    public int lastAppliedTerm() {
        return lastAppliedTerm;
    }

    /** The largest leader timestamp applied so far (epoch ms). */
    public long logClockMillis() {
        return logClockMillis;
    }

    /** Live nodes, the root not counted. */
    public int nodeCount() {
        return tree.liveCount();
    }

    // =====================================================================================
    // apply
    // =====================================================================================

    /**
     * Applies one write at raft index {@code index} (indexes must increase), of raft term
     * {@code term}, with the timestamp the leader put in the entry. Returns the answer for the
     * client; failures are answers too (with a code other than SUCCESS), since they are as
     * deterministic as successes. Reads are refused here with INVALID_REQUEST: they are never logged.
     */
    public KvResp apply(long index, int term, long leaderTimestampMillis, KvReq req) {
        if (index <= lastAppliedIndex) {
            throw new IllegalArgumentException("raft index " + index + " applied after " + lastAppliedIndex
                    + "; entries must be applied once each, in index order");
        }
        lastAppliedIndex = index;
        long prevClock = logClockMillis;
        advanceClock(index, term, leaderTimestampMillis);
        if (req.op() != KvOp.EXPIRE) {
            removeDueTempNodes(index);
        }
        KvResp r = applyWithSession(index, req);
        removeDueTempNodes(index); // after an EXPIRE (which removes its own node): the others due now
        long sweep = config.sessionSweepIntervalMillis;
        if (logClockMillis / sweep != prevClock / sweep) {
            sessions.sweep(logClockMillis - config.sessionIdleMillis);
        }
        return r;
    }

    /**
     * Records that an entry without a DtKV request (a raft no-op or a membership change) was
     * applied: indexes stay contiguous and the log clock moves with its timestamp. A new leader's
     * first entry is such a no-op, so this is where most term changes are seen.
     */
    public void applyOther(long index, int term, long leaderTimestampMillis) {
        if (index <= lastAppliedIndex) {
            throw new IllegalArgumentException("raft index " + index + " applied after " + lastAppliedIndex);
        }
        lastAppliedIndex = index;
        advanceClock(index, term, leaderTimestampMillis);
        removeDueTempNodes(index);
    }

    /**
     * Moves the log clock to an entry's timestamp, the same way on every replica (a function of the
     * log alone). The first entry of a newer term carries the new leader's clock, which may be far
     * ahead of the last entry's: the old leader's idle time, the election, and the skew between the
     * two clocks. Every TTL, lease and lock wait deadline moves later by that gap, so what was left
     * of each is counted again from the new term's start: a leader change never shortens one. (It
     * can lengthen one by up to the gap; that is the price of not trusting two clocks to agree.)
     */
    private void advanceClock(long index, int term, long leaderTimestampMillis) {
        if (term > lastAppliedTerm) {
            if (lastAppliedTerm != 0 && leaderTimestampMillis > logClockMillis) {
                shiftDeadlines(index, leaderTimestampMillis - logClockMillis);
            }
            lastAppliedTerm = term;
            ttlManager.onTermApplied();
        }
        if (leaderTimestampMillis > logClockMillis) {
            logClockMillis = leaderTimestampMillis;
        }
    }

    private void shiftDeadlines(long index, long gapMillis) {
        ttlHeap.forEachDue(Long.MAX_VALUE, e -> {
            KvVersion old = e.latest;
            // a new version (not an in-place change): an open snapshot may still read the old one
            tree.update(e, new KvVersion(old.shareValue(), old.dir, false, old.createIndex, old.updateIndex, index,
                    old.ownerMost, old.ownerLeast, old.ttlMillis, old.expireAtMillis + gapMillis));
            return true;
        });
        ttlHeap.shiftAll(gapMillis);
        locks.shiftDeadlines(gapMillis);
        leaseHeap.shiftAll(gapMillis);
        sessions.shiftIdleClocks(gapMillis);
    }

    /**
     * Removes, in the entry at {@code index}, the temp nodes whose deadline the log clock has
     * reached. Called before an entry's operation, so past its deadline a temp node is gone for every
     * write at once (as a run-out lock lease is), not only once the leader's EXPIRE entry arrives;
     * the leader still proposes EXPIRE, for groups with no other writes. An EXPIRE entry removes its
     * own node first (and answers SUCCESS), then this removes whatever else is due.
     */
    private void removeDueTempNodes(long index) {
        if (ttlHeap.firstDeadline() > logClockMillis) {
            return;
        }
        List<KvEntry> due = new ArrayList<>();
        ttlHeap.forEachDue(logClockMillis, e -> {
            due.add(e);
            return true;
        });
        for (KvEntry e : due) {
            if (e.live()) { // not already gone with a due directory above it
                removeSubtree(index, e);
            }
        }
    }

    private KvResp applyWithSession(long index, KvReq req) {
        KvOp op = req.op();
        if (op == null || !op.isWrite()) {
            return KvResp.fail(KvCode.INVALID_REQUEST, index, "op " + (op == null ? "#" + req.opNumber() : op)
                    + " is not a write; only writes are applied through the log");
        }
        long seq = req.seq();
        if (seq == 0 || op == KvOp.EXPIRE || op == KvOp.EXPIRE_LOCK) {
            return execute(index, op, req);
        }
        long most = req.clientUuidMost();
        long least = req.clientUuidLeast();
        if (most == 0 && least == 0 || seq < 0 || req.ackedBelow() > seq) {
            return KvResp.fail(KvCode.INVALID_REQUEST, index, "an exactly-once write needs a client id, seq >= 1 and"
                    + " acked_below <= seq (got seq " + seq + ", acked_below " + req.ackedBelow() + ")");
        }
        ClientSession s = sessions.get(most, least);
        if (s != null && s.lastActiveMillis < logClockMillis - config.sessionIdleMillis) {
            sessions.remove(s); // expired; the sweep may not have come by yet
            s = null;
        }
        if (s == null) {
            // A session starts with the client's first write (acked_below 1), or again after it was
            // forgotten with a write that has no earlier seq outstanding (acked_below == seq): no copy
            // of an earlier write can then arrive and find its answer gone. A write sent while earlier
            // ones are still open is refused; the client sends it again once they have ended.
            if (req.ackedBelow() > 1 && req.ackedBelow() != seq) {
                return KvResp.fail(KvCode.SESSION_EXPIRED, index, "no session for this client (idle over "
                        + config.sessionIdleMillis + " ms?) and seqs below " + seq + " still open; send it"
                        + " again once they have ended");
            }
            s = sessions.create(most, least, Math.max(1, req.ackedBelow()));
        }
        s.lastActiveMillis = logClockMillis;
        if (seq < s.ackedBelow) {
            return KvResp.fail(KvCode.SEQ_ALREADY_ACKED, index, "seq " + seq + " is below the acknowledged mark "
                    + s.ackedBelow + "; its answer was already delivered");
        }
        s.ack(req.ackedBelow());
        KvResp cached = s.resultOf(seq);
        if (cached != null) {
            return cached;
        }
        if (!s.fits(seq, config.sessionWindowMax)) {
            return KvResp.fail(KvCode.SESSION_WINDOW_FULL, index, "seq " + seq + " is " + (seq - s.ackedBelow)
                    + " past the oldest unacknowledged one; at most " + config.sessionWindowMax + " may be open");
        }
        KvResp r = execute(index, op, req);
        s.record(seq, r);
        return r;
    }

    private KvResp execute(long index, KvOp op, KvReq req) {
        switch (op) {
            case PUT:
                return put(index, req.key(), req.value(), req, false);
            case BATCH_PUT:
                return batchPut(index, req);
            case REMOVE:
                return remove(index, req);
            case BATCH_REMOVE:
                return batchRemove(index, req);
            case MKDIR:
                return mkdir(index, req, false);
            case COMPARE_AND_SET:
                return compareAndSet(index, req);
            case PUT_TEMP:
                return put(index, req.key(), req.value(), req, true);
            case MAKE_TEMP_DIR:
                return mkdir(index, req, true);
            case UPDATE_TTL:
                return updateTtl(index, req);
            case EXPIRE:
                return expire(index, req);
            case TRY_LOCK:
                return locks.tryLock(index, logClockMillis, req);
            case UNLOCK:
                return locks.unlock(index, logClockMillis, req);
            case UPDATE_LEASE:
                return locks.updateLease(index, logClockMillis, req);
            case EXPIRE_LOCK:
                return locks.expireLock(index, logClockMillis, req);
            default:
                return KvResp.fail(KvCode.INVALID_REQUEST, index, "op " + op + " is not a write");
        }
    }

    // ---- checks shared by the writes; they leave what they resolved in these fields ----

    /** The live entry a check found for the key, or null when the key is to be created. */
    private KvEntry resolvedEntry;
    /** The parent directory a check found for a key to be created. */
    private KvEntry resolvedParent;
    /** Why the last check failed. */
    private String failMessage;

    private KvCode fail(KvCode code, String message) {
        failMessage = message;
        return code;
    }

    private KvCode checkKey(String key) {
        KvCode c = KvKeys.check(key);
        return c == KvCode.SUCCESS ? c : fail(c, KvKeys.explain(c, key));
    }

    private KvCode checkTtl(KvReq req, boolean needsOwner) {
        if (KvKeys.checkTtl(req.ttlMillis()) != KvCode.SUCCESS) {
            return fail(KvCode.INVALID_TTL, "the TTL must be 1 ms to " + KvKeys.MAX_TTL_MILLIS + " ms; got "
                    + req.ttlMillis());
        }
        if (needsOwner && req.clientUuidMost() == 0 && req.clientUuidLeast() == 0) {
            return fail(KvCode.INVALID_REQUEST, "temp nodes need the client id (client_uuid_most/least): it owns them");
        }
        return KvCode.SUCCESS;
    }

    /**
     * The nearest temp node among {@code e} and its ancestors decides who may change {@code e}:
     * NOT_OWNER when that temp node belongs to another client.
     */
    private KvCode checkOwner(KvEntry e, KvReq req) {
        for (KvEntry x = e; x != null && x != tree.root; x = x.parent) {
            KvVersion v = x.latest;
            if (v.isTemp()) {
                if (v.ownedBy(req.clientUuidMost(), req.clientUuidLeast())) {
                    return KvCode.SUCCESS;
                }
                return fail(KvCode.NOT_OWNER, (x == e ? "'" + e.key + "' is a temp node" : "'" + e.key
                        + "' lies in temp directory '" + x.key + "'") + " owned by another client; only its owner"
                        + " may change it (or wait for its TTL)");
            }
        }
        return KvCode.SUCCESS;
    }

    /** For a key that does not exist: its parent must be a live directory the caller may write in. */
    private KvCode checkParent(String key, KvReq req) {
        String parentKey = KvKeys.parentOf(key);
        KvEntry p = tree.live(parentKey);
        if (p == null) {
            return fail(KvCode.PARENT_NOT_FOUND, "parent directory '" + parentKey + "' of '" + key
                    + "' does not exist; mkdir it first");
        }
        if (!p.latest.dir) {
            return fail(KvCode.PARENT_NOT_DIR, "parent '" + parentKey + "' of '" + key
                    + "' is a value, not a directory");
        }
        KvCode c = checkOwner(p, req);
        if (c != KvCode.SUCCESS) {
            return c;
        }
        resolvedEntry = null;
        resolvedParent = p;
        return KvCode.SUCCESS;
    }

    /** put and putTemp: may the key be set to a value by this client? */
    private KvCode checkPut(String key, byte[] value, KvReq req, boolean temp) {
        KvCode c = checkKey(key);
        if (c != KvCode.SUCCESS) {
            return c;
        }
        if (KvKeys.checkValue(value) != KvCode.SUCCESS) {
            return fail(KvCode.VALUE_TOO_LARGE, "the value of '" + key + "' has " + value.length
                    + " bytes; at most " + KvKeys.MAX_VALUE_BYTES + " are allowed");
        }
        if (temp && (c = checkTtl(req, true)) != KvCode.SUCCESS) {
            return c;
        }
        KvEntry e = tree.live(key);
        if (e == null) {
            return checkParent(key, req);
        }
        if (e.latest.dir) {
            return fail(KvCode.IS_A_DIR, "'" + key + "' is a directory; remove it first to store a value");
        }
        if (temp && !e.latest.isTemp()) {
            return fail(KvCode.NOT_TEMP, "'" + key + "' is a permanent value; putTemp cannot make it temporary"
                    + " (remove it first)");
        }
        c = checkOwner(e, req);
        if (c != KvCode.SUCCESS) {
            return c;
        }
        resolvedEntry = e;
        return KvCode.SUCCESS;
    }

    /** Sets a value after {@link #checkPut} succeeded (its resolved fields are used). */
    private KvEntry doPut(long index, String key, byte[] value, KvReq req, boolean temp) {
        KvEntry e = resolvedEntry;
        long most = 0;
        long least = 0;
        long ttl = 0;
        long expireAt = 0;
        if (temp) {
            most = req.clientUuidMost();
            least = req.clientUuidLeast();
            ttl = req.ttlMillis();
            expireAt = logClockMillis + ttl;
        } else if (e != null && e.latest.isTemp()) {
            // a plain put by the owner changes the value and keeps the TTL
            KvVersion old = e.latest;
            most = old.ownerMost;
            least = old.ownerLeast;
            ttl = old.ttlMillis;
            expireAt = old.expireAtMillis;
        }
        if (e == null) {
            KvVersion v = new KvVersion(value, false, false, index, index, index, most, least, ttl, expireAt);
            e = tree.create(key, resolvedParent, v);
            watchManager.onCreated(e);
        } else {
            tree.putValue(e, value, index, most, least, ttl, expireAt);
        }
        if (temp) {
            ttlHeap.set(e, expireAt);
        }
        watchManager.onChanged(e);
        return e;
    }

    private KvResp failed(long index, KvCode c) {
        return KvResp.fail(c, index, failMessage);
    }

    // ---- the operations ----

    private KvResp put(long index, String key, byte[] value, KvReq req, boolean temp) {
        KvCode c = checkPut(key, value, req, temp);
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        KvEntry e = doPut(index, key, value, req, temp);
        // A plain put answers with the index alone (it is the node's new update index): the hot
        // path builds no node for the answer. putTemp returns the node, for its deadline.
        return temp ? KvResp.success(index, e.latest.toNodeWithoutValue(key)) : KvResp.success(index);
    }

    private KvResp batchPut(long index, KvReq req) {
        List<String> keys = req.keys();
        List<byte[]> values = req.values();
        if (keys.size() != values.size()) {
            return KvResp.fail(KvCode.INVALID_REQUEST, index, "batchPut has " + keys.size() + " keys and "
                    + values.size() + " values; send one value per key");
        }
        if (keys.size() > KvKeys.MAX_BATCH_KEYS) {
            return KvResp.fail(KvCode.BATCH_TOO_LARGE, index, "batchPut has " + keys.size() + " keys; at most "
                    + KvKeys.MAX_BATCH_KEYS + " are allowed in one batch");
        }
        // Puts never create directories nor change owners, so one key's check cannot depend on
        // another key of the batch: check all, then apply all.
        for (int i = 0; i < keys.size(); i++) {
            KvCode c = checkPut(keys.get(i), values.get(i), req, false);
            if (c != KvCode.SUCCESS) {
                return failed(index, c).failedPosition(i + 1);
            }
        }
        for (int i = 0; i < keys.size(); i++) {
            KvCode c = checkPut(keys.get(i), values.get(i), req, false);
            if (c != KvCode.SUCCESS) {
                ImpossibleStates.report("batchPut key " + keys.get(i) + " passed its check, then failed with " + c);
                continue;
            }
            doPut(index, keys.get(i), values.get(i), req, false);
        }
        return KvResp.success(index);
    }

    private KvCode checkRemove(String key, KvReq req, HashSet<KvEntry> removedInBatch,
                               HashMap<KvEntry, Integer> childrenRemovedInBatch) {
        KvCode c = checkKey(key);
        if (c != KvCode.SUCCESS) {
            return c;
        }
        KvEntry e = tree.live(key);
        if (e == null || removedInBatch != null && removedInBatch.contains(e)) {
            return fail(KvCode.NOT_FOUND, "'" + key + "' does not exist");
        }
        int children = e.childCount();
        if (childrenRemovedInBatch != null) {
            children -= childrenRemovedInBatch.getOrDefault(e, 0);
        }
        if (children > 0) {
            return fail(KvCode.DIR_NOT_EMPTY, "directory '" + key + "' has " + children
                    + " children; remove them first");
        }
        c = checkOwner(e, req);
        if (c != KvCode.SUCCESS) {
            return c;
        }
        resolvedEntry = e;
        return KvCode.SUCCESS;
    }

    private void doRemove(long index, KvEntry e) {
        ttlHeap.remove(e);
        tree.remove(e, index);
        watchManager.onChanged(e);
    }

    /** Removes a directory and everything under it, children first, in one entry. */
    private void removeSubtree(long index, KvEntry e) {
        while (e.children != null) { // the last child's removal drops the map
            removeSubtree(index, e.children.firstEntry().getValue());
        }
        doRemove(index, e);
    }

    private KvResp remove(long index, KvReq req) {
        KvCode c = checkRemove(req.key(), req, null, null);
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        doRemove(index, resolvedEntry);
        return KvResp.success(index);
    }

    private KvResp batchRemove(long index, KvReq req) {
        List<String> keys = req.keys();
        if (keys.size() > KvKeys.MAX_BATCH_KEYS) {
            return KvResp.fail(KvCode.BATCH_TOO_LARGE, index, "batchRemove has " + keys.size()
                    + " keys; at most " + KvKeys.MAX_BATCH_KEYS + " are allowed in one batch");
        }
        // Keys are removed in order, so a directory may follow its children: check against the
        // state the earlier keys of the batch leave.
        HashSet<KvEntry> removed = new HashSet<>();
        HashMap<KvEntry, Integer> childrenRemoved = new HashMap<>();
        KvEntry[] entries = new KvEntry[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            KvCode c = checkRemove(keys.get(i), req, removed, childrenRemoved);
            if (c != KvCode.SUCCESS) {
                return failed(index, c).failedPosition(i + 1);
            }
            entries[i] = resolvedEntry;
            removed.add(resolvedEntry);
            childrenRemoved.merge(resolvedEntry.parent, 1, Integer::sum);
        }
        for (KvEntry e : entries) {
            doRemove(index, e);
        }
        return KvResp.success(index);
    }

    private KvResp mkdir(long index, KvReq req, boolean temp) {
        String key = req.key();
        KvCode c = checkKey(key);
        if (c == KvCode.SUCCESS && temp) {
            c = checkTtl(req, true);
        }
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        KvEntry e = tree.live(key);
        if (e != null) {
            KvVersion v = e.latest;
            if (!v.dir) {
                return KvResp.fail(KvCode.NOT_A_DIR, index, "'" + key + "' is a value; remove it first to make"
                        + " a directory");
            }
            if (!temp) {
                return KvResp.success(index, v.toNode(key)); // already there: nothing changes
            }
            if (!v.isTemp()) {
                return KvResp.fail(KvCode.NOT_TEMP, index, "'" + key + "' is a permanent directory;"
                        + " makeTempDir cannot make it temporary");
            }
            if (!v.ownedBy(req.clientUuidMost(), req.clientUuidLeast())) {
                return KvResp.fail(KvCode.NOT_OWNER, index, "'" + key + "' is a temp directory owned by another"
                        + " client");
            }
            return KvResp.success(index, refreshTtl(index, e, req.ttlMillis()).toNode(key));
        }
        c = checkParent(key, req);
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        KvVersion v;
        if (temp) {
            long expireAt = logClockMillis + req.ttlMillis();
            v = new KvVersion(null, true, false, index, index, index, req.clientUuidMost(), req.clientUuidLeast(),
                    req.ttlMillis(), expireAt);
        } else {
            v = new KvVersion(null, true, false, index, index, index, 0, 0, 0, 0);
        }
        e = tree.create(key, resolvedParent, v);
        watchManager.onCreated(e);
        if (temp) {
            ttlHeap.set(e, v.expireAtMillis);
        }
        watchManager.onChanged(e);
        return KvResp.success(index, v.toNode(key));
    }

    /** A new version with only the TTL moved; the update index (what watchers and readers compare) stays. */
    private KvVersion refreshTtl(long index, KvEntry e, long ttlMillis) {
        KvVersion old = e.latest;
        long expireAt = logClockMillis + ttlMillis;
        KvVersion v = new KvVersion(old.shareValue(), old.dir, false, old.createIndex, old.updateIndex, index, old.ownerMost,
                old.ownerLeast, ttlMillis, expireAt);
        tree.update(e, v);
        ttlHeap.set(e, expireAt);
        return v;
    }

    private KvResp compareAndSet(long index, KvReq req) {
        String key = req.key();
        KvCode c = checkKey(key);
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        KvEntry e = tree.live(key);
        if (req.expectAbsent()) {
            if (e != null) {
                return KvResp.fail(KvCode.CAS_MISMATCH, index, "'" + key + "' exists; expected it absent");
            }
        } else {
            if (e == null) {
                return KvResp.fail(KvCode.CAS_MISMATCH, index, "'" + key + "' does not exist; expected a value");
            }
            if (e.latest.dir) {
                return KvResp.fail(KvCode.IS_A_DIR, index, "'" + key + "' is a directory; compareAndSet needs a value");
            }
            c = checkOwner(e, req);
            if (c != KvCode.SUCCESS) {
                return failed(index, c);
            }
            if (!Arrays.equals(e.latest.value, req.expectedValue())) {
                return KvResp.fail(KvCode.CAS_MISMATCH, index, "'" + key + "' holds another value than expected");
            }
        }
        return put(index, key, req.value(), req, false);
    }

    private KvResp updateTtl(long index, KvReq req) {
        String key = req.key();
        KvCode c = checkKey(key);
        if (c == KvCode.SUCCESS) {
            c = checkTtl(req, true);
        }
        if (c != KvCode.SUCCESS) {
            return failed(index, c);
        }
        KvEntry e = tree.live(key);
        if (e == null) {
            return KvResp.fail(KvCode.NOT_FOUND, index, "'" + key + "' does not exist (its TTL may have run out)");
        }
        if (!e.latest.isTemp()) {
            return KvResp.fail(KvCode.NOT_TEMP, index, "'" + key + "' is permanent; it has no TTL to update");
        }
        if (!e.latest.ownedBy(req.clientUuidMost(), req.clientUuidLeast())) {
            return KvResp.fail(KvCode.NOT_OWNER, index, "'" + key + "' is a temp node owned by another client");
        }
        return KvResp.success(index, refreshTtl(index, e, req.ttlMillis()).toNodeWithoutValue(key));
    }

    private KvResp expire(long index, KvReq req) {
        String key = req.key();
        KvEntry e = key == null || key.isEmpty() ? null : tree.live(key);
        if (e == null || !e.latest.isTemp() || e.latest.createIndex != req.expectIndex()
                || e.latest.expireAtMillis > logClockMillis) {
            return KvResp.fail(KvCode.STALE_EXPIRE, index, "'" + key + "' was removed, re-created or renewed since"
                    + " its expiry was proposed");
        }
        removeSubtree(index, e);
        return KvResp.success(index);
    }

    // =====================================================================================
    // reads (on the apply thread, after the raft read kind said the state is current enough)
    // =====================================================================================

    /** Answers GET, BATCH_GET and LIST; anything else is INVALID_REQUEST. */
    public KvResp read(KvReq req) {
        KvOp op = req.op();
        if (op == KvOp.GET) {
            return get(req.key());
        }
        if (op == KvOp.BATCH_GET) {
            return batchGet(req.keys());
        }
        if (op == KvOp.LIST) {
            String dir = req.key() == null ? KvKeys.ROOT : req.key();
            return req.isPaged() ? listPage(dir, req.startAfter(), req.limit()) : list(dir);
        }
        return KvResp.fail(KvCode.INVALID_REQUEST, lastAppliedIndex, "op " + (op == null ? "#" + req.opNumber() : op)
                + " is not a read");
    }

    /** The node, or a node with create index 0 when the key does not exist (absence is not an error). */
    public KvResp get(String key) {
        KvCode c = KvKeys.check(key);
        if (c != KvCode.SUCCESS) {
            return KvResp.fail(c, lastAppliedIndex, KvKeys.explain(c, key));
        }
        return KvResp.success(lastAppliedIndex, nodeOf(key));
    }

    /** The current state of a key (absent: create index 0). */
    public KvNode nodeOf(String key) {
        KvEntry e = tree.live(key);
        return e == null ? KvNode.absent(key) : e.latest.toNode(key);
    }

    public KvResp batchGet(List<String> keys) {
        if (keys.size() > KvKeys.MAX_BATCH_KEYS) {
            return KvResp.fail(KvCode.BATCH_TOO_LARGE, lastAppliedIndex, "batchGet has " + keys.size()
                    + " keys; at most " + KvKeys.MAX_BATCH_KEYS + " are allowed in one batch");
        }
        List<KvNode> nodes = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            KvCode c = KvKeys.check(key);
            if (c != KvCode.SUCCESS) {
                return KvResp.fail(c, lastAppliedIndex, KvKeys.explain(c, key)).failedPosition(i + 1);
            }
            nodes.add(nodeOf(key));
        }
        long bytes = answerBytes(nodes);
        if (bytes > KvKeys.MAX_ANSWER_BYTES) {
            return KvResp.fail(KvCode.ANSWER_TOO_LARGE, lastAppliedIndex, "the " + keys.size() + " nodes of this batchGet"
                    + " take " + bytes + " bytes, over the " + KvKeys.MAX_ANSWER_BYTES + " one answer may carry; get"
                    + " fewer keys at a time");
        }
        return KvResp.success(lastAppliedIndex).nodes(nodes);
    }

    /** What a list of nodes adds to an answer's encoding (each a length-delimited field). */
    private static long answerBytes(List<KvNode> nodes) {
        long bytes = 0;
        for (int i = 0, n = nodes.size(); i < n; i++) {
            bytes += nodeFieldBytes(nodes.get(i));
        }
        return bytes;
    }

    private static int nodeFieldBytes(KvNode node) {
        int len = node.encodedSize();
        return 1 + PbUtil.sizeOfUnsignedVarint32(len) + len;
    }

    /** The children of a directory ("" is the root), sorted by key, values included. */
    public KvResp list(String dirKey) {
        KvResp refused = checkListable(dirKey);
        if (refused != null) {
            return refused;
        }
        KvEntry e = tree.live(dirKey);
        // children are kept sorted by key: one pass, refused as soon as the answer would be too large
        List<KvNode> nodes = new ArrayList<>(Math.min(e.childCount(), 1 << 16));
        long bytes = 0;
        for (KvEntry child : KvTree.sortedChildren(e)) {
            KvNode node = child.latest.toNode(child.key);
            bytes += nodeFieldBytes(node);
            if (bytes > KvKeys.MAX_ANSWER_BYTES) {
                return KvResp.fail(KvCode.ANSWER_TOO_LARGE, lastAppliedIndex, "the " + e.childCount()
                        + " children of directory '" + dirKey + "' take more than the " + KvKeys.MAX_ANSWER_BYTES
                        + " bytes one answer may carry; list it in pages (listPage)");
            }
            nodes.add(node);
        }
        return KvResp.success(lastAppliedIndex).nodes(nodes);
    }

    /** Why {@code dirKey} cannot be listed (a bad key, absent, a value), or null when it can. */
    private KvResp checkListable(String dirKey) {
        KvCode c = KvKeys.checkDirOrRoot(dirKey);
        if (c != KvCode.SUCCESS) {
            return KvResp.fail(c, lastAppliedIndex, KvKeys.explain(c, dirKey));
        }
        KvEntry e = tree.live(dirKey);
        if (e == null) {
            return KvResp.fail(KvCode.NOT_FOUND, lastAppliedIndex, "directory '" + dirKey + "' does not exist");
        }
        if (!e.latest.dir) {
            return KvResp.fail(KvCode.NOT_A_DIR, lastAppliedIndex, "'" + dirKey + "' is a value; list needs a directory");
        }
        return null;
    }

    /**
     * One page of a directory's children, by key: those after {@code startAfter} (a full key; null:
     * from the first; it need not exist), at most {@code limit} (0: {@link KvKeys#DEFAULT_LIST_PAGE_NODES}),
     * and no more than {@link KvKeys#MAX_LIST_PAGE_BYTES} of nodes unless the first alone is larger.
     * {@link KvResp#more()} says whether children were left after the last one. Pages read at
     * different indexes: a child added or removed between two pages shows in the later page or not
     * at all, while every child that exists throughout is listed exactly once.
     */
    public KvResp listPage(String dirKey, String startAfter, int limit) {
        if (limit < 0) {
            return KvResp.fail(KvCode.INVALID_REQUEST, lastAppliedIndex, "a list limit of " + limit
                    + " is negative; give 0 for no limit");
        }
        KvResp refused = checkListable(dirKey);
        if (refused != null) {
            return refused;
        }
        KvEntry e = tree.live(dirKey);
        int maxNodes = limit == 0 ? KvKeys.DEFAULT_LIST_PAGE_NODES : limit;
        // a seek to the first child after the cursor, then one step per child: a page does not
        // visit the children before it, so paging through a directory costs in proportion to its size
        Iterator<KvEntry> after = KvTree.childrenAfter(e, startAfter);
        List<KvNode> nodes = new ArrayList<>(Math.min(maxNodes, e.childCount()));
        long bytes = 0;
        boolean more = false;
        while (after.hasNext()) {
            if (nodes.size() == maxNodes) {
                more = true;
                break;
            }
            KvEntry child = after.next();
            KvNode node = child.latest.toNode(child.key);
            bytes += nodeFieldBytes(node);
            if (bytes > KvKeys.MAX_LIST_PAGE_BYTES && !nodes.isEmpty()) {
                more = true; // this child starts the next page
                break;
            }
            nodes.add(node);
        }
        return KvResp.success(lastAppliedIndex).nodes(nodes).more(more);
    }

    // =====================================================================================
    // snapshots
    // =====================================================================================

    /**
     * Opens a snapshot of the state at {@link #lastAppliedIndex()}. Applies may go on while it is
     * read, on the same thread, between calls to {@link KvSnapshot#nextChunk()}; close it when done.
     */
    public KvSnapshot openSnapshot() {
        return new KvSnapshot(this, lastAppliedIndex, logClockMillis);
    }

    /** Starts replacing the whole state with a snapshot's (feed every chunk, then finish). */
    public KvSnapshotRestorer beginRestore() {
        if (tree.openSnapshotCount() > 0) {
            throw new IllegalStateException("close the open snapshots before restoring another state");
        }
        return new KvSnapshotRestorer(this);
    }

    /** Drops everything; for a restore. */
    void clearForRestore() {
        tree.clearAll();
        ttlHeap.clear();
        leaseHeap.clear();
        locks.clear();
        sessions.clear();
        watchManager.onStateReplaced();
        lastAppliedIndex = 0;
        logClockMillis = 0;
    }

    void restoreHeader(long snapshotIndex, long logClockMillis) {
        this.lastAppliedIndex = snapshotIndex;
        this.logClockMillis = logClockMillis;
        this.lastAppliedTerm = 0;
    }

    /** The raft term of a restored snapshot's last entry (raft's snapshot metadata has it). */
    void restoreTerm(int term) {
        this.lastAppliedTerm = term;
    }

    /** Adds a node from a snapshot: its parent must have come before it. */
    void restoreNode(KvNode n) {
        String key = n.key();
        KvCode c = KvKeys.check(key);
        if (c != KvCode.SUCCESS) {
            throw new IllegalStateException("snapshot holds an invalid key '" + key + "': " + c);
        }
        if (tree.lookup(key) != null) {
            throw new IllegalStateException("snapshot holds key '" + key + "' twice");
        }
        KvEntry parent = tree.live(KvKeys.parentOf(key));
        if (parent == null || !parent.latest.dir) {
            throw new IllegalStateException("snapshot holds '" + key + "' before (or without) its parent directory");
        }
        KvVersion v = new KvVersion(n.isDir() ? null : n.value(), n.isDir(), false, n.createIndex(), n.updateIndex(),
                Math.max(n.createIndex(), n.updateIndex()), n.ownerUuidMost(), n.ownerUuidLeast(), n.ttlMillis(),
                n.expireAtMillis());
        KvEntry e = tree.create(key, parent, v);
        if (v.isTemp()) {
            ttlHeap.set(e, v.expireAtMillis);
        }
    }

    void finishRestore() {
        watchManager.onStateReplaced();
    }

    // =====================================================================================
    // state comparison (tests, diagnostics)
    // =====================================================================================

    /**
     * A canonical text of the whole replicated state (nodes by key, locks by key, live sessions by
     * id, the applied index, term and log clock): two replicas that applied the same log, or one
     * restored from a snapshot and replaying the rest, give equal texts. For tests and diagnostics.
     */
    public String describeState() {
        return KvStateText.of(this);
    }
}
