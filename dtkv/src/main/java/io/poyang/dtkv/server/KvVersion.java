package io.poyang.dtkv.server;

import io.poyang.dtkv.KvNode;

/**
 * The state of one key from one raft index on: a value or a directory, its create and update
 * indexes and, for temp nodes, owner and TTL. Immutable except for {@link #prev}, so an open
 * snapshot can keep reading a version while later applies install newer ones.
 *
 * <p>{@link #modIndex} is the index of the entry that installed this version (a put, or an
 * updateTtl that changed only the TTL); a snapshot at index S sees, for each key, the newest
 * version with {@code modIndex <= S}. A {@link #removed} version is a tombstone: the key did not
 * exist from {@code modIndex} on.
 */
final class KvVersion {

    final byte[] value;
    final boolean dir;
    final boolean removed;
    final long createIndex;
    final long updateIndex;
    final long modIndex;
    final long ownerMost;
    final long ownerLeast;
    /** 0 for permanent nodes. */
    final long ttlMillis;
    final long expireAtMillis;
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

    KvNode toNode(String key) {
        return new KvNode(key, dir ? null : value, dir, createIndex, updateIndex, ownerMost, ownerLeast, ttlMillis,
                expireAtMillis);
    }
}
