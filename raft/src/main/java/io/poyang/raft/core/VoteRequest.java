package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.ReqContext;

import java.nio.ByteBuffer;

/** VOTE (101): message VoteRequest of raft.proto, for a pre-vote or a vote. */
public final class VoteRequest implements Encodable {

    final int groupId;
    final int term;
    final int candidateId;
    final long lastLogIndex;
    final int lastLogTerm;
    final boolean preVote;
    /** The candidate stands because the leader handed over (TimeoutNow): voters need not wait for the leader to go silent. */
    final boolean leaderTransfer;
    private final int size;
    /** Set on the receiving side: where the answer goes. */
    ReqContext context;

    public VoteRequest(int groupId, int term, int candidateId, long lastLogIndex, int lastLogTerm, boolean preVote) {
        this(groupId, term, candidateId, lastLogIndex, lastLogTerm, preVote, false);
    }

    public VoteRequest(int groupId, int term, int candidateId, long lastLogIndex, int lastLogTerm, boolean preVote,
                       boolean leaderTransfer) {
        this.leaderTransfer = leaderTransfer;
        this.groupId = groupId;
        this.term = term;
        this.candidateId = candidateId;
        this.lastLogIndex = lastLogIndex;
        this.lastLogTerm = lastLogTerm;
        this.preVote = preVote;
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt32Field(2, term)
                + PbUtil.sizeOfInt32Field(3, candidateId) + PbUtil.sizeOfInt64Field(4, lastLogIndex)
                + PbUtil.sizeOfInt32Field(5, lastLogTerm) + PbUtil.sizeOfBoolField(6, preVote)
                + PbUtil.sizeOfBoolField(7, leaderTransfer);
    }

    public int groupId() {
        return groupId;
    }

    public int candidateId() {
        return candidateId;
    }

    public void setContext(ReqContext context) {
        this.context = context;
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
                if (!c.int32Field(dest, 2, term)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int32Field(dest, 3, candidateId)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int64Field(dest, 4, lastLogIndex)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, lastLogTerm)) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.boolField(dest, 6, preVote)) {
                    return false;
                }
                // fall through
            case 6:
                if (!c.boolField(dest, 7, leaderTransfer)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return (preVote ? "PreVote" : "Vote") + "(group " + groupId + ", term " + term + ", candidate " + candidateId
                + ", last " + lastLogIndex + "/" + lastLogTerm + (leaderTransfer ? ", leader transfer" : "") + ")";
    }

    /** Reads a VoteRequest. */
    public static final class Decoder extends PbCallback<VoteRequest> {
        private int groupId;
        private int term;
        private int candidateId;
        private long lastLogIndex;
        private int lastLogTerm;
        private boolean preVote;
        private boolean leaderTransfer;

        @Override
        protected int wireTypeOf(int field) {
            return field >= 1 && field <= 7 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            term = 0;
            candidateId = 0;
            lastLogIndex = 0;
            lastLogTerm = 0;
            preVote = false;
            leaderTransfer = false;
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 1:
                    groupId = (int) value;
                    break;
                case 2:
                    term = (int) value;
                    break;
                case 3:
                    candidateId = (int) value;
                    break;
                case 4:
                    lastLogIndex = value;
                    break;
                case 5:
                    lastLogTerm = (int) value;
                    break;
                case 6:
                    preVote = value != 0;
                    break;
                default:
                    leaderTransfer = value != 0;
                    break;
            }
        }

        @Override
        protected VoteRequest end() {
            return new VoteRequest(groupId, term, candidateId, lastLogIndex, lastLogTerm, preVote, leaderTransfer);
        }
    }
}
