package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A DtKV request; {@link #op()} says which operation and which fields matter (message {@code KvReq}
 * in docs/proto/dtkv.proto). Writes are the body of their raft log entry: on the leader this object
 * is encoded straight to disk, on followers it is decoded from there with {@link Decoder}.
 *
 * <p>Build one with a static factory ({@link #put}, {@link #tryLock} …), add the client session
 * with {@link #session}, and do not change it once handed to the network or the log: its encoded
 * size is computed once.
 */
public final class KvReq implements Encodable {

    private static final byte[] EMPTY = new byte[0];

    private int opNumber;
    private int groupId;
    private String key;
    private byte[] value;
    private List<String> keys;
    private List<byte[]> values;
    private byte[] expectedValue;
    private boolean expectAbsent;
    private long ttlMillis;
    private long waitMillis;
    private long expectIndex;
    private long clientUuidMost;
    private long clientUuidLeast;
    private long seq;
    private long ackedBelow;
    private int readKind;
    private boolean paged;
    private String startAfter;
    private int limit;

    private byte[] keyUtf8;
    private byte[] startAfterUtf8;
    private List<byte[]> keysUtf8;
    /**
     * -1 until computed. Volatile because the same message may be encoded by several threads (a log
     * entry sent to several followers, a recorded answer sent again): the UTF-8 copies are written
     * before it, so a thread that reads a computed size also sees them; one that reads -1 computes
     * the same values itself.
     */
    private volatile int size = -1;

    public KvReq() {
    }

    public KvReq(KvOp op) {
        this.opNumber = op.number();
    }

    // ---- factories, one per operation ----

    public static KvReq put(String key, byte[] value) {
        return new KvReq(KvOp.PUT).key(key).value(value);
    }

    public static KvReq batchPut(List<String> keys, List<byte[]> values) {
        return new KvReq(KvOp.BATCH_PUT).keys(keys).values(values);
    }

    public static KvReq remove(String key) {
        return new KvReq(KvOp.REMOVE).key(key);
    }

    public static KvReq batchRemove(List<String> keys) {
        return new KvReq(KvOp.BATCH_REMOVE).keys(keys);
    }

    public static KvReq mkdir(String key) {
        return new KvReq(KvOp.MKDIR).key(key);
    }

    /** Sets {@code newValue} if the key now holds {@code expectedValue}. */
    public static KvReq compareAndSet(String key, byte[] expectedValue, byte[] newValue) {
        return new KvReq(KvOp.COMPARE_AND_SET).key(key).expectedValue(expectedValue).value(newValue);
    }

    /** Sets {@code newValue} if the key does not exist. */
    public static KvReq compareAbsentAndSet(String key, byte[] newValue) {
        return new KvReq(KvOp.COMPARE_AND_SET).key(key).expectAbsent(true).value(newValue);
    }

    public static KvReq putTemp(String key, byte[] value, long ttlMillis) {
        return new KvReq(KvOp.PUT_TEMP).key(key).value(value).ttlMillis(ttlMillis);
    }

    public static KvReq makeTempDir(String key, long ttlMillis) {
        return new KvReq(KvOp.MAKE_TEMP_DIR).key(key).ttlMillis(ttlMillis);
    }

    public static KvReq updateTtl(String key, long ttlMillis) {
        return new KvReq(KvOp.UPDATE_TTL).key(key).ttlMillis(ttlMillis);
    }

    /** The leader's proposal to remove a temp node whose TTL ran out; stale if it was re-created since. */
    public static KvReq expire(String key, long createIndex) {
        return new KvReq(KvOp.EXPIRE).key(key).expectIndex(createIndex);
    }

    public static KvReq tryLock(String key, long leaseMillis, long waitMillis) {
        return new KvReq(KvOp.TRY_LOCK).key(key).ttlMillis(leaseMillis).waitMillis(waitMillis);
    }

    public static KvReq unlock(String key) {
        return new KvReq(KvOp.UNLOCK).key(key);
    }

    public static KvReq updateLease(String key, long leaseMillis) {
        return new KvReq(KvOp.UPDATE_LEASE).key(key).ttlMillis(leaseMillis);
    }

    /** The leader's proposal to end a lease that ran out; stale if the lock changed hands since. */
    public static KvReq expireLock(String key, long fencingToken) {
        return new KvReq(KvOp.EXPIRE_LOCK).key(key).expectIndex(fencingToken);
    }

    public static KvReq get(String key) {
        return new KvReq(KvOp.GET).key(key);
    }

    public static KvReq batchGet(List<String> keys) {
        return new KvReq(KvOp.BATCH_GET).keys(keys);
    }

    public static KvReq list(String dirKey) {
        return new KvReq(KvOp.LIST).key(dirKey);
    }

    /**
     * One page of a directory's children: those whose key sorts after {@code startAfter} (null or
     * empty: from the first), at most {@code limit} of them (0: {@link KvKeys#DEFAULT_LIST_PAGE_NODES}).
     */
    public static KvReq listPage(String dirKey, String startAfter, int limit) {
        return new KvReq(KvOp.LIST).key(dirKey).paged(true).startAfter(startAfter).limit(limit);
    }

    // ---- setters (before the request is sent) ----

    public KvReq op(KvOp op) {
        this.opNumber = op.number();
        return changed();
    }

    public KvReq groupId(int groupId) {
        this.groupId = groupId;
        return changed();
    }

    public KvReq key(String key) {
        this.key = key;
        return changed();
    }

    /** The array is kept, not copied. */
    public KvReq value(byte[] value) {
        this.value = value;
        return changed();
    }

    public KvReq keys(List<String> keys) {
        this.keys = keys;
        return changed();
    }

    public KvReq values(List<byte[]> values) {
        this.values = values;
        return changed();
    }

    public KvReq expectedValue(byte[] expectedValue) {
        this.expectedValue = expectedValue;
        return changed();
    }

    public KvReq expectAbsent(boolean expectAbsent) {
        this.expectAbsent = expectAbsent;
        return changed();
    }

    public KvReq ttlMillis(long ttlMillis) {
        this.ttlMillis = ttlMillis;
        return changed();
    }

    public KvReq waitMillis(long waitMillis) {
        this.waitMillis = waitMillis;
        return changed();
    }

    public KvReq expectIndex(long expectIndex) {
        this.expectIndex = expectIndex;
        return changed();
    }

    /** The client session: owner of temp nodes and locks, and the exactly-once identity with {@link #seq}. */
    public KvReq session(long clientUuidMost, long clientUuidLeast) {
        this.clientUuidMost = clientUuidMost;
        this.clientUuidLeast = clientUuidLeast;
        return changed();
    }

    /** Exactly-once: this request's number in the session and the lowest seq not answered yet. */
    public KvReq seq(long seq, long ackedBelow) {
        this.seq = seq;
        this.ackedBelow = ackedBelow;
        return changed();
    }

    /**
     * Reads: how the read is made linearizable ({@link KvReadKind}; {@code LEASE_READ}, the
     * default, is not sent).
     */
    public KvReq readKind(KvReadKind kind) {
        this.readKind = kind == null ? 0 : kind.number();
        return changed();
    }

    /** LIST: answer one page ({@link #startAfter}, {@link #limit}, {@link KvResp#more()}), not the whole directory. */
    public KvReq paged(boolean paged) {
        this.paged = paged;
        return changed();
    }

    /** LIST with {@link #paged}: only children whose key sorts after this one (null or empty: from the first child). */
    public KvReq startAfter(String startAfter) {
        this.startAfter = startAfter;
        return changed();
    }

    /** LIST with {@link #paged}: at most this many children (0: {@link KvKeys#DEFAULT_LIST_PAGE_NODES}). */
    public KvReq limit(int limit) {
        this.limit = limit;
        return changed();
    }

    private KvReq changed() {
        size = -1;
        keyUtf8 = null;
        startAfterUtf8 = null;
        keysUtf8 = null;
        return this;
    }

    // ---- getters ----

    /** The operation, or null when the number is one this version does not know ({@link #opNumber()}). */
    public KvOp op() {
        return KvOp.of(opNumber);
    }

    public int opNumber() {
        return opNumber;
    }

    public int groupId() {
        return groupId;
    }

    /** The key, or null when the request has none. */
    public String key() {
        return key;
    }

    /** The value; never null (an absent value is empty). */
    public byte[] value() {
        return value == null ? EMPTY : value;
    }

    /** The keys of a batch; never null. */
    public List<String> keys() {
        return keys == null ? Collections.<String>emptyList() : keys;
    }

    /** The values of a batch put; never null. */
    public List<byte[]> values() {
        return values == null ? Collections.<byte[]>emptyList() : values;
    }

    public byte[] expectedValue() {
        return expectedValue == null ? EMPTY : expectedValue;
    }

    public boolean expectAbsent() {
        return expectAbsent;
    }

    public long ttlMillis() {
        return ttlMillis;
    }

    public long waitMillis() {
        return waitMillis;
    }

    public long expectIndex() {
        return expectIndex;
    }

    public long clientUuidMost() {
        return clientUuidMost;
    }

    public long clientUuidLeast() {
        return clientUuidLeast;
    }

    public long seq() {
        return seq;
    }

    public long ackedBelow() {
        return ackedBelow;
    }

    /** The read kind's wire number (0: LEASE_READ); see {@link KvReadKind#of}. */
    public int readKindNumber() {
        return readKind;
    }

    /** LIST: the key the page starts after; null when the list starts at the first child. */
    public String startAfter() {
        return startAfter == null || startAfter.isEmpty() ? null : startAfter;
    }

    /** LIST: the most children wanted (0: as many as fit one answer). */
    public int limit() {
        return limit;
    }

    /** LIST: whether this asks for one page rather than the whole directory. */
    public boolean isPaged() {
        return paged;
    }

    // ---- encoding ----

    @Override
    public int encodedSize() {
        int sz = size;
        if (sz < 0) {
            keyUtf8 = key == null ? null : key.getBytes(StandardCharsets.UTF_8);
            startAfterUtf8 = startAfter == null ? null : startAfter.getBytes(StandardCharsets.UTF_8);
            if (keys != null) {
                List<byte[]> k = new ArrayList<>(keys.size());
                for (String s : keys) {
                    k.add(s.getBytes(StandardCharsets.UTF_8));
                }
                keysUtf8 = k;
            }
            sz = PbUtil.sizeOfInt32Field(1, opNumber) + PbUtil.sizeOfInt32Field(2, groupId)
                    + PbUtil.sizeOfBytesField(3, keyUtf8) + PbUtil.sizeOfBytesField(4, value)
                    + PbUtil.sizeOfRepeatedBytesField(5, keysUtf8) + PbUtil.sizeOfRepeatedBytesField(6, values)
                    + PbUtil.sizeOfBytesField(7, expectedValue) + PbUtil.sizeOfBoolField(8, expectAbsent)
                    + PbUtil.sizeOfInt64Field(9, ttlMillis) + PbUtil.sizeOfInt64Field(10, waitMillis)
                    + PbUtil.sizeOfInt64Field(11, expectIndex) + PbUtil.sizeOfFixed64Field(12, clientUuidMost)
                    + PbUtil.sizeOfFixed64Field(13, clientUuidLeast) + PbUtil.sizeOfInt64Field(14, seq)
                    + PbUtil.sizeOfInt64Field(15, ackedBelow) + PbUtil.sizeOfInt32Field(16, readKind)
                    + PbUtil.sizeOfBytesField(17, startAfterUtf8) + PbUtil.sizeOfInt32Field(18, limit)
                    + PbUtil.sizeOfBoolField(19, paged);
            size = sz;
        }
        return sz;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        if (size < 0) {
            encodedSize();
        }
        switch (c.stage) {
            case 0:
                if (!c.int32Field(dest, 1, opNumber)) {
                    return false;
                }
            case 1:
                if (!c.int32Field(dest, 2, groupId)) {
                    return false;
                }
            case 2:
                if (!c.bytesField(dest, 3, keyUtf8)) {
                    return false;
                }
            case 3:
                if (!c.bytesField(dest, 4, value)) {
                    return false;
                }
            case 4:
                if (!c.repeatedBytesField(dest, 5, keysUtf8)) {
                    return false;
                }
            case 5:
                if (!c.repeatedBytesField(dest, 6, values)) {
                    return false;
                }
            case 6:
                if (!c.bytesField(dest, 7, expectedValue)) {
                    return false;
                }
            case 7:
                if (!c.boolField(dest, 8, expectAbsent)) {
                    return false;
                }
            case 8:
                if (!c.int64Field(dest, 9, ttlMillis)) {
                    return false;
                }
            case 9:
                if (!c.int64Field(dest, 10, waitMillis)) {
                    return false;
                }
            case 10:
                if (!c.int64Field(dest, 11, expectIndex)) {
                    return false;
                }
            case 11:
                if (!c.fixed64Field(dest, 12, clientUuidMost)) {
                    return false;
                }
            case 12:
                if (!c.fixed64Field(dest, 13, clientUuidLeast)) {
                    return false;
                }
            case 13:
                if (!c.int64Field(dest, 14, seq)) {
                    return false;
                }
            case 14:
                if (!c.int64Field(dest, 15, ackedBelow)) {
                    return false;
                }
            case 15:
                if (!c.int32Field(dest, 16, readKind)) {
                    return false;
                }
            case 16:
                if (!c.bytesField(dest, 17, startAfterUtf8)) {
                    return false;
                }
            case 17:
                if (!c.int32Field(dest, 18, limit)) {
                    return false;
                }
            case 18:
                if (!c.boolField(dest, 19, paged)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof KvReq)) {
            return false;
        }
        KvReq r = (KvReq) o;
        return opNumber == r.opNumber && groupId == r.groupId && expectAbsent == r.expectAbsent
                && ttlMillis == r.ttlMillis && waitMillis == r.waitMillis && expectIndex == r.expectIndex
                && clientUuidMost == r.clientUuidMost && clientUuidLeast == r.clientUuidLeast && seq == r.seq
                && ackedBelow == r.ackedBelow && readKind == r.readKind && paged == r.paged && limit == r.limit && eq(key, r.key)
                && eq(startAfter, r.startAfter) && Arrays.equals(value(), r.value())
                && keys().equals(r.keys()) && bytesListEquals(values(), r.values())
                && Arrays.equals(expectedValue(), r.expectedValue());
    }

    private static boolean eq(String a, String b) {
        return a == null || a.isEmpty() ? b == null || b.isEmpty() : a.equals(b);
    }

    static boolean bytesListEquals(List<byte[]> a, List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return opNumber * 31 + (key == null ? 0 : key.hashCode());
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("KvReq{").append(op() == null ? "op#" + opNumber : op().name());
        if (key != null) {
            sb.append(' ').append(key);
        }
        if (keys != null) {
            sb.append(" keys=").append(keys.size());
        }
        if (ttlMillis != 0) {
            sb.append(" ttl=").append(ttlMillis);
        }
        if (expectIndex != 0) {
            sb.append(" expectIndex=").append(expectIndex);
        }
        if (seq != 0) {
            sb.append(" seq=").append(seq);
        }
        if (paged) {
            sb.append(" paged");
        }
        if (startAfter() != null) {
            sb.append(" after=").append(startAfter);
        }
        if (limit != 0) {
            sb.append(" limit=").append(limit);
        }
        return sb.append('}').toString();
    }

    /** Decodes a KvReq (a request body or a log entry body); reusable message after message. */
    public static final class Decoder extends PbCallback<KvReq> {
        private KvReq r;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 3:
                case 4:
                case 5:
                case 6:
                case 7:
                case 17:
                    return PbWireType.LEN;
                case 12:
                case 13:
                    return PbWireType.FIXED64;
                case 1:
                case 2:
                case 8:
                case 9:
                case 10:
                case 11:
                case 14:
                case 15:
                case 16:
                case 18:
                case 19:
                    return PbWireType.VARINT;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            r = new KvReq();
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1:
                    r.opNumber = (int) v;
                    break;
                case 2:
                    r.groupId = (int) v;
                    break;
                case 8:
                    r.expectAbsent = v != 0;
                    break;
                case 9:
                    r.ttlMillis = v;
                    break;
                case 10:
                    r.waitMillis = v;
                    break;
                case 11:
                    r.expectIndex = v;
                    break;
                case 14:
                    r.seq = v;
                    break;
                case 15:
                    r.ackedBelow = v;
                    break;
                case 16:
                    r.readKind = (int) v;
                    break;
                case 18:
                    r.limit = (int) v;
                    break;
                default:
                    r.paged = v != 0;
            }
        }

        @Override
        protected void readFixed64(int field, long v) {
            if (field == 12) {
                r.clientUuidMost = v;
            } else {
                r.clientUuidLeast = v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            switch (field) {
                case 3: {
                    String s = parseString(piece, fieldLength, offsetInField);
                    if (s != null) {
                        r.key = s;
                    }
                    break;
                }
                case 17: {
                    String s = parseString(piece, fieldLength, offsetInField);
                    if (s != null) {
                        r.startAfter = s;
                    }
                    break;
                }
                case 5: {
                    String s = parseString(piece, fieldLength, offsetInField);
                    if (s != null) {
                        if (r.keys == null) {
                            r.keys = new ArrayList<>();
                        }
                        r.keys.add(s);
                    }
                    break;
                }
                default: {
                    byte[] b = parseBytes(piece, fieldLength, offsetInField);
                    if (b != null) {
                        if (field == 4) {
                            r.value = b;
                        } else if (field == 7) {
                            r.expectedValue = b;
                        } else {
                            if (r.values == null) {
                                r.values = new ArrayList<>();
                            }
                            r.values.add(b);
                        }
                    }
                }
            }
        }

        @Override
        protected KvReq end() {
            KvReq out = r;
            r = null;
            return out;
        }
    }
}
