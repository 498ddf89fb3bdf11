package io.poyang.dtkv.server;

/**
 * Settings of a DtKV state machine. The "replicated" ones change what applying an entry does, so
 * every replica of a group must use the same values (they belong in the group's configuration,
 * not in a node's); the "local" ones only change what one node does.
 */
public final class KvConfig {

    /** Replicated: a client session unused this long (log clock) is forgotten (the client's next write starts it again; see KvStore). */
    public long sessionIdleMillis = 3600_000L;
    /** Replicated: sessions are swept every time the log clock crosses a multiple of this. */
    public long sessionSweepIntervalMillis = 60_000L;
    /** Replicated: most unacknowledged requests one session may have (SESSION_WINDOW_FULL beyond). */
    public int sessionWindowMax = 65536;
    /** Local: the raft group id put in pushed events. */
    public int groupId;
    /** Local (leader): how long a proposed expiry may stay unapplied before it is proposed again. */
    public long expireRetryMillis = 3000;
    /** Local: the target size of one snapshot chunk's node list, in encoded bytes. */
    public int snapshotChunkBytes = 1 << 20;
    /** Local: most events in one watch notification (the rest follow in the next one). */
    public int maxEventsPerNotify = 1000;
    /** Local: a watch notification stops taking events past this many encoded bytes (it always takes one). */
    public int maxNotifyBytes = 2 << 20;
    /**
     * Local: most keys and directories one connection may watch in one group (TOO_MANY_WATCHES
     * beyond). Each costs the node memory for as long as the connection lasts; a directory watch
     * covers any number of keys under it for the price of one.
     */
    public int maxWatchesPerConnection = 100_000;

    /**
     * Checks the settings before a state machine uses them: a zero sweep interval would fail every
     * apply on every replica, and a chunk size of zero would write empty snapshot chunks forever.
     *
     * @throws IllegalArgumentException naming the first setting out of range
     */
    public void validate() {
        positive("sessionIdleMillis", sessionIdleMillis);
        positive("sessionSweepIntervalMillis", sessionSweepIntervalMillis);
        positive("sessionWindowMax", sessionWindowMax);
        positive("expireRetryMillis", expireRetryMillis);
        positive("maxEventsPerNotify", maxEventsPerNotify);
        positive("maxNotifyBytes", maxNotifyBytes);
        positive("maxWatchesPerConnection", maxWatchesPerConnection);
        if (snapshotChunkBytes <= 0 || snapshotChunkBytes > MAX_SNAPSHOT_CHUNK_TARGET_BYTES) {
            throw new IllegalArgumentException("KvConfig.snapshotChunkBytes must be 1.." + MAX_SNAPSHOT_CHUNK_TARGET_BYTES
                    + ", got " + snapshotChunkBytes);
        }
    }

    /** The largest snapshotChunkBytes: a chunk may exceed it by one node or answer, and stays readable. */
    static final int MAX_SNAPSHOT_CHUNK_TARGET_BYTES = 64 << 20;

    private static void positive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException("KvConfig." + name + " must be positive, got " + value);
        }
    }
}
