package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.ReqContext;
import io.poyang.net.RpcCallback;
import io.poyang.raft.store.ByteBody;
import io.poyang.raft.store.LogItem;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * APPEND_ENTRIES (102): message AppendEntriesRequest of raft.proto.
 *
 * <p>On the leader one object is one request to one follower: it encodes the items straight from
 * the leader's {@link LogItem}s (bodies are the decoded client requests, or raw bytes read back from
 * disk) and, as the request's {@link RpcCallback}, hands its outcome to its {@link Replicator}. On a
 * follower the decoder builds one with {@link LogItem}s whose bodies are {@link ByteBody}s.
 */
public final class AppendEntriesRequest implements Encodable, RpcCallback<AppendEntriesResponse> {

    final int groupId;
    final int term;
    final int leaderId;
    final long prevLogIndex;
    final int prevLogTerm;
    final long leaderCommit;
    final List<LogItem> items;
    private final int[] entrySizes;
    private final int size;
    /** Bytes of the entries (their encoded size), for the in-flight caps. */
    final int entriesBytes;
    private int cursor;
    private final EntryEncoder entryEncoder = new EntryEncoder();

    // ---- leader side: the request's fate
    Replicator replicator;
    long generation;
    long sendNanos;
    /** The send time on the lease clock ({@link LeaseReadTracker}). */
    long leaseStamp;
    /** The read round current when it was sent ({@link ReadIndexManager}). */
    long readRound;
    AppendEntriesResponse response;
    Throwable error;

    // ---- follower side
    ReqContext context;

    AppendEntriesRequest(int groupId, int term, int leaderId, long prevLogIndex, int prevLogTerm, long leaderCommit,
                         List<LogItem> items) {
        this.groupId = groupId;
        this.term = term;
        this.leaderId = leaderId;
        this.prevLogIndex = prevLogIndex;
        this.prevLogTerm = prevLogTerm;
        this.leaderCommit = leaderCommit;
        this.items = items;
        int n = items.size();
        this.entrySizes = new int[n];
        int total = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt32Field(2, term)
                + PbUtil.sizeOfInt32Field(3, leaderId) + PbUtil.sizeOfInt64Field(4, prevLogIndex)
                + PbUtil.sizeOfInt32Field(5, prevLogTerm) + PbUtil.sizeOfInt64Field(6, leaderCommit);
        int entries = 0;
        for (int i = 0; i < n; i++) {
            int s = entrySize(items.get(i));
            entrySizes[i] = s;
            entries += PbUtil.sizeOfLenField(7, s);
        }
        this.entriesBytes = entries;
        this.size = total + entries;
    }

    static int entrySize(LogItem it) {
        Encodable h = it.getHeader();
        Encodable b = it.getBody();
        int hs = h == null ? 0 : h.encodedSize();
        int bs = b == null ? 0 : b.encodedSize();
        return PbUtil.sizeOfInt32Field(1, it.getType()) + PbUtil.sizeOfInt32Field(2, it.getBizType())
                + PbUtil.sizeOfInt32Field(3, it.getTerm()) + PbUtil.sizeOfInt64Field(4, it.getTimestampMillis())
                + (hs == 0 ? 0 : PbUtil.sizeOfLenField(5, hs)) + (bs == 0 ? 0 : PbUtil.sizeOfLenField(6, bs));
    }

    public int groupId() {
        return groupId;
    }

