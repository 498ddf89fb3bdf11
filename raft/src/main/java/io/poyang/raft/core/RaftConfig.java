package io.poyang.raft.core;

import io.poyang.common.TimeSource;
import io.poyang.raft.store.FileIo;
import io.poyang.raft.store.LogStoreConfig;

/**
 * Timing, bounds and caps of the raft groups of a server. Setters return this; the defaults suit
 * production on a LAN. Tests shorten the timeouts.
 */
public final class RaftConfig {

    private long electionTimeoutMillis = 1000;
    private long heartbeatIntervalMillis = 150;
    private long replicationTimeoutMillis = 5000;
    private boolean syncForce = true;
    private int maxPendingWrites = 20_000;
    private long maxPendingWriteBytes = 64L << 20;
    private int maxAppendItems = 2048;
    private int maxAppendBytes = 1 << 20;
    private int maxInflightItems = 50_000;
    private long maxInflightBytes = 32L << 20;
    private int tailCacheItems = 20_000;
    private long tailCacheBytes = 32L << 20;
    private int maxApplyBatch = 1024;
    private long snapshotEveryEntries = 1_000_000;
    private long snapshotIntervalMillis = 3_600_000;
    private int snapshotsToKeep = 2;
    private int snapshotChunkBytes = 1 << 20;
    private long segmentBytes = 64L << 20;
    private int recycledSegments = LogStoreConfig.DEFAULT_RECYCLED_SEGMENTS;
    private long leaseDriftMarginMillis = -1;
    private int sessionWindow = 64;
    private long sessionExpiryMillis = 3_600_000;
    private TimeSource leaseClock;
    private FileIo logFileIo = FileIo.DEFAULT;

    public long electionTimeoutMillis() {
        return electionTimeoutMillis;
    }

    /**
     * How long a follower waits without hearing from a leader before it starts an election (each
     * round waits a random time between this and twice this), how long a leader keeps leading
     * without hearing from a majority, and how long a follower that heard from a leader refuses
     * to vote for others. Default 1000 ms.
     */
    public RaftConfig electionTimeoutMillis(long millis) {
        check(millis >= 10, "electionTimeoutMillis must be at least 10: " + millis);
        this.electionTimeoutMillis = millis;
        return this;
    }

    public long heartbeatIntervalMillis() {
        return heartbeatIntervalMillis;
    }

    /** How often an idle leader tells each follower it is alive (default 150 ms; well below the election timeout). */
    public RaftConfig heartbeatIntervalMillis(long millis) {
        check(millis >= 1, "heartbeatIntervalMillis must be positive: " + millis);
        this.heartbeatIntervalMillis = millis;
        return this;
    }

    public long replicationTimeoutMillis() {
        return replicationTimeoutMillis;
    }

    /** How long a leader waits for a follower to answer an append before it probes again (default 5000 ms). */
    public RaftConfig replicationTimeoutMillis(long millis) {
        check(millis >= 1, "replicationTimeoutMillis must be positive: " + millis);
        this.replicationTimeoutMillis = millis;
        return this;
    }

    public boolean syncForce() {
        return syncForce;
    }

    /**
     * true (default): an entry counts as persisted (for commit) once fsynced. false: once written,
     * before the fsync — safe unless a majority of the group loses power at the same time.
     */
    public RaftConfig syncForce(boolean syncForce) {
        this.syncForce = syncForce;
        return this;
    }

    public int maxPendingWrites() {
        return maxPendingWrites;
    }

    public long maxPendingWriteBytes() {
        return maxPendingWriteBytes;
    }

    /**
     * Writes a group holds from admission to answer (queued, in the log, not yet applied), by count
     * and by body bytes; past either bound new writes get FLOW_CONTROL at once. Default 20,000 and
     * 64 MiB.
     */
    public RaftConfig maxPendingWrites(int count, long bytes) {
        check(count >= 1 && count < (1 << 23), "maxPendingWrites must be in 1..8388607: " + count);
        check(bytes >= 1 && bytes < (1L << 40), "maxPendingWriteBytes must be in 1..2^40: " + bytes);
        this.maxPendingWrites = count;
        this.maxPendingWriteBytes = bytes;
        return this;
    }

    public int maxAppendItems() {
        return maxAppendItems;
    }

    public int maxAppendBytes() {
        return maxAppendBytes;
    }

    /** Entries (and their bytes) in one AppendEntries request at most (default 2048 and 1 MiB). */
    public RaftConfig maxAppend(int items, int bytes) {
        check(items >= 1, "maxAppendItems must be positive: " + items);
        check(bytes >= 1024 && bytes <= (6 << 20), "maxAppendBytes must be between 1 KiB and 6 MiB: " + bytes);
        this.maxAppendItems = items;
        this.maxAppendBytes = bytes;
        return this;
    }

    public int maxInflightItems() {
        return maxInflightItems;
    }

    public long maxInflightBytes() {
        return maxInflightBytes;
    }

    /**
     * Entries (and bytes) sent to one follower and not yet acknowledged, at most (default 50,000 and
     * 32 MiB): the depth of the replication pipeline.
     */
    public RaftConfig maxInflight(int items, long bytes) {
        check(items >= 1, "maxInflightItems must be positive: " + items);
        check(bytes >= 1024, "maxInflightBytes must be at least 1 KiB: " + bytes);
        this.maxInflightItems = items;
        this.maxInflightBytes = bytes;
        return this;
    }

    public int tailCacheItems() {
        return tailCacheItems;
    }

    public long tailCacheBytes() {
        return tailCacheBytes;
    }

