package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Where a raft group stands on one node (message RaftStatusResponse in raft.proto): term, leader,
 * role, commit and applied indexes, members, and why the group failed there if it did. Immutable.
 */
public final class RaftStatusResponse implements Encodable {

    public static final DecoderFactory<RaftStatusResponse> DECODER = Decoder::new;

    private final int groupId;
    private final int nodeId;
    private final int term;
    private final int leaderId;
    private final RaftRole role;
    private final long commitIndex;
    private final long lastApplied;
    private final long lastLogIndex;
    private final int[] members;
    private final long[] membersAsLongs;
    private final String failure;
    private final byte[] failureUtf8;
    private final int size;

    public RaftStatusResponse(int groupId, int nodeId, int term, int leaderId, RaftRole role, long commitIndex,
                              long lastApplied, long lastLogIndex, int[] members) {
        this(groupId, nodeId, term, leaderId, role, commitIndex, lastApplied, lastLogIndex, members, "");
    }

    /**
     * @param failure why the group stopped taking part on this node (it needs a restart of the group
     *                or the node), or "" (null is taken as "") when it did not
     */
    public RaftStatusResponse(int groupId, int nodeId, int term, int leaderId, RaftRole role, long commitIndex,
                              long lastApplied, long lastLogIndex, int[] members, String failure) {
        this.groupId = groupId;
        this.nodeId = nodeId;
        this.term = term;
        this.leaderId = leaderId;
        this.role = role;
        this.commitIndex = commitIndex;
        this.lastApplied = lastApplied;
        this.lastLogIndex = lastLogIndex;
        this.members = members.clone();
        this.membersAsLongs = new long[members.length];
        for (int i = 0; i < members.length; i++) {
            membersAsLongs[i] = members[i];
        }
        this.failure = failure == null ? "" : failure;
        this.failureUtf8 = this.failure.getBytes(StandardCharsets.UTF_8);
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt32Field(2, nodeId)
                + PbUtil.sizeOfInt32Field(3, term) + PbUtil.sizeOfInt32Field(4, leaderId)
                + PbUtil.sizeOfInt32Field(5, role.code()) + PbUtil.sizeOfInt64Field(6, commitIndex)
                + PbUtil.sizeOfInt64Field(7, lastApplied) + PbUtil.sizeOfInt64Field(8, lastLogIndex)
                + PbUtil.sizeOfPackedVarint64Field(9, membersAsLongs, membersAsLongs.length)
                + PbUtil.sizeOfBytesField(10, failureUtf8);
    }

    public int groupId() {
        return groupId;
    }

    public int nodeId() {
        return nodeId;
    }

    public int term() {
        return term;
    }

    /** The leader's node id, or 0 when the node does not know one. */
    public int leaderId() {
        return leaderId;
    }

    public RaftRole role() {
        return role;
    }

    public long commitIndex() {
        return commitIndex;
    }

    public long lastApplied() {
        return lastApplied;
    }

    public long lastLogIndex() {
        return lastLogIndex;
    }

    public int[] members() {
        return members.clone();
    }

    /**
     * Why the group failed on this node and takes no further part until the node restarts (a full or
     * broken disk, a state machine that threw), or "" when it did not. Older servers never say.
     */
    public String failure() {
        return failure;
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
                if (!c.int32Field(dest, 2, nodeId)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int32Field(dest, 3, term)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int32Field(dest, 4, leaderId)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, role.code())) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.int64Field(dest, 6, commitIndex)) {
                    return false;
                }
                // fall through
            case 6:
                if (!c.int64Field(dest, 7, lastApplied)) {
                    return false;
                }
                // fall through
            case 7:
                if (!c.int64Field(dest, 8, lastLogIndex)) {
                    return false;
                }
                // fall through
            case 8:
                if (!c.packedInt64Field(dest, 9, membersAsLongs, membersAsLongs.length)) {
                    return false;
                }
                // fall through
            case 9:
                if (!c.bytesField(dest, 10, failureUtf8)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "RaftStatus(group " + groupId + " on node " + nodeId + ": " + role + ", term " + term + ", leader "
                + leaderId + ", commit " + commitIndex + ", applied " + lastApplied + ", last log " + lastLogIndex
                + ", members " + Arrays.toString(members) + (failure.isEmpty() ? "" : ", FAILED: " + failure) + ")";
    }

    /** Reads a RaftStatusResponse. */
    public static final class Decoder extends PbCallback<RaftStatusResponse> {
        private int groupId;
        private int nodeId;
        private int term;
        private int leaderId;
        private int role;
        private long commitIndex;
        private long lastApplied;
        private long lastLogIndex;
        private int[] members;
        private int memberCount;
        private String failure;
        private final LongSink memberSink = v -> addMember((int) v);

        @Override
        protected int wireTypeOf(int field) {
            if (field >= 1 && field <= 8) {
                return PbWireType.VARINT;
            }
            if (field == 9) {
                return PbWireType.PACKED_VARINT;
            }
            return field == 10 ? PbWireType.LEN : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            nodeId = 0;
            term = 0;
            leaderId = 0;
            role = 0;
            commitIndex = 0;
            lastApplied = 0;
            lastLogIndex = 0;
            members = new int[4];
            memberCount = 0;
            failure = "";
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 1:
                    groupId = (int) value;
                    break;
                case 2:
                    nodeId = (int) value;
                    break;
                case 3:
                    term = (int) value;
                    break;
                case 4:
                    leaderId = (int) value;
                    break;
                case 5:
                    role = (int) value;
                    break;
                case 6:
                    commitIndex = value;
                    break;
                case 7:
                    lastApplied = value;
                    break;
                case 8:
                    lastLogIndex = value;
                    break;
                case 9:
                    addMember((int) value);
                    break;
                default:
                    break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 10) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    failure = s;
                }
                return;
            }
            parsePackedVarints(piece, fieldLength, offsetInField, memberSink);
        }

        private void addMember(int id) {
            if (memberCount == members.length) {
                members = Arrays.copyOf(members, memberCount * 2);
            }
            members[memberCount++] = id;
        }

        @Override
        protected RaftStatusResponse end() {
            return new RaftStatusResponse(groupId, nodeId, term, leaderId, RaftRole.of(role), commitIndex, lastApplied,
                    lastLogIndex, Arrays.copyOf(members, memberCount), failure);
        }
    }
}
