package io.poyang.dtkv;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One entry of a {@link KvWatchNotify}: the latest state of a changed key under a watch, or, with
 * {@link #isResync()}, the whole current content of a watched directory (message {@code KvWatchEvent}).
 * A directory too large for one notification is re-sent in parts, one per notification, each but the
 * last with {@link #hasMore()}: the directory's content is then what all the parts hold together.
 */
public final class KvWatchEvent implements Encodable {

    private final String watchKey;
    private final byte[] watchKeyUtf8;
    private final KvNode node;
    private final boolean resync;
    private final List<KvNode> subtree;
    private final boolean more;
    private final boolean continued;
    private final int size;

    public KvWatchEvent(String watchKey, KvNode node, boolean resync, List<KvNode> subtree) {
        this(watchKey, node, resync, subtree, false, false);
    }

    /** A resync, or with {@code more} the first part of one that further parts complete. */
    public KvWatchEvent(String watchKey, KvNode node, boolean resync, List<KvNode> subtree, boolean more) {
        this(watchKey, node, resync, subtree, more, false);
    }

    /**
     * A resync, or with {@code more} a part of one that further parts complete; {@code continued}:
     * a part after the first.
     */
    public KvWatchEvent(String watchKey, KvNode node, boolean resync, List<KvNode> subtree, boolean more,
                        boolean continued) {
        this.watchKey = watchKey == null ? "" : watchKey;
        this.watchKeyUtf8 = this.watchKey.getBytes(StandardCharsets.UTF_8);
        this.node = node;
        this.resync = resync;
        this.subtree = subtree == null ? Collections.<KvNode>emptyList() : subtree;
        this.more = more;
        this.continued = continued;
        this.size = PbUtil.sizeOfBytesField(1, watchKeyUtf8) + PbUtil.sizeOfMessageField(2, node)
                + PbUtil.sizeOfBoolField(3, resync) + PbUtil.sizeOfRepeatedMessageField(4, this.subtree)
                + PbUtil.sizeOfBoolField(5, more) + PbUtil.sizeOfBoolField(6, continued);
    }

    /** A change: the latest state of {@code node.key()} (absent when removed). */
    public static KvWatchEvent change(String watchKey, KvNode node) {
        return new KvWatchEvent(watchKey, node, false, null);
    }

    /** The watch this event is for (a key, or a directory holding the changed key). */
    public String watchKey() {
        return watchKey;
    }

    /** The changed key's latest state; for a resync, the watched directory's own state. */
    public KvNode node() {
        return node;
    }

    public boolean isResync() {
        return resync;
    }

    /** For a resync: every node now under the watched directory (with {@link #hasMore()}: some of them). */
    public List<KvNode> subtree() {
        return subtree;
    }

    /**
     * A part of a resync that later notifications continue: the client must not conclude that keys
     * missing from it are gone until the part without this flag has come.
     */
    public boolean hasMore() {
        return more;
    }

    /**
     * A part of a resync after its first. Such a part belongs to the parts that came before it: one
     * whose first part the client set aside (it asked for a new resync meanwhile) tells the current
     * state of the keys it holds, but nothing of the keys it lacks.
     */
    public boolean isContinued() {
        return continued;
    }

    @Override
    public int encodedSize() {
        return size;
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.bytesField(dest, 1, watchKeyUtf8)) {
                    return false;
                }
            case 1:
                if (!c.messageField(dest, 2, node)) {
                    return false;
                }
            case 2:
                if (!c.boolField(dest, 3, resync)) {
                    return false;
                }
            case 3:
                if (!c.repeatedMessageField(dest, 4, subtree)) {
                    return false;
                }
            case 4:
                if (!c.boolField(dest, 5, more)) {
                    return false;
                }
            case 5:
                if (!c.boolField(dest, 6, continued)) {
                    return false;
                }
            default:
                return true;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KvWatchEvent)) {
            return false;
        }
        KvWatchEvent e = (KvWatchEvent) o;
        return resync == e.resync && more == e.more && continued == e.continued && watchKey.equals(e.watchKey) && Objects.equals(node, e.node)
                && subtree.equals(e.subtree);
    }

    @Override
    public int hashCode() {
        return watchKey.hashCode();
    }

    @Override
    public String toString() {
        return "KvWatchEvent{" + watchKey + (resync ? " resync " + subtree.size() + " nodes" + (more ? " (more follow)" : "")
                + (continued ? " (continued)" : "") : "") + " " + node + "}";
    }

    /** Decodes a KvWatchEvent. */
    public static final class Decoder extends PbCallback<KvWatchEvent> {
        private final KvNode.Decoder nodeDecoder = new KvNode.Decoder();
        private String watchKey;
        private KvNode node;
        private boolean resync;
        private List<KvNode> subtree;
        private boolean more;
        private boolean continued;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 2:
                case 4:
                    return PbWireType.LEN;
                case 3:
                case 5:
                case 6:
                    return PbWireType.VARINT;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void begin(int messageLength) {
            watchKey = "";
            node = null;
            resync = false;
            subtree = null;
            more = false;
            continued = false;
        }

        @Override
        protected void readVarint(int field, long v) {
            if (field == 3) {
                resync = v != 0;
            } else if (field == 5) {
                more = v != 0;
            } else {
                continued = v != 0;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 1) {
                String s = parseString(piece, fieldLength, offsetInField);
                if (s != null) {
                    watchKey = s;
                }
                return;
            }
            KvNode n = parseNested(piece, fieldLength, offsetInField, nodeDecoder);
            if (n != null) {
                if (field == 2) {
                    node = n;
                } else {
                    if (subtree == null) {
                        subtree = new ArrayList<>();
                    }
                    subtree.add(n);
                }
            }
        }

        @Override
        protected KvWatchEvent end() {
            return new KvWatchEvent(watchKey, node, resync, subtree, more, continued);
        }
    }
}
