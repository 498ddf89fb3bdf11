package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.ReqContext;

import java.nio.ByteBuffer;
import java.util.Arrays;

/** INSTALL_SNAPSHOT (103): one chunk of a snapshot's data file; message InstallSnapshotRequest of raft.proto. */
public final class InstallSnapshotRequest implements Encodable {

    final int groupId;
    final int term;
    final int leaderId;
    final long lastIndex;
    final int lastTerm;
    final int[] members;
    private final long[] membersAsLongs;
    final long offset;
    final long totalBytes;
    final byte[] data;
    final int dataLength;
    final boolean done;
    /** The configuration as of the snapshot (MembersConfig bytes); null when not sent. */
    final byte[] config;
    /** The data file's layout ({@link io.poyang.raft.sm.SnapshotMeta#format()}). */
    final int format;
    private final int size;
    /** Set on the receiving side. */
    ReqContext context;

    InstallSnapshotRequest(int groupId, int term, int leaderId, long lastIndex, int lastTerm, int[] members, long offset,
                           long totalBytes, byte[] data, int dataLength, boolean done) {
        this(groupId, term, leaderId, lastIndex, lastTerm, members, offset, totalBytes, data, dataLength, done, null, 0);
    }

    InstallSnapshotRequest(int groupId, int term, int leaderId, long lastIndex, int lastTerm, int[] members, long offset,
                           long totalBytes, byte[] data, int dataLength, boolean done, byte[] config, int format) {
        this.config = config;
        this.format = format;
        this.groupId = groupId;
        this.term = term;
        this.leaderId = leaderId;
        this.lastIndex = lastIndex;
        this.lastTerm = lastTerm;
        this.members = members;
        this.membersAsLongs = new long[members.length];
        for (int i = 0; i < members.length; i++) {
            membersAsLongs[i] = members[i];
        }
        this.offset = offset;
        this.totalBytes = totalBytes;
        this.data = data;
        this.dataLength = dataLength;
        this.done = done;
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt32Field(2, term)
                + PbUtil.sizeOfInt32Field(3, leaderId) + PbUtil.sizeOfInt64Field(4, lastIndex)
                + PbUtil.sizeOfInt32Field(5, lastTerm)
                + PbUtil.sizeOfPackedVarint64Field(6, membersAsLongs, membersAsLongs.length)
                + PbUtil.sizeOfInt64Field(7, offset) + PbUtil.sizeOfInt64Field(8, totalBytes)
                + (dataLength == 0 ? 0 : PbUtil.sizeOfLenField(9, dataLength)) + PbUtil.sizeOfBoolField(10, done)
                + PbUtil.sizeOfBytesField(11, config) + PbUtil.sizeOfInt32Field(12, format);
    }

    public int groupId() {
        return groupId;
    }

    public int leaderId() {
        return leaderId;
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
                if (!c.int32Field(dest, 3, leaderId)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.int64Field(dest, 4, lastIndex)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.int32Field(dest, 5, lastTerm)) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.packedInt64Field(dest, 6, membersAsLongs, membersAsLongs.length)) {
                    return false;
                }
                // fall through
            case 6:
                if (!c.int64Field(dest, 7, offset)) {
                    return false;
                }
                // fall through
            case 7:
                if (!c.int64Field(dest, 8, totalBytes)) {
                    return false;
                }
                // fall through
            case 8:
                if (!c.bytesField(dest, 9, data, 0, dataLength)) {
                    return false;
                }
                // fall through
            case 9:
                if (!c.boolField(dest, 10, done)) {
                    return false;
                }
                // fall through
            case 10:
                if (config != null && !c.bytesField(dest, 11, config)) {
                    return false;
                }
                // fall through
            case 11:
                if (!c.int32Field(dest, 12, format)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "InstallSnapshot(group " + groupId + ", term " + term + ", snapshot " + lastIndex + "/" + lastTerm
                + ", offset " + offset + " of " + totalBytes + ", " + dataLength + " bytes" + (done ? ", done" : "") + ")";
    }

    /** Reads an InstallSnapshotRequest. */
    public static final class Decoder extends PbCallback<InstallSnapshotRequest> {
        private int groupId;
        private int term;
        private int leaderId;
        private long lastIndex;
        private int lastTerm;
        private int[] members;
        private int memberCount;
        private long offset;
        private long totalBytes;
        private byte[] data;
        private boolean done;
        private byte[] config;
        private int format;
        private final LongSink memberSink = v -> addMember((int) v);

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 3:
                case 4:
                case 5:
                case 7:
                case 8:
                case 10:
                case 12:
                    return PbWireType.VARINT;
                case 11:
                    return PbWireType.LEN;
                case 6:
                    return PbWireType.PACKED_VARINT;
                case 9:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            term = 0;
            leaderId = 0;
            lastIndex = 0;
            lastTerm = 0;
            members = new int[4];
            memberCount = 0;
            offset = 0;
            totalBytes = 0;
            data = null;
            done = false;
            config = null;
            format = 0;
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
                    leaderId = (int) value;
                    break;
                case 4:
                    lastIndex = value;
                    break;
                case 5:
                    lastTerm = (int) value;
                    break;
                case 6:
                    addMember((int) value);
                    break;
                case 7:
                    offset = value;
                    break;
                case 8:
                    totalBytes = value;
                    break;
                case 12:
                    format = (int) value;
                    break;
                default:
                    done = value != 0;
                    break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 6) {
                parsePackedVarints(piece, fieldLength, offsetInField, memberSink);
            } else if (field == 11) {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    config = b;
                }
            } else {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    data = b;
                }
            }
        }

        private void addMember(int id) {
            if (memberCount == members.length) {
                members = Arrays.copyOf(members, memberCount * 2);
            }
            members[memberCount++] = id;
        }

        @Override
        protected InstallSnapshotRequest end() {
            byte[] d = data == null ? new byte[0] : data;
            return new InstallSnapshotRequest(groupId, term, leaderId, lastIndex, lastTerm,
                    Arrays.copyOf(members, memberCount), offset, totalBytes, d, d.length, done, config, format);
        }
    }
}
