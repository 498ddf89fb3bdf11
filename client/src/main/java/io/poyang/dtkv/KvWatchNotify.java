package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Server to client: watched keys changed (message {@code KvWatchNotify}). Every state in it was
 * read at {@link #raftIndex()}; a client keeps, per key, the largest index it has seen and ignores
 * states older than that (a node that lags behind after a failover may send them).
 *
 * <p>{@link #moved()}: the node no longer serves this connection's watches of the group (it lost
 * the leadership, or its replica failed) and has dropped them; the client registers them again
 * with the leader. Such a notification has no events.
 */
public final class KvWatchNotify implements Encodable {

    private final int groupId;
    private final long raftIndex;
    private final List<KvWatchEvent> events;
    private final boolean moved;
    private final int size;

    public KvWatchNotify(int groupId, long raftIndex, List<KvWatchEvent> events) {
        this(groupId, raftIndex, events, false);
    }

    public KvWatchNotify(int groupId, long raftIndex, List<KvWatchEvent> events, boolean moved) {
        this.groupId = groupId;
        this.raftIndex = raftIndex;
        this.events = events;
        this.moved = moved;
        this.size = PbUtil.sizeOfInt32Field(1, groupId) + PbUtil.sizeOfInt64Field(2, raftIndex)
                + PbUtil.sizeOfRepeatedMessageField(3, events) + PbUtil.sizeOfBoolField(4, moved);
    }

    /** The node dropped this connection's watches of the group: register them with the leader. */
    public boolean moved() {
        return moved;
    }

    public int groupId() {
        return groupId;
    }

    public long raftIndex() {
        return raftIndex;
    }

    public List<KvWatchEvent> events() {
        return events;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.int32Field(dest, 1, groupId)) {
                    return false;
                }
            case 1:
                if (!c.int64Field(dest, 2, raftIndex)) {
                    return false;
                }
            case 2:
                if (!c.repeatedMessageField(dest, 3, events)) {
                    return false;
                }
            case 3:
                if (!c.boolField(dest, 4, moved)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KvWatchNotify)) {
            return false;
        }
        KvWatchNotify n = (KvWatchNotify) o;
        return groupId == n.groupId && raftIndex == n.raftIndex && events.equals(n.events) && moved == n.moved;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(raftIndex);
    }

    @Override
    public String toString() {
        return "KvWatchNotify{index=" + raftIndex + (moved ? " moved" : "") + " " + events + "}";
    }

    /** Decodes a KvWatchNotify. */
    public static final class Decoder extends PbCallback<KvWatchNotify> {
        private final KvWatchEvent.Decoder eventDecoder = new KvWatchEvent.Decoder();
        private int groupId;
        private long raftIndex;
        private List<KvWatchEvent> events;
        private boolean moved;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 4:
                    return PbWireType.VARINT;
                case 3:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            groupId = 0;
            raftIndex = 0;
            events = new ArrayList<>();
            moved = false;
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 1) {
                groupId = (int) v;
            } else if (field == 2) {
                raftIndex = v;
            } else {
                moved = v != 0;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            KvWatchEvent e = parseNested(piece, fieldLength, offsetInField, eventDecoder);
            if (e != null) {
                events.add(e);
            }
        }

        @Override
        protected KvWatchNotify end() {
            return new KvWatchNotify(groupId, raftIndex, events, moved);
        }
    }
}
