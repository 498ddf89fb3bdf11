package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;

/** The answer to APPEND_ENTRIES: message AppendEntriesResponse of raft.proto. */
public final class AppendEntriesResponse implements Encodable {

    public static final DecoderFactory<AppendEntriesResponse> DECODER = Decoder::new;

    final int term;
    final boolean success;
    final long matchIndex;
    final long hintIndex;
    final int hintTerm;

    public AppendEntriesResponse(int term, boolean success, long matchIndex, long hintIndex, int hintTerm) {
        this.term = term;
        this.success = success;
        this.matchIndex = matchIndex;
        this.hintIndex = hintIndex;
        this.hintTerm = hintTerm;
    }

    static AppendEntriesResponse success(int term, long matchIndex) {
        return new AppendEntriesResponse(term, true, matchIndex, 0, 0);
    }

    static AppendEntriesResponse mismatch(int term, long hintIndex, int hintTerm) {
        return new AppendEntriesResponse(term, false, 0, hintIndex, hintTerm);
    }

    /** A refusal because the request's term is stale: the leader learns the newer term. */
    static AppendEntriesResponse staleTerm(int term) {
        return new AppendEntriesResponse(term, false, 0, -1, 0);
    }

    /** The hint of {@link #refused}: below any index, so older leaders read it as a stale-term answer. */
    static final long HINT_REFUSED = -2;

    /**
     * The follower does not take entries from this sender at all (its group failed), whatever the
     * term: not an acknowledgement of the sender's leadership.
     */
    static AppendEntriesResponse refused(int term) {
        return new AppendEntriesResponse(term, false, 0, HINT_REFUSED, 0);
    }

    /** Whether this is a {@link #refused} answer. */
    boolean isRefusal() {
        return !success && hintIndex == HINT_REFUSED;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfInt32Field(1, term) + PbUtil.sizeOfBoolField(2, success)
                + PbUtil.sizeOfInt64Field(3, matchIndex) + PbUtil.sizeOfInt64Field(4, hintIndex)
                + PbUtil.sizeOfInt32Field(5, hintTerm);
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
                if (!c.int64Field(dest, 3, matchIndex)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int64Field(dest, 4, hintIndex)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, hintTerm)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return success ? "AppendOk(term " + term + ", match " + matchIndex + ")"
                : "AppendRefused(term " + term + ", hint " + hintIndex + "/" + hintTerm + ")";
    }

    static final class Decoder extends PbCallback<AppendEntriesResponse> {
        private int term;
        private boolean success;
        private long matchIndex;
        private long hintIndex;
        private int hintTerm;

        @Override
        protected int wireTypeOf(int field) {
            return field >= 1 && field <= 5 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            term = 0;
            success = false;
            matchIndex = 0;
            hintIndex = 0;
            hintTerm = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 1:
                    term = (int) value;
                    break;
                case 2:
                    success = value != 0;
                    break;
                case 3:
                    matchIndex = value;
                    break;
                case 4:
                    hintIndex = value;
                    break;
                default:
                    hintTerm = (int) value;
                    break;
            }
        }

        @Override
        protected AppendEntriesResponse end() {
            return new AppendEntriesResponse(term, success, matchIndex, hintIndex, hintTerm);
        }
    }
}
