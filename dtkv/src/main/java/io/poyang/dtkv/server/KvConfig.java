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
}