    /**
     * Applied entries kept in memory for followers that are a little behind (default 20,000 and
     * 32 MiB); older ones are read from disk. Entries not yet applied are always kept.
     */
    public RaftConfig tailCache(int items, long bytes) {
        check(items >= 0 && bytes >= 0, "tail cache bounds must not be negative");
        this.tailCacheItems = items;
        this.tailCacheBytes = bytes;
        return this;
    }

    public int maxApplyBatch() {
        return maxApplyBatch;
    }

    /** Entries handed to the state machine in one apply call at most (default 1024). */
    public RaftConfig maxApplyBatch(int entries) {
        check(entries >= 1, "maxApplyBatch must be positive: " + entries);
        this.maxApplyBatch = entries;
        return this;
    }

    public long snapshotEveryEntries() {
        return snapshotEveryEntries;
    }

    public long snapshotIntervalMillis() {
        return snapshotIntervalMillis;
    }

    /**
     * Take a snapshot after this many entries were applied since the last one, or this long after
     * it (when anything was applied); 0 turns a trigger off. Default 1,000,000 entries and one hour.
     */
    public RaftConfig snapshotEvery(long entries, long millis) {
        check(entries >= 0 && millis >= 0, "snapshot triggers must not be negative");
        this.snapshotEveryEntries = entries;
        this.snapshotIntervalMillis = millis;
        return this;
    }

    public int snapshotsToKeep() {
        return snapshotsToKeep;
    }

    /** Complete snapshots kept on disk (default 2); the log is deleted below the oldest. */
    public RaftConfig snapshotsToKeep(int count) {
        check(count >= 1, "snapshotsToKeep must be at least 1: " + count);
        this.snapshotsToKeep = count;
        return this;
    }

    public int snapshotChunkBytes() {
        return snapshotChunkBytes;
    }

    /** Bytes per InstallSnapshot request (default 1 MiB). */
    public RaftConfig snapshotChunkBytes(int bytes) {
        check(bytes >= 1024 && bytes <= (4 << 20), "snapshotChunkBytes must be between 1 KiB and 4 MiB: " + bytes);
        this.snapshotChunkBytes = bytes;
        return this;
    }

    public long segmentBytes() {
        return segmentBytes;
    }

    /** Size of each preallocated log segment file (default 64 MiB). */
    public RaftConfig segmentBytes(long bytes) {
        check(bytes >= 4096, "segmentBytes must be at least 4 KiB: " + bytes);
        this.segmentBytes = bytes;
        return this;
    }

    public int recycledSegments() {
        return recycledSegments;
    }

    /**
     * Log segment files freed by compaction kept to become the next segments instead of being
     * deleted (default 4; 0 deletes them): appends over written blocks cost less than into new
     * sparse files. See {@link io.poyang.raft.store.LogStoreConfig#recycledSegments(int)}.
     */
    public RaftConfig recycledSegments(int count) {
        check(count >= 0 && count <= 1024, "recycledSegments must be between 0 and 1024: " + count);
        this.recycledSegments = count;
        return this;
    }

    /**
     * How much shorter than the election timeout the leader's read lease is, for the difference of
     * clock rates between nodes (and the dispatchers' cached clocks). Default: a tenth of the
     * election timeout, at least 1 ms.
     */
    public long leaseDriftMarginMillis() {
        return leaseDriftMarginMillis >= 0 ? leaseDriftMarginMillis : Math.max(1, electionTimeoutMillis / 10);
    }

    public RaftConfig leaseDriftMarginMillis(long millis) {
        check(millis >= 0, "leaseDriftMarginMillis must not be negative: " + millis);
        this.leaseDriftMarginMillis = millis;
        return this;
    }

    /** The clock of read leases; null (the default): the system's monotonic clock. */
    public TimeSource leaseClock() {
        return leaseClock;
    }

    /**
     * Sets the clock that stamps requests for the read lease and judges it (tests pass a
     * {@link io.poyang.common.ManualTimeSource} to end a lease at a moment they choose). Elections
     * and heartbeats keep the system clock.
     */
    public RaftConfig leaseClock(TimeSource clock) {
        this.leaseClock = clock;
        return this;
    }

    /** Results kept per exactly-once session: a retry of one of its last this-many writes gets the first result. */
    public int sessionWindow() {
        return sessionWindow;
    }

    public RaftConfig sessionWindow(int writes) {
        check(writes >= 1 && writes <= 65_536, "sessionWindow must be 1..65536: " + writes);
        this.sessionWindow = writes;
        return this;
    }

    /** How long an exactly-once session lives after its last write (on the entries' timestamps); default 1 h. */
    public long sessionExpiryMillis() {
        return sessionExpiryMillis;
    }

    public RaftConfig sessionExpiryMillis(long millis) {
        check(millis >= 1, "sessionExpiryMillis must be positive: " + millis);
        this.sessionExpiryMillis = millis;
        return this;
    }

    /** The file-system seam of the groups' log stores (log, index and status files); default: plain file channels. */
    public FileIo logFileIo() {
        return logFileIo;
    }

    /**
     * Replaces the log stores' file access; tests wrap {@link FileIo#DEFAULT} to fail chosen writes,
     * fsyncs or renames (a full or failing disk) on one node of an in-process cluster.
     */
    public RaftConfig logFileIo(FileIo io) {
        if (io == null) {
            throw new NullPointerException("logFileIo");
        }
        this.logFileIo = io;
        return this;
    }

    /** Throws when the settings contradict each other. */
    public void validate() {
        check(leaseDriftMarginMillis() < electionTimeoutMillis, "leaseDriftMarginMillis (" + leaseDriftMarginMillis()
                + ") must be below electionTimeoutMillis (" + electionTimeoutMillis + ")");
        check(heartbeatIntervalMillis < electionTimeoutMillis, "heartbeatIntervalMillis (" + heartbeatIntervalMillis
                + ") must be below electionTimeoutMillis (" + electionTimeoutMillis + ")");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
