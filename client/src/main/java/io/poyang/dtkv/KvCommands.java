package io.poyang.dtkv;

/**
 * DtKV's command numbers on a node's service port (300-399; docs/proto/dtkv.proto). Shared by the
 * server's processors and KvClient.
 */
public final class KvCommands {

    /** KvReq (a write op) → KvResp; answered once the entry is applied. BIZ_ERROR carries the KvCode. */
    public static final int KV_WRITE = 301;
    /** KvReq (GET, BATCH_GET, LIST) → KvResp, through a raft read kind. */
    public static final int KV_READ = 302;
    /** KvWatchReq → KvResp (SUCCESS, or INVALID_KEY with the failed position). */
    public static final int KV_WATCH = 303;
    /** Server → client request: KvWatchNotify → empty answer (the client's acknowledgement). */
    public static final int KV_WATCH_NOTIFY = 304;
    /** Server → client request: KvLockEvent → empty answer. */
    public static final int KV_LOCK_EVENT = 305;

    /** The bizType of DtKV log entries (RAFT_WRITE of a KvReq uses it too). */
    public static final int KV_BIZ_TYPE = 0;

    private KvCommands() {
    }
}
