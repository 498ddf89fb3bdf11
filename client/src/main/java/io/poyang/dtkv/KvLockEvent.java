package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Server to client: a lock was granted to a waiting client, or a holder lost it when its lease ran
 * out (message {@code KvLockEvent}). The state machine produces these while applying; the server
 * pushes each to the client it names.
 */
public final class KvLockEvent implements Encodable {

    /** {@code LockEventType.GRANTED}: the client now holds the lock. */
    public static final int GRANTED = 1;
    /** {@code LockEventType.LOST}: the client's lease ran out and the lock is no longer its. */
    public static final int LOST = 2;

    private final int groupId;
    private final String key;
    private final byte[] keyUtf8;
    private final int type;
    private final long fencingToken;
    private final long leaseExpireAtMillis;
    private final long clientUuidMost;
    private final long clientUuidLeast;
    private final int size;

    public KvLockEvent(int groupId, String key, int type, long fencingToken, long leaseExpireAtMillis,
                       long clientUuidMost, long clientUuidLeast) {
        this.groupId = groupId;
        this.key = key == null ? "" : key;
        this.keyUtf8 = this.key.getBytes(StandardCharsets.UTF_8);
        this.type = type;
        this.fencingToken = fencingToken;
        this.leaseExpireAtMillis = leaseExpireAtMillis;
        this.clientUuidMost = clientUuidMost;
        this.clientUuidLeast = clientUuidLeast;
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfBytesField(2, keyUtf8)
                + PbUtil.sizeOfInt32Field(3, type) + PbUtil.sizeOfInt64Field(4, fencingToken)
                + PbUtil.sizeOfInt64Field(5, leaseExpireAtMillis) + PbUtil.sizeOfFixed64Field(6, clientUuidMost)
                + PbUtil.sizeOfFixed64Field(7, clientUuidLeast);
    }

    public int groupId() {
        return groupId;
    }

    public String key() {
        return key;
    }

    /** {@link #GRANTED} or {@link #LOST}. */
    public int type() {
        return type;
    }

    public long fencingToken() {
        return fencingToken;
    }

    public long leaseExpireAtMillis() {
        return leaseExpireAtMillis;
    }

    /** The client the event is for. */
    public long clientUuidMost() {
        return clientUuidMost;
    }

    public long clientUuidLeast() {
        return clientUuidLeast;
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
                if (!c.bytesField(dest, 2, keyUtf8)) {
                    return false;
                }
            case 2:
                if (!c.int32Field(dest, 3, type)) {
                    return false;
                }
            case 3:
                if (!c.int64Field(dest, 4, fencingToken)) {
                    return false;
                }
            case 4:
                if (!c.int64Field(dest, 5, leaseExpireAtMillis)) {
                    return false;
                }
            case 5:
                if (!c.fixed64Field(dest, 6, clientUuidMost)) {
                    return false;
                }
            case 6:
                if (!c.fixed64Field(dest, 7, clientUuidLeast)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KvLockEvent)) {
            return false;
        }
        KvLockEvent e = (KvLockEvent) o;
        return groupId == e.groupId && key.equals(e.key) && type == e.type && fencingToken == e.fencingToken
                && leaseExpireAtMillis == e.leaseExpireAtMillis && clientUuidMost == e.clientUuidMost
                && clientUuidLeast == e.clientUuidLeast;
    }

    @Override
    public int hashCode() {
        return key.hashCode() * 31 + Long.hashCode(fencingToken);
    }

    @Override
    public String toString() {
        return "KvLockEvent{" + key + (type == GRANTED ? " GRANTED" : type == LOST ? " LOST" : " type=" + type)
                + " token=" + fencingToken + " client=" + Long.toHexString(clientUuidMost) + ":"
                + Long.toHexString(clientUuidLeast) + "}";
    }

    /** Decodes a KvLockEvent. */
    public static final class Decoder extends PbCallback<KvLockEvent> {
        private int groupId;
        private String key;
        private int type;
        private long token;
        private long leaseExpireAt;
        private long most;
        private long least;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 3:
                case 4:
                case 5:
                    return PbWireType.VARINT;
                case 2:
                    return PbWireType.LEN;
                case 6:
                case 7:
                    return PbWireType.FIXED64;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            key = "";
            type = 0;
            token = 0;
            leaseExpireAt = 0;
            most = 0;
            least = 0;
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1:
                    groupId = (int) v;
                    break;
                case 3:
                    type = (int) v;
                    break;
                case 4:
                    token = v;
                    break;
                default:
                    leaseExpireAt = v;
            }
        }

        @Override
        protected void readFixed64(int field, long v) {
            if (field == 6) {
                most = v;
            } else {
                least = v;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            String s = parseString(piece, fieldLength, offsetInField);
            if (s != null) {
                key = s;
            }
        }

        @Override
        protected KvLockEvent end() {
            return new KvLockEvent(groupId, key, type, token, leaseExpireAt, most, least);
        }
    }
}
