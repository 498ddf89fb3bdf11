package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;

/** The body of a RAFT_STATUS request (message RaftStatusRequest in raft.proto). */
public final class RaftStatusRequest implements Encodable {

    private final int groupId;

    public RaftStatusRequest(int groupId) {
        this.groupId = groupId;
    }

    public int groupId() {
        return groupId;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfInt32Field(1, groupId);
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        if (c.stage == 0 && !c.int32Field(dest, 1, groupId)) {
            return false;
        }
        return true;
    }

    /** Reads a RaftStatusRequest. */
    public static final class Decoder extends PbCallback<RaftStatusRequest> {
        private int groupId;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            groupId = (int) value;
        }

        @Override
        protected RaftStatusRequest end() {
            return new RaftStatusRequest(groupId);
        }
    }
}
