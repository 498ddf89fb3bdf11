package io.poyang.dtkv;

/** What a {@link KvReq} asks for (field 1, enum {@code KvOp} in docs/proto/dtkv.proto). */
public enum KvOp {
    PUT(1, true),
    BATCH_PUT(2, true),
    REMOVE(3, true),
    BATCH_REMOVE(4, true),
    MKDIR(5, true),
    COMPARE_AND_SET(6, true),
    PUT_TEMP(7, true),
    MAKE_TEMP_DIR(8, true),
    UPDATE_TTL(9, true),
    /** Proposed by the leader only, when a temp node's TTL ran out. */
    EXPIRE(10, true),
    TRY_LOCK(11, true),
    UNLOCK(12, true),
    UPDATE_LEASE(13, true),
    /** Proposed by the leader only, when a lock's lease ran out. */
    EXPIRE_LOCK(14, true),
    GET(20, false),
    BATCH_GET(21, false),
    LIST(22, false);

    private static final KvOp[] BY_NUMBER = new KvOp[32];

    static {
        for (KvOp op : values()) {
            BY_NUMBER[op.number] = op;
        }
    }

    private final int number;
    private final boolean write;

    KvOp(int number, boolean write) {
        this.number = number;
        this.write = write;
    }

    public int number() {
        return number;
    }

    /** Writes go through the raft log (one entry each); reads never do. */
    public boolean isWrite() {
        return write;
    }

    /** The op with this number, or null for one this version does not know. */
    public static KvOp of(int number) {
        return number > 0 && number < BY_NUMBER.length ? BY_NUMBER[number] : null;
    }
}
