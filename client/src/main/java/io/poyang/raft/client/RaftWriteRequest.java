package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbUtil;

import java.nio.ByteBuffer;

/**
 * The body of a RAFT_WRITE request (message RaftWriteRequest in raft.proto): the group, what the
 * command is ({@code bizType}) and the command itself in the state machine's own encoding. The
 * command is written straight from its {@link Encodable}, so it is never copied into a byte array
 * first. Immutable; one instance can be resent after a NOT_LEADER answer.
 */
public final class RaftWriteRequest implements Encodable {

    private final int groupId;
    private final int bizType;
    private final Encodable body;
    private final int bodySize;
    private final long clientId;
    private final long requestSeq;
    private final int size;

    public RaftWriteRequest(int groupId, int bizType, Encodable body) {
        this(groupId, bizType, body, 0, 0);
    }

    /** With a dedup id ({@code clientId}, {@code requestSeq}), reserved for exactly-once writes. */
    public RaftWriteRequest(int groupId, int bizType, Encodable body, long clientId, long requestSeq) {
        this.groupId = groupId;
        this.bizType = bizType;
        this.body = body;
        this.bodySize = body == null ? 0 : body.encodedSize();
        this.clientId = clientId;
        this.requestSeq = requestSeq;
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt32Field(2, bizType)
                + (bodySize == 0 ? 0 : PbUtil.sizeOfLenField(3, bodySize))
                + PbUtil.sizeOfInt64Field(4, clientId) + PbUtil.sizeOfInt64Field(5, requestSeq);
    }

    public int groupId() {
        return groupId;
    }

    public int bizType() {
        return bizType;
    }

    public Encodable body() {
        return body;
    }

    public long clientId() {
        return clientId;
    }

    public long requestSeq() {
        return requestSeq;
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
                if (!c.int32Field(dest, 1, groupId)) {
                    return false;
                }
                // fall through
            case 1:
                if (!c.int32Field(dest, 2, bizType)) {
                    return false;
                }
                // fall through
            case 2:
                // a bytes field on the wire; proto3 leaves an empty one out
                if (bodySize == 0) {
                    c.stage++;
                } else if (!c.messageField(dest, 3, body)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int64Field(dest, 4, clientId)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int64Field(dest, 5, requestSeq)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "RaftWriteRequest(group " + groupId + ", bizType " + bizType + ", " + bodySize + " bytes)";
    }
}
