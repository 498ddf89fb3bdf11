package io.poyang.raft.store;

import io.poyang.codec.Encodable;

/**
 * One raft log entry. An ordinary object managed by the GC (no reference counting): pooled
 * buffers are only used to stage I/O inside the store.
 *
 * <p>On the leader the body is the decoded client request itself (an {@link Encodable}, encoded
 * straight into the store's write buffer and never decoded again); on followers and after a read
 * from disk it is a {@link ByteBody}. The business header is optional (null) and follows the same
 * rule. Neither may change once the item has been handed to {@link LogStore#append}.
 */
public final class LogItem {

    /** An ordinary entry carrying a state-machine command. */
    public static final int TYPE_NORMAL = 1;
    /** The no-op entry a new leader appends to commit entries of earlier terms. */
    public static final int TYPE_NOOP = 2;
    /** A membership change (prepare / commit / abort); the body says which. */
    public static final int TYPE_CONFIG_CHANGE = 3;

    private final int type;
    private final int bizType;
    private final int term;
    private final int prevLogTerm;
    private final long index;
    private final long timestampMillis;
    private final Encodable header;
    private final Encodable body;

    /**
     * @param type            {@link #TYPE_NORMAL}, {@link #TYPE_NOOP} or {@link #TYPE_CONFIG_CHANGE}
     * @param bizType         what the body is, for the state machine (0..255 is plenty; any int is kept)
     * @param term            the term of the leader that created the entry
     * @param prevLogTerm     the term of the entry at {@code index - 1} (0 before the first entry)
     * @param index           the entry's log index, from 1
     * @param timestampMillis the leader's wall clock when it created the entry
     * @param header          optional business header, or null
     * @param body            optional body, or null
     */
    public LogItem(int type, int bizType, int term, int prevLogTerm, long index, long timestampMillis,
                   Encodable header, Encodable body) {
        if (type < TYPE_NORMAL || type > TYPE_CONFIG_CHANGE) {
            throw new IllegalArgumentException("unknown log item type " + type);
        }
        if (term <= 0 || prevLogTerm < 0 || prevLogTerm > term) {
            throw new IllegalArgumentException("bad terms: term " + term + ", prevLogTerm " + prevLogTerm);
        }
        if (index <= 0) {
            throw new IllegalArgumentException("log indexes start at 1: " + index);
        }
        this.type = type;
        this.bizType = bizType;
        this.term = term;
        this.prevLogTerm = prevLogTerm;
        this.index = index;
        this.timestampMillis = timestampMillis;
        this.header = header;
        this.body = body;
    }

    public int getType() {
        return type;
    }

    public int getBizType() {
        return bizType;
    }

    public int getTerm() {
        return term;
    }

    public int getPrevLogTerm() {
        return prevLogTerm;
    }

    public long getIndex() {
        return index;
    }

    public long getTimestampMillis() {
        return timestampMillis;
    }

    /** The business header, or null. */
    public Encodable getHeader() {
        return header;
    }

    /** The body, or null. */
    public Encodable getBody() {
        return body;
    }

    @Override
    public String toString() {
        return "LogItem(index " + index + ", term " + term + ", type " + type + ", bizType " + bizType + ")";
    }
}
