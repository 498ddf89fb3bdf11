package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A node as it is at some raft index: a value or a directory, with the raft indexes that created
 * and last updated it, and, for temp nodes, the owning client and when the TTL runs out. A key that
 * does not exist is a node with {@code createIndex == 0} ({@link #absent}). Immutable.
 * (message {@code KvNode} in docs/proto/dtkv.proto)
 */
public final class KvNode implements Encodable {

    private static final byte[] EMPTY = new byte[0];

    private final String key;
    private final byte[] keyUtf8;
    private final byte[] value;
    private final boolean dir;
    private final long createIndex;
    private final long updateIndex;
    private final long ownerUuidMost;
    private final long ownerUuidLeast;
    private final long ttlMillis;
    private final long expireAtMillis;
    private final int size;

    /**
     * The value array is kept, not copied: callers must not change it afterwards (the server hands
     * out its own immutable arrays).
     */
    public KvNode(String key, byte[] value, boolean dir, long createIndex, long updateIndex, long ownerUuidMost,
                  long ownerUuidLeast, long ttlMillis, long expireAtMillis) {
        this.key = key == null ? "" : key;
        this.keyUtf8 = this.key.getBytes(StandardCharsets.UTF_8);
        this.value = value == null ? EMPTY : value;
        this.dir = dir;
        this.createIndex = createIndex;
        this.updateIndex = updateIndex;
        this.ownerUuidMost = ownerUuidMost;
        this.ownerUuidLeast = ownerUuidLeast;
        this.ttlMillis = ttlMillis;
        this.expireAtMillis = expireAtMillis;
        this.size = PbUtil.sizeOfBytesField(1, keyUtf8) + PbUtil.sizeOfBytesField(2, this.value)
                + PbUtil.sizeOfBoolField(3, dir) + PbUtil.sizeOfInt64Field(4, createIndex)
                + PbUtil.sizeOfInt64Field(5, updateIndex) + PbUtil.sizeOfFixed64Field(6, ownerUuidMost)
                + PbUtil.sizeOfFixed64Field(7, ownerUuidLeast) + PbUtil.sizeOfInt64Field(8, ttlMillis)
                + PbUtil.sizeOfInt64Field(9, expireAtMillis);
    }

    /** A permanent value or directory. */
    public static KvNode of(String key, byte[] value, boolean dir, long createIndex, long updateIndex) {
        return new KvNode(key, value, dir, createIndex, updateIndex, 0, 0, 0, 0);
    }

    /** The state of a key that does not exist. */
    public static KvNode absent(String key) {
        return new KvNode(key, null, false, 0, 0, 0, 0, 0, 0);
    }

    public String key() {
        return key;
    }

    /** The value (empty for directories and absent keys). Do not modify the array. */
    public byte[] value() {
        return value;
    }

    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    public boolean exists() {
        return createIndex != 0;
    }

    public boolean isDir() {
        return dir;
    }

    public long createIndex() {
        return createIndex;
    }

    public long updateIndex() {
        return updateIndex;
    }

    /** Whether this is a temp node (it has a TTL and an owner). */
    public boolean isTemp() {
        return ttlMillis != 0;
    }

    public long ownerUuidMost() {
        return ownerUuidMost;
    }

    public long ownerUuidLeast() {
        return ownerUuidLeast;
    }

    public long ttlMillis() {
        return ttlMillis;
    }

    /**
     * When the TTL runs out, in epoch milliseconds of the leader's clock; 0 for permanent nodes. A
     * leader change moves it later by the time the group had no leader (a TTL is never shortened).
     */
    public long expireAtMillis() {
        return expireAtMillis;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.bytesField(dest, 1, keyUtf8)) {
                    return false;
                }
            case 1:
                if (!c.bytesField(dest, 2, value)) {
                    return false;
                }
            case 2:
                if (!c.boolField(dest, 3, dir)) {
                    return false;
                }
            case 3:
                if (!c.int64Field(dest, 4, createIndex)) {
                    return false;
                }
            case 4:
                if (!c.int64Field(dest, 5, updateIndex)) {
                    return false;
                }
            case 5:
                if (!c.fixed64Field(dest, 6, ownerUuidMost)) {
                    return false;
                }
            case 6:
                if (!c.fixed64Field(dest, 7, ownerUuidLeast)) {
                    return false;
                }
            case 7:
                if (!c.int64Field(dest, 8, ttlMillis)) {
                    return false;
                }
            case 8:
                if (!c.int64Field(dest, 9, expireAtMillis)) {
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
        if (!(o instanceof KvNode)) {
            return false;
        }
        KvNode n = (KvNode) o;
        return dir == n.dir && createIndex == n.createIndex && updateIndex == n.updateIndex
                && ownerUuidMost == n.ownerUuidMost && ownerUuidLeast == n.ownerUuidLeast
                && ttlMillis == n.ttlMillis && expireAtMillis == n.expireAtMillis && key.equals(n.key)
                && Arrays.equals(value, n.value);
    }

    @Override
    public int hashCode() {
        return (key.hashCode() * 31 + Arrays.hashCode(value)) * 31 + Long.hashCode(updateIndex);
    }

    @Override
    public String toString() {
        if (!exists()) {
            return "KvNode{" + key + " absent}";
        }
        return "KvNode{" + key + (dir ? " dir" : " value=" + value.length + "B") + " create=" + createIndex
                + " update=" + updateIndex + (isTemp() ? " ttl=" + ttlMillis + " expireAt=" + expireAtMillis : "")
                + "}";
    }

    /** Decodes a KvNode; reusable message after message. */
    public static final class Decoder extends PbCallback<KvNode> {
        private String key;
        private byte[] value;
        private boolean dir;
        private long createIndex;
        private long updateIndex;
        private long ownerMost;
        private long ownerLeast;
        private long ttlMillis;
        private long expireAtMillis;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                    return PbWireType.LEN;
                case 3:
                case 4:
                case 5:
                case 8:
                case 9:
                    return PbWireType.VARINT;
                case 6:
                case 7:
                    return PbWireType.FIXED64;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            key = "";
            value = null;
            dir = false;
            createIndex = 0;
            updateIndex = 0;
            ownerMost = 0;
            ownerLeast = 0;
            ttlMillis = 0;
            expireAtMillis = 0;
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 3:
                    dir = v != 0;
                    break;
                case 4:
                    createIndex = v;
                    break;
                case 5:
                    updateIndex = v;
                    break;
                case 8:
                    ttlMillis = v;
                    break;
                default:
                    expireAtMillis = v;
            }
        }

        @Override
        protected void readFixed64(int field, long v) {
            if (field == 6) {
                ownerMost = v;
            } else {
                ownerLeast = v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 1) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    key = s;
                }
            } else {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    value = b;
                }
            }
        }

        @Override
        protected KvNode end() {
            return new KvNode(key, value, dir, createIndex, updateIndex, ownerMost, ownerLeast, ttlMillis,
                    expireAtMillis);
        }
    }
}
