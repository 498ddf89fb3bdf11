package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;

/** The answer to VOTE: message VoteResponse of raft.proto. */
public final class VoteResponse implements Encodable {

    public static final DecoderFactory<VoteResponse> DECODER = Decoder::new;

    final int term;
    final boolean granted;

    public VoteResponse(int term, boolean granted) {
        this.term = term;
        this.granted = granted;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfInt32Field(1, term) + PbUtil.sizeOfBoolField(2, granted);
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
                if (!c.boolField(dest, 2, granted)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "VoteResponse(term " + term + ", " + (granted ? "granted" : "refused") + ")";
    }

    static final class Decoder extends PbCallback<VoteResponse> {
        private int term;
        private boolean granted;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 || field == 2 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            term = 0;
            granted = false;
        }

        @Override
        protected void readVarint(int field, long value) {
            if (field == 1) {
                term = (int) value;
            } else {
                granted = value != 0;
            }
        }

        @Override
        protected VoteResponse end() {
            return new VoteResponse(term, granted);
        }
    }
}
