package io.poyang.dtkv.server;

import io.poyang.dtkv.KvNode;

/**
 * The state of one key from one raft index on: a value or a directory, its create and update
 * indexes and, for temp nodes, owner and TTL. While a snapshot is open a version is never changed
 * (later applies install newer ones in front of it, so the snapshot keeps reading it); with none
 * open, nothing can read an older state any more, and a put over a value overwrites the current
 * version in place ({@link #overwriteValue}) instead of allocating a new one — the hot path of a
 * put. Only the apply thread touches versions.
 *
 * <p>{@link #modIndex} is the index of the entry that installed this version (a put, or an
 * updateTtl that changed only the TTL); a snapshot at index S sees, for each key, the newest
 * version with {@code modIndex <= S}. A {@link #removed} version is a tombstone: the key did not
 * exist from {@code modIndex} on.
 */
final class KvVersion {

    byte[] value;
    final boolean dir;
    final boolean removed;
    final long createIndex;
    long updateIndex;
    long modIndex;
    long ownerMost;
    long ownerLeast;
    /** 0 for permanent nodes. */
    long ttlMillis;
    long expireAtMillis;
    /** The version an open snapshot may still need, or null. Trimmed when snapshots close. */
    KvVersion prev;

    KvVersion(byte[] value, boolean dir, boolean removed, long createIndex, long updateIndex, long modIndex,
              long ownerMost, long ownerLeast, long ttlMillis, long expireAtMillis) {
        this.value = value;
        this.dir = dir;
        this.removed = removed;
        this.createIndex = createIndex;
        this.updateIndex = updateIndex;
        this.modIndex = modIndex;
        this.ownerMost = ownerMost;
        this.ownerLeast = ownerLeast;
        this.ttlMillis = ttlMillis;
        this.expireAtMillis = expireAtMillis;
    }

    /**
     * A put over this value version at {@code index}, in place: its create index stays. Only when
     * no snapshot is open ({@link KvTree#putValue} decides).
     */
    void overwriteValue(byte[] value, long index, long ownerMost, long ownerLeast, long ttlMillis, long expireAtMillis) {
        this.value = value;
        this.updateIndex = index;
        this.modIndex = index;
        this.ownerMost = ownerMost;
        this.ownerLeast = ownerLeast;
        this.ttlMillis = ttlMillis;
        this.expireAtMillis = expireAtMillis;
    }

    static KvVersion tombstone(long modIndex) {
        return new KvVersion(null, false, true, 0, 0, modIndex, 0, 0, 0, 0);
    }

    boolean isTemp() {
        return ttlMillis != 0;
    }

    boolean ownedBy(long most, long least) {
        return ownerMost == most && ownerLeast == least;
    }

    /** The newest version in this chain visible at {@code snapshotIndex}, or null. */
    KvVersion visibleAt(long snapshotIndex) {
        KvVersion v = this;
        while (v != null && v.modIndex > snapshotIndex) {
            v = v.prev;
        }
        return v;
    }

    /**
     * The node without its value: the answer a session records for PUT_TEMP and UPDATE_TTL. A
     * recorded answer stays on every replica and in every snapshot until the client acknowledges it,
     * and the client wants only its index: with the value (up to 4 MiB) a few dozen unacknowledged
     * temp writes would make one session record larger than a snapshot chunk may be.
     */
    KvNode toNodeWithoutValue(String key) {
        return new KvNode(key, null, dir, createIndex, updateIndex, ownerMost, ownerLeast, ttlMillis, expireAtMillis);
    }

    KvNode toNode(String key) {
        return new KvNode(key, dir ? null : value, dir, createIndex, updateIndex, ownerMost, ownerLeast, ttlMillis,
                expireAtMillis);
    }
}