    /** The last index this request carries (prevLogIndex for a heartbeat). */
    long lastIndex() {
        return prevLogIndex + items.size();
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    @SuppressWarnings("fallthrough")
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                cursor = 0;
                if (!c.int32Field(dest, 1, groupId)) {
                    return false;
                }
                // fall through
            case 1:
                if (!c.int32Field(dest, 2, term)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int32Field(dest, 3, leaderId)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int64Field(dest, 4, prevLogIndex)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, prevLogTerm)) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.int64Field(dest, 6, leaderCommit)) {
                    return false;
                }
                // fall through
            case 6:
                // The entries: the stage stays here while cursor walks the list.
                while (cursor < entrySizes.length) {
                    entryEncoder.set(items.get(cursor), entrySizes[cursor]);
                    if (!c.messageField(dest, 7, entryEncoder)) {
                        return false;
                    }
                    cursor++;
                    c.stage = 6;
                }
                c.stage = 7;
                // fall through
            default:
                return true;
        }
    }

    // ---------------------------------------------------------------- leader side: RpcCallback (I/O thread)

    @Override
    public void onSuccess(AppendEntriesResponse body) {
        response = body;
        replicator.rpcDone(this);
    }

    @Override
    public void onFailure(Throwable e) {
        error = e;
        replicator.rpcDone(this);
    }

    @Override
    public String toString() {
        return "AppendEntries(group " + groupId + ", term " + term + ", prev " + prevLogIndex + "/" + prevLogTerm
                + ", " + items.size() + " entries, commit " + leaderCommit + ")";
    }

    /** Writes one LogItem as a LogEntry message; reused for every entry of the request. */
    private static final class EntryEncoder implements Encodable {
        private LogItem item;
        private int size;
        private int headerSize;
        private int bodySize;

        void set(LogItem it, int entrySize) {
            if (it != item) {
                item = it;
                size = entrySize;
                headerSize = it.getHeader() == null ? 0 : it.getHeader().encodedSize();
                bodySize = it.getBody() == null ? 0 : it.getBody().encodedSize();
            }
        }

        @Override
        public int encodedSize() {
            return size;
        }

        @Override
        @SuppressWarnings("fallthrough")
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            LogItem it = item;
            switch (c.stage) {
                case 0:
                    if (!c.int32Field(dest, 1, it.getType())) {
                        return false;
                    }
                    // fall through
                case 1:
                    if (!c.int32Field(dest, 2, it.getBizType())) {
                        return false;
                    }
                    // fall through
                case 2:
                    if (!c.int32Field(dest, 3, it.getTerm())) {
                        return false;
                    }
                    // fall through
                case 3:
                    if (!c.int64Field(dest, 4, it.getTimestampMillis())) {
                        return false;
                    }
                    // fall through
                case 4:
                    if (headerSize == 0) {
                        c.stage++;
                    } else if (!c.messageField(dest, 5, it.getHeader())) {
                        return false;
                    }
                    // fall through
                case 5:
                    if (bodySize == 0) {
                        c.stage++;
                    } else if (!c.messageField(dest, 6, it.getBody())) {
                        return false;
                    }
                    // fall through
                default:
                    return true;
            }
        }
    }

    // ---------------------------------------------------------------- follower side: decoding (I/O thread)

    /** Reads an AppendEntriesRequest; entries become LogItems with {@link ByteBody} parts. */
    public static final class Decoder extends PbCallback<AppendEntriesRequest> {
        private int groupId;
        private int term;
        private int leaderId;
        private long prevLogIndex;
        private int prevLogTerm;
        private long leaderCommit;
        private int count;
        private int[] types = new int[8];
        private int[] bizTypes = new int[8];
        private int[] terms = new int[8];
        private long[] timestamps = new long[8];
        private ByteBody[] headers = new ByteBody[8];
        private ByteBody[] bodies = new ByteBody[8];
        private final EntryDecoder entryDecoder = new EntryDecoder(this);

        @Override
        protected int wireTypeOf(int field) {
            if (field >= 1 && field <= 6) {
                return PbWireType.VARINT;
            }
            return field == 7 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            term = 0;
            leaderId = 0;
            prevLogIndex = 0;
            prevLogTerm = 0;
            leaderCommit = 0;
            count = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 1:
                    groupId = (int) value;
                    break;
                case 2:
                    term = (int) value;
                    break;
                case 3:
                    leaderId = (int) value;
                    break;
                case 4:
                    prevLogIndex = value;
                    break;
                case 5:
                    prevLogTerm = (int) value;
                    break;
                default:
                    leaderCommit = value;
                    break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            parseNested(piece, fieldLength, offsetInField, entryDecoder);
        }

        void addEntry(int type, int bizType, int entryTerm, long timestamp, ByteBody header, ByteBody body) {
            if (count == types.length) {
                int n = count * 2;
                types = Arrays.copyOf(types, n);
                bizTypes = Arrays.copyOf(bizTypes, n);
                terms = Arrays.copyOf(terms, n);
                timestamps = Arrays.copyOf(timestamps, n);
                headers = Arrays.copyOf(headers, n);
                bodies = Arrays.copyOf(bodies, n);
            }
            types[count] = type;
            bizTypes[count] = bizType;
            terms[count] = entryTerm;
            timestamps[count] = timestamp;
            headers[count] = header;
            bodies[count] = body;
            count++;
        }

        @Override
        protected AppendEntriesRequest end() {
            List<LogItem> items;
            if (count == 0) {
                items = Collections.emptyList();
            } else {
                items = new ArrayList<>(count);
                int prev = prevLogTerm;
                for (int i = 0; i < count; i++) {
                    // LogItem refuses impossible values (bad type, terms out of order): a BAD_REQUEST.
                    items.add(new LogItem(types[i], bizTypes[i], terms[i], prev, prevLogIndex + 1 + i, timestamps[i],
                            headers[i], bodies[i]));
                    prev = terms[i];
                    headers[i] = null;
                    bodies[i] = null;
                }
            }
            return new AppendEntriesRequest(groupId, term, leaderId, prevLogIndex, prevLogTerm, leaderCommit, items);
        }
    }

    /** Reads one LogEntry into its parent's arrays. */
    private static final class EntryDecoder extends PbCallback<Object> {
        private final Decoder parent;
        private int type;
        private int bizType;
        private int term;
        private long timestamp;
        private ByteBody header;
        private ByteBody body;

        EntryDecoder(Decoder parent) {
            this.parent = parent;
        }

        @Override
        protected int wireTypeOf(int field) {
            if (field >= 1 && field <= 4) {
                return PbWireType.VARINT;
            }
            return field == 5 || field == 6 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            type = 0;
            bizType = 0;
            term = 0;
            timestamp = 0;
            header = null;
            body = null;
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 1:
                    type = (int) value;
                    break;
                case 2:
                    bizType = (int) value;
                    break;
                case 3:
                    term = (int) value;
                    break;
                default:
                    timestamp = value;
                    break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            byte[] b = parseBytes(piece, fieldLength, offsetInField);
            if (b != null) {
                if (field == 5) {
                    header = new ByteBody(b);
                } else {
                    body = new ByteBody(b);
                }
            }
        }

        @Override
        protected Object end() {
            parent.addEntry(type, bizType, term, timestamp, header, body);
            return this;
        }
    }
}
