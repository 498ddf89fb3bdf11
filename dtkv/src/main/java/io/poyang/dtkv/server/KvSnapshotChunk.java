package io.poyang.dtkv.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.dtkv.KvNode;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One piece of a DtKV snapshot (message {@code KvSnapshotChunk} in docs/proto/dtkv.proto): locks
 * and client sessions first, then nodes (parents before children), each chunk about the configured
 * size; the last chunk has {@link #isLast()}. Every chunk repeats the snapshot index and log clock. Immutable.
 */
public final class KvSnapshotChunk implements Encodable {

    private final long snapshotIndex;
    private final long logClockMillis;
    private final List<KvNode> nodes;
    private final List<KvLockRecord> locks;
    private final List<KvSessionRecord> sessions;
    private final boolean last;
    private final int size;

    KvSnapshotChunk(long snapshotIndex, long logClockMillis, List<KvNode> nodes, List<KvLockRecord> locks,
                    List<KvSessionRecord> sessions, boolean last) {
        this.snapshotIndex = snapshotIndex;
        this.logClockMillis = logClockMillis;
        this.nodes = nodes == null ? Collections.<KvNode>emptyList() : nodes;
        this.locks = locks == null ? Collections.<KvLockRecord>emptyList() : locks;
        this.sessions = sessions == null ? Collections.<KvSessionRecord>emptyList() : sessions;
        this.last = last;
        this.size = PbUtil.sizeOfInt64Field(1, snapshotIndex) + PbUtil.sizeOfInt64Field(2, logClockMillis)
                + PbUtil.sizeOfRepeatedMessageField(3, this.nodes) + PbUtil.sizeOfRepeatedMessageField(4, this.locks)
                + PbUtil.sizeOfRepeatedMessageField(5, this.sessions) + PbUtil.sizeOfBoolField(6, last);
    }

    public long snapshotIndex() {
        return snapshotIndex;
    }

    public long logClockMillis() {
        return logClockMillis;
    }

    public List<KvNode> nodes() {
        return nodes;
    }

    int lockCount() {
        return locks.size();
    }

    List<KvLockRecord> locks() {
        return locks;
    }

    List<KvSessionRecord> sessions() {
        return sessions;
    }

    public boolean isLast() {
        return last;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.int64Field(dest, 1, snapshotIndex)) {
                    return false;
                }
            case 1:
                if (!c.int64Field(dest, 2, logClockMillis)) {
                    return false;
                }
            case 2:
                if (!c.repeatedMessageField(dest, 3, nodes)) {
                    return false;
                }
            case 3:
                if (!c.repeatedMessageField(dest, 4, locks)) {
                    return false;
                }
            case 4:
                if (!c.repeatedMessageField(dest, 5, sessions)) {
                    return false;
                }
            case 5:
                if (!c.boolField(dest, 6, last)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "KvSnapshotChunk{index=" + snapshotIndex + " nodes=" + nodes.size() + " locks=" + locks.size()
                + " sessions=" + sessions.size() + (last ? " last" : "") + "}";
    }

    /** Decodes a chunk (a follower installing a snapshot, or a restart reading one from disk). */
    public static final class Decoder extends PbCallback<KvSnapshotChunk> {
        private final KvNode.Decoder nodeDecoder = new KvNode.Decoder();
        private final KvLockRecord.Decoder lockDecoder = new KvLockRecord.Decoder();
        private final KvSessionRecord.Decoder sessionDecoder = new KvSessionRecord.Decoder();
        private long index;
        private long clock;
        private List<KvNode> nodes;
        private List<KvLockRecord> locks;
        private List<KvSessionRecord> sessions;
        private boolean last;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 6:
                    return PbWireType.VARINT;
                case 3:
                case 4:
                case 5:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            index = 0;
            clock = 0;
            nodes = new ArrayList<>();
            locks = new ArrayList<>();
            sessions = new ArrayList<>();
            last = false;
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 1) {
                index = v;
            } else if (field == 2) {
                clock = v;
            } else {
                last = v != 0;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 3) {
                KvNode n = parseNested(piece, fieldLength, offsetInField, nodeDecoder);
                if (n != null) {
                    nodes.add(n);
                }
            } else if (field == 4) {
                KvLockRecord l = parseNested(piece, fieldLength, offsetInField, lockDecoder);
                if (l != null) {
                    locks.add(l);
                }
            } else {
                KvSessionRecord s = parseNested(piece, fieldLength, offsetInField, sessionDecoder);
                if (s != null) {
                    sessions.add(s);
                }
            }
        }

        @Override
        protected KvSnapshotChunk end() {
            return new KvSnapshotChunk(index, clock, nodes, locks, sessions, last);
        }
    }
}
