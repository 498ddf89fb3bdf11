package io.poyang.dtkv;

/**
 * The outcome of a DtKV operation: a stable number (field {@code code} of {@link KvResp}, and the
 * packet's {@code biz_code} when a request fails) and a name. Numbers are never reused; new codes are
 * added at the end. The table in {@code docs/dtkv.md} is generated from the same meanings.
 */
public enum KvCode {

    /** The operation took effect (writes) or found what it read. */
    SUCCESS(0, "the operation succeeded"),
    /** The key (or lock) does not exist. */
    NOT_FOUND(1, "the key does not exist"),
    /** The key breaks the key rules (empty, empty segment, leading or trailing dot, control character, too deep). */
    INVALID_KEY(2, "the key breaks the key rules (empty segment, leading/trailing dot, control character, half of a surrogate pair, too many segments)"),
    /** The key is longer than {@link KvKeys#MAX_KEY_BYTES} bytes of UTF-8. */
    KEY_TOO_LONG(3, "the key is longer than 8192 bytes of UTF-8"),
    /** The value is larger than {@link KvKeys#MAX_VALUE_BYTES}. */
    VALUE_TOO_LARGE(4, "the value is larger than 4 MiB"),
    /** The parent directory of the key does not exist: create it with mkdir first. */
    PARENT_NOT_FOUND(5, "the parent directory does not exist; mkdir it first"),
    /** The parent of the key is a value, not a directory. */
    PARENT_NOT_DIR(6, "the parent of the key is a value, not a directory"),
    /** A value operation (put, cas, putTemp) names a directory. */
    IS_A_DIR(7, "the key is a directory; the operation needs a value"),
    /** A directory operation (mkdir, makeTempDir, list) names a value. */
    NOT_A_DIR(8, "the key is a value; the operation needs a directory"),
    /** A directory that still has children cannot be removed. */
    DIR_NOT_EMPTY(9, "the directory has children; remove them first"),
    /** compareAndSet found a different value (or a value where absence was expected, or none). */
    CAS_MISMATCH(10, "the current value is not the expected one"),
    /** updateTtl names a permanent node, or putTemp/makeTempDir would turn a permanent node into a temp one. */
    NOT_TEMP(11, "the node is permanent; TTL operations need a temp node"),
    /** The node is a temp node (or lies in a temp directory) owned by another client. */
    NOT_OWNER(12, "the node belongs to another client's temp node or temp directory"),
    /** A TTL, lease or wait time is outside its allowed range. */
    INVALID_TTL(13, "the TTL, lease or wait time is out of range (TTL and lease 1 ms to 30 days, wait 0 to 1 day)"),
    /** unlock or updateLease by a client that neither holds the lock nor waits for it. */
    LOCK_NOT_HELD(14, "this client does not hold the lock"),
    /** updateLease came after the lease had run out: the lock is lost and may be held by another client. */
    LEASE_EXPIRED(15, "the lease ran out before it was renewed; the lock was released"),
    /** The request lacks a field its operation needs, or its fields disagree (keys and values of different lengths). */
    INVALID_REQUEST(16, "the request is malformed: a field its operation needs is missing or inconsistent"),
    /** An expiry proposal lost a race: the node or lock changed or was renewed since it was proposed. Internal. */
    STALE_EXPIRE(17, "the expiry proposal is stale (the node or lease changed since); nothing was removed"),
    /** The session was forgotten (idle past sessionIdleMillis) while seqs below this one were open: send it again once they have ended. */
    SESSION_EXPIRED(18, "the group forgot the client's session and earlier seqs were still open; send the write again once they have ended (KvClient does)"),
    /** The request's seq is below the session's acknowledged mark: its answer was already delivered. */
    SEQ_ALREADY_ACKED(19, "the request's seq was already acknowledged; it is a late duplicate and was not applied"),
    /** The client has more unacknowledged requests than the session window holds. */
    SESSION_WINDOW_FULL(20, "too many requests of this session are unacknowledged; raise acked_below"),
    /** A batch names more keys than {@link KvKeys#MAX_BATCH_KEYS}, or takes more than {@link KvKeys#MAX_REQUEST_BYTES}. */
    BATCH_TOO_LARGE(21, "the batch has more keys than allowed (10,000), or more bytes than one request may carry"),
    /** A list or batchGet whose answer would be over {@link KvKeys#MAX_ANSWER_BYTES}. */
    ANSWER_TOO_LARGE(22, "the answer would be larger than one answer may carry; list the directory in pages (listPage), or get fewer keys at a time"),
    /** A watch registration that would take one connection's watches of a group over the node's limit. */
    TOO_MANY_WATCHES(23, "the connection would watch more keys of the group than the node allows (100,000 by default); watch their directory instead");

    private static final KvCode[] BY_NUMBER;

    static {
        int max = 0;
        for (KvCode c : values()) {
            max = Math.max(max, c.number);
        }
        BY_NUMBER = new KvCode[max + 1];
        for (KvCode c : values()) {
            if (BY_NUMBER[c.number] != null) {
                throw new ExceptionInInitializerError("duplicate KvCode number " + c.number);
            }
            BY_NUMBER[c.number] = c;
        }
    }

    private final int number;
    private final String meaning;

    KvCode(int number, String meaning) {
        this.number = number;
        this.meaning = meaning;
    }

    /** The stable number sent on the wire. */
    public int number() {
        return number;
    }

    /** One line saying what the code means and, where there is one, what to do. */
    public String meaning() {
        return meaning;
    }

    /** The code with this number, or null when this version does not know it. */
    public static KvCode of(int number) {
        return number >= 0 && number < BY_NUMBER.length ? BY_NUMBER[number] : null;
    }

    /** The name of a number, also for numbers this version does not know ("KV_CODE_42"). */
    public static String nameOf(int number) {
        KvCode c = of(number);
        return c == null ? "KV_CODE_" + number : c.name();
    }
}
