package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The answer to INSTALL_SNAPSHOT: message InstallSnapshotResponse of raft.proto. */
public final class InstallSnapshotResponse implements Encodable {

    public static final DecoderFactory<InstallSnapshotResponse> DECODER = Decoder::new;

    final int term;
    final boolean success;
    final long nextOffset;
    /** Why the follower refused the chunk, for the leader's log; empty on success. */
    final String reason;
    private final byte[] reasonUtf8;

    public InstallSnapshotResponse(int term, boolean success, long nextOffset) {
        this(term, success, nextOffset, "");
    }

    InstallSnapshotResponse(int term, boolean success, long nextOffset, String reason) {
        this.term = term;
        this.success = success;
        this.nextOffset = nextOffset;
        this.reason = reason == null ? "" : reason;
        this.reasonUtf8 = this.reason.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfInt32Field(1, term) + PbUtil.sizeOfBoolField(2, success)
                + PbUtil.sizeOfInt64Field(3, nextOffset) + PbUtil.sizeOfBytesField(4, reasonUtf8);
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
            case 3:
                if (!c.bytesField(dest, 4, reasonUtf8)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "InstallSnapshotResponse(term " + term + ", " + (success ? "ok" : "refused") + ", next " + nextOffset
                + (reason.isEmpty() ? "" : ", " + reason) + ")";
    }

    static final class Decoder extends PbCallback<InstallSnapshotResponse> {
        private int term;
        private boolean success;
        private long nextOffset;
        private String reason;

        @Override
        protected int wireTypeOf(int field) {
            if (field == 4) {
                return PbWireType.LEN;
            }
            return field >= 1 && field <= 3 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            term = 0;
            success = false;
            nextOffset = 0;
            reason = "";
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            String s = parseString(piece, fieldLength, offsetInField);
            if (s != null) {
                reason = s;
            }
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
            return new InstallSnapshotResponse(term, success, nextOffset, reason);
        }
    }
}
