package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The answer to a {@link KvReq} (message {@code KvResp} in docs/proto/dtkv.proto): a {@link KvCode},
 * a message when it failed, the raft index, and what the operation returns. The state machine
 * keeps the answers of exactly-once writes, so a retry gets the same object back. Do not change
 * one after it was built.
 */
public final class KvResp implements Encodable {

    private int code;
    private String message;
    private long raftIndex;
    private KvNode node;
    private List<KvNode> nodes;
    private int failedPosition;
    private int lockState;
    private long fencingToken;
    private long leaseExpireAtMillis;
    private boolean more;

    private byte[] messageUtf8;
    /**
     * -1 until computed. Volatile because the same message may be encoded by several threads (a log
     * entry sent to several followers, a recorded answer sent again): the UTF-8 copies are written
     * before it, so a thread that reads a computed size also sees them; one that reads -1 computes
     * the same values itself.
     */
    private volatile int size = -1;

    public KvResp() {
    }

    public static KvResp success(long raftIndex) {
        KvResp r = new KvResp();
        r.raftIndex = raftIndex;
        return r;
    }

    public static KvResp success(long raftIndex, KvNode node) {
        KvResp r = success(raftIndex);
        r.node = node;
        return r;
    }

    public static KvResp fail(KvCode code, long raftIndex, String message) {
        KvResp r = new KvResp();
        r.code = code.number();
        r.raftIndex = raftIndex;
        r.message = message;
        return r;
    }

    public KvResp nodes(List<KvNode> nodes) {
        this.nodes = nodes;
        size = -1;
        return this;
    }

    /** LIST: children after the last one in {@link #nodes()} were left out (by the limit, or to fit the answer). */
    public KvResp more(boolean more) {
        this.more = more;
        size = -1;
        return this;
    }

    public KvResp failedPosition(int oneBasedPosition) {
        this.failedPosition = oneBasedPosition;
        size = -1;
        return this;
    }

    /** For lock answers: the {@code LockState} number, the fencing token and when the lease runs out. */
    public KvResp lock(int lockState, long fencingToken, long leaseExpireAtMillis) {
        this.lockState = lockState;
        this.fencingToken = fencingToken;
        this.leaseExpireAtMillis = leaseExpireAtMillis;
        size = -1;
        return this;
    }

    /** {@code LockState}: the caller holds the lock. */
    public static final int LOCK_GRANTED = 1;
    /** {@code LockState}: the caller waits in the queue for a grant push. */
    public static final int LOCK_QUEUED = 2;
    /** {@code LockState}: another client holds it and the caller did not wait. */
    public static final int LOCK_NOT_ACQUIRED = 3;

    /** The code, or null for a number this version does not know ({@link #codeNumber()}). */
    public KvCode code() {
        return KvCode.of(code);
    }

    public int codeNumber() {
        return code;
    }

    public boolean isSuccess() {
        return code == 0;
    }

    /** The failure message, or null. */
    public String message() {
        return message;
    }

    public long raftIndex() {
        return raftIndex;
    }

    /** The node for single-key operations, or null. */
    public KvNode node() {
        return node;
    }

    /** The nodes of BATCH_GET and LIST; never null. */
    public List<KvNode> nodes() {
        return nodes == null ? Collections.<KvNode>emptyList() : nodes;
    }

    /** For a failed batch: the 1-based position of the key that failed; 0 otherwise. */
    public int failedPosition() {
        return failedPosition;
    }

    public int lockState() {
        return lockState;
    }

    public long fencingToken() {
        return fencingToken;
    }

    public long leaseExpireAtMillis() {
        return leaseExpireAtMillis;
    }

    /** LIST: whether more children follow the last one returned; ask again starting after its key. */
    public boolean more() {
        return more;
    }

    /** Throws the {@link KvException} this answer stands for, if it is a failure. */
    public KvResp throwIfFailed(String key) {
        if (code != 0) {
            throw new KvException(code, key, message);
        }
        return this;
    }

