package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;

/** The answer to INSTALL_SNAPSHOT: message InstallSnapshotResponse of raft.proto. */
public final class InstallSnapshotResponse implements Encodable {

    public static final DecoderFactory<InstallSnapshotResponse> DECODER = Decoder::new;

    final int term;
    final boolean success;
    final long nextOffset;

    public InstallSnapshotResponse(int term, boolean success, long nextOffset) {
        this.term = term;
        this.success = success;
        this.nextOffset = nextOffset;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfInt32Field(1, term) + PbUtil.sizeOfBoolField(2, success)
                + PbUtil.sizeOfInt64Field(3, nextOffset);
    }

    @Override
    @SuppressWarnings("fallthrough")
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.int32Field(dest, 1, term)) {
                    return false;
                }
                // fall through
            case 1:
                if (!c.boolField(dest, 2, success)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int64Field(dest, 3, nextOffset)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "InstallSnapshotResponse(term " + term + ", " + (success ? "ok" : "refused") + ", next " + nextOffset + ")";
    }

    static final class Decoder extends PbCallback<InstallSnapshotResponse> {
        private int term;
        private boolean success;
        private long nextOffset;

        @Override
        protected int wireTypeOf(int field) {
            return field >= 1 && field <= 3 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            term = 0;
            success = false;
            nextOffset = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            if (field == 1) {
                term = (int) value;
            } else if (field == 2) {
                success = value != 0;
            } else {
                nextOffset = value;
            }
        }

        @Override
        protected InstallSnapshotResponse end() {
            return new InstallSnapshotResponse(term, success, nextOffset);
        }
    }
}
