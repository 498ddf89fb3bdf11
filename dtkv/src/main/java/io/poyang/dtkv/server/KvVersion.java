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

    /** Read in place only; an array that leaves this version goes through {@link #shareValue}. */
    byte[] value;
    /**
     * {@link #value} is a copy this version made for itself, and nothing else holds it (it was not
     * handed out since): a put of a value of the same length copies its bytes into it. See
     * {@link #overwriteValue}.
     */
    private boolean valueOwned;
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
     *
     * <p>The value's bytes are copied into the array this version owns when it has one of the same
     * length, rather than the new array stored. A key's version lives long (it is in the old
     * generation after a few collections), and a reference to a new array stored into an old object
     * dirties a card that G1's refinement threads must scan: with the keys' versions old, that was
     * about one card per put, and it cost 0.1-0.15 of a core at 85,000 puts/s on three nodes
     * (docs/benchmarks.md, twelfth session). A copy of the bytes stores no reference. The array
     * given never becomes this version's: it is the request's, which the raft log's tail cache may
     * still hold, so a version that owns none takes a copy of it (once; later puts copy into that).
     */
    void overwriteValue(byte[] value, long index, long ownerMost, long ownerLeast, long ttlMillis, long expireAtMillis) {
        byte[] current = this.value;
        if (value == null) {
            this.value = null;
            valueOwned = false;
        } else if (valueOwned && current.length == value.length) {
            System.arraycopy(value, 0, current, 0, value.length);
        } else {
            this.value = value.clone();
            valueOwned = true;
        }
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
        return new KvNode(key, dir ? null : shareValue(), dir, createIndex, updateIndex, ownerMost, ownerLeast, ttlMillis,
                expireAtMillis);
    }

    /**
     * The value array, for a holder outside this version (an answer, a watch event, a snapshot
     * chunk, another version): from now on a put stores a new array rather than overwrite this one.
     */
    byte[] shareValue() {
        valueOwned = false;
        return value;
    }
}