    @Override
    public int encodedSize() {
        int sz = size;
        if (sz < 0) {
            messageUtf8 = message == null ? null : message.getBytes(StandardCharsets.UTF_8);
            sz = PbUtil.sizeOfInt32Field(1, code) + PbUtil.sizeOfBytesField(2, messageUtf8)
                    + PbUtil.sizeOfInt64Field(3, raftIndex) + PbUtil.sizeOfMessageField(4, node)
                    + PbUtil.sizeOfRepeatedMessageField(5, nodes) + PbUtil.sizeOfInt32Field(6, failedPosition)
                    + PbUtil.sizeOfInt32Field(7, lockState) + PbUtil.sizeOfInt64Field(8, fencingToken)
                    + PbUtil.sizeOfInt64Field(9, leaseExpireAtMillis) + PbUtil.sizeOfBoolField(10, more);
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
                if (!c.int32Field(dest, 1, code)) {
                    return false;
                }
            case 1:
                if (!c.bytesField(dest, 2, messageUtf8)) {
                    return false;
                }
            case 2:
                if (!c.int64Field(dest, 3, raftIndex)) {
                    return false;
                }
            case 3:
                if (!c.messageField(dest, 4, node)) {
                    return false;
                }
            case 4:
                if (!c.repeatedMessageField(dest, 5, nodes)) {
                    return false;
                }
            case 5:
                if (!c.int32Field(dest, 6, failedPosition)) {
                    return false;
                }
            case 6:
                if (!c.int32Field(dest, 7, lockState)) {
                    return false;
                }
            case 7:
                if (!c.int64Field(dest, 8, fencingToken)) {
                    return false;
                }
            case 8:
                if (!c.int64Field(dest, 9, leaseExpireAtMillis)) {
                    return false;
                }
            case 9:
                if (!c.boolField(dest, 10, more)) {
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
        if (!(o instanceof KvResp)) {
            return false;
        }
        KvResp r = (KvResp) o;
        return code == r.code && raftIndex == r.raftIndex && failedPosition == r.failedPosition
                && lockState == r.lockState && fencingToken == r.fencingToken
                && leaseExpireAtMillis == r.leaseExpireAtMillis && more == r.more
                && Objects.equals(message == null ? "" : message, r.message == null ? "" : r.message)
                && Objects.equals(node, r.node) && nodes().equals(r.nodes());
    }

    @Override
    public int hashCode() {
        return code * 31 + Long.hashCode(raftIndex);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("KvResp{").append(KvCode.nameOf(code)).append(" index=").append(raftIndex);
        if (message != null) {
            sb.append(" '").append(message).append('\'');
        }
        if (node != null) {
            sb.append(' ').append(node);
        }
        if (nodes != null) {
            sb.append(" nodes=").append(nodes.size());
        }
        if (more) {
            sb.append(" more");
        }
        if (lockState != 0) {
            sb.append(" lock=").append(lockState).append(" token=").append(fencingToken);
        }
        return sb.append('}').toString();
    }

    /** Decodes a KvResp; reusable message after message. */
    public static final class Decoder extends PbCallback<KvResp> {
        /** Made on the first node field: most answers (a put's) carry none, and a decoder is made per answer. */
        private KvNode.Decoder nodeDecoder;
        private KvResp r;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 2:
                case 4:
                case 5:
                    return PbWireType.LEN;
                case 1:
                case 3:
                case 6:
                case 7:
                case 8:
                case 9:
                case 10:
                    return PbWireType.VARINT;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            r = new KvResp();
        }

        @Override
        protected void readVarint(int field, long v) {
            switch (field) {
                case 1:
                    r.code = (int) v;
                    break;
                case 3:
                    r.raftIndex = v;
                    break;
                case 6:
                    r.failedPosition = (int) v;
                    break;
                case 7:
                    r.lockState = (int) v;
                    break;
                case 8:
                    r.fencingToken = v;
                    break;
                case 9:
                    r.leaseExpireAtMillis = v;
                    break;
                default:
                    r.more = v != 0;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 2) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    r.message = s;
                }
                return;
            }
            if (nodeDecoder == null) {
                nodeDecoder = new KvNode.Decoder();
            }
            KvNode n = parseNested(piece, fieldLength, offsetInField, nodeDecoder);
            if (n != null) {
                if (field == 4) {
                    r.node = n;
                } else {
                    if (r.nodes == null) {
                        r.nodes = new ArrayList<>();
                    }
                    r.nodes.add(n);
                }
            }
        }

        @Override
        protected KvResp end() {
            KvResp out = r;
            r = null;
            return out;
        }
    }
}
