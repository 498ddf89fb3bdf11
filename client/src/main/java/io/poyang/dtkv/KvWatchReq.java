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
import java.util.List;

/**
 * Client to server: watch or stop watching keys and directories (message {@code KvWatchReq}).
 * Each key comes with the raft index of the latest state the client has seen of it (0: none), so
 * after a reconnect or a failover the server sends exactly what the client is missing.
 */
public final class KvWatchReq implements Encodable {

    private final int groupId;
    private final boolean remove;
    private final boolean syncAll;
    private final List<String> keys;
    private final long[] knownIndexes;
    private final List<byte[]> keysUtf8;
    private final int size;

    public KvWatchReq(int groupId, boolean remove, boolean syncAll, List<String> keys, long[] knownIndexes) {
        if (knownIndexes.length != keys.size()) {
            throw new IllegalArgumentException("one known index per key: " + keys.size() + " keys, "
                    + knownIndexes.length + " indexes");
        }
        this.groupId = groupId;
        this.remove = remove;
        this.syncAll = syncAll;
        this.keys = keys;
        this.knownIndexes = knownIndexes;
        this.keysUtf8 = new ArrayList<>(keys.size());
        for (String k : keys) {
            keysUtf8.add(k.getBytes(StandardCharsets.UTF_8));
        }
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfBoolField(2, remove)
                + PbUtil.sizeOfBoolField(3, syncAll) + PbUtil.sizeOfRepeatedBytesField(4, keysUtf8)
                + PbUtil.sizeOfPackedVarint64Field(5, knownIndexes, knownIndexes.length);
    }

    public int groupId() {
        return groupId;
    }

    public boolean isRemove() {
        return remove;
    }

    public boolean isSyncAll() {
        return syncAll;
    }

    public List<String> keys() {
        return keys;
    }

    /** One per key. Do not modify. */
    public long[] knownIndexes() {
        return knownIndexes;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.int32Field(dest, 1, groupId)) {
                    return false;
                }
            case 1:
                if (!c.boolField(dest, 2, remove)) {
                    return false;
                }
            case 2:
                if (!c.boolField(dest, 3, syncAll)) {
                    return false;
                }
            case 3:
                if (!c.repeatedBytesField(dest, 4, keysUtf8)) {
                    return false;
                }
            case 4:
                if (!c.packedInt64Field(dest, 5, knownIndexes, knownIndexes.length)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KvWatchReq)) {
            return false;
        }
        KvWatchReq r = (KvWatchReq) o;
        return groupId == r.groupId && remove == r.remove && syncAll == r.syncAll && keys.equals(r.keys)
                && Arrays.equals(knownIndexes, r.knownIndexes);
    }

    @Override
    public int hashCode() {
        return keys.hashCode();
    }

    @Override
    public String toString() {
        return "KvWatchReq{" + (remove ? "remove " : "") + (syncAll ? "syncAll " : "") + keys + " known="
                + Arrays.toString(knownIndexes) + "}";
    }

    /** Decodes a KvWatchReq. A key count different from the index count is a codec error. */
    public static final class Decoder extends PbCallback<KvWatchReq> {
        private int groupId;
        private boolean remove;
        private boolean syncAll;
        private List<String> keys;
        private long[] indexes;
        private int indexCount;
        private final LongSink sink = this::addIndex;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 3:
                    return PbWireType.VARINT;
                case 4:
                    return PbWireType.LEN;
                case 5:
                    return PbWireType.PACKED_VARINT;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            remove = false;
            syncAll = false;
            keys = new ArrayList<>();
            indexes = new long[8];
            indexCount = 0;
        }

        private void addIndex(long v) {
            if (indexCount == indexes.length) {
                indexes = Arrays.copyOf(indexes, indexCount * 2);
            }
            indexes[indexCount++] = v;
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1:
                    groupId = (int) v;
                    break;
                case 2:
                    remove = v != 0;
                    break;
                case 3:
                    syncAll = v != 0;
                    break;
                default:
                    addIndex(v);
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 4) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    keys.add(s);
                }
            } else {
                parsePackedVarints(piece, fieldLength, offsetInField, sink);
            }
        }

        @Override
        protected KvWatchReq end() {
            long[] known = indexCount == 0 ? new long[keys.size()] : Arrays.copyOf(indexes, indexCount);
            if (known.length != keys.size()) {
                throw new io.poyang.codec.CodecException("KvWatchReq has " + keys.size() + " keys but "
                        + indexCount + " known indexes; send one index per key");
            }
            return new KvWatchReq(groupId, remove, syncAll, keys, known);
        }
    }
}
