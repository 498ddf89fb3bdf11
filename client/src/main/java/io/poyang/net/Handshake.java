package io.poyang.net;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The body of {@link Commands#HANDSHAKE} (message Handshake in docs/proto/packet.proto). */
public final class Handshake implements Encodable {

    /** "POYANGRP" in ASCII. */
    public static final long MAGIC = 0x504F59414E475250L;
    public static final int MAJOR_VERSION = 1;
    /** 1 added the node ids (fields 9 and 10), 2 the cluster name (field 11). */
    public static final int MINOR_VERSION = 2;
    /** The longest cluster name, in characters (printable ASCII only). */
    public static final int MAX_CLUSTER_NAME_CHARS = 64;
    private static final byte[] NO_NAME = new byte[0];

    final long magic;
    final int majorVersion;
    final int minorVersion;
    final long uuidMost;
    final long uuidLeast;
    final int maxFrameBytes;
    final int maxInFlightRequests;
    final long maxInFlightBytes;
    /** The sender's node id in its cluster; 0 when it is no cluster node (a client). */
    final int nodeId;
    /** The node id the sender meant to reach (client to server only); 0 when any node will do. */
    final int expectedNodeId;
    /** The name of the sender's cluster, ASCII; empty when it names none (a client, or minor version below 2). */
    final byte[] clusterName;

    public Handshake(long magic, int majorVersion, int minorVersion, long uuidMost, long uuidLeast,
                     int maxFrameBytes, int maxInFlightRequests, long maxInFlightBytes) {
        this(magic, majorVersion, minorVersion, uuidMost, uuidLeast, maxFrameBytes, maxInFlightRequests,
                maxInFlightBytes, 0, 0, (String) null);
    }

    public Handshake(long magic, int majorVersion, int minorVersion, long uuidMost, long uuidLeast,
                     int maxFrameBytes, int maxInFlightRequests, long maxInFlightBytes, int nodeId,
                     int expectedNodeId) {
        this(magic, majorVersion, minorVersion, uuidMost, uuidLeast, maxFrameBytes, maxInFlightRequests,
                maxInFlightBytes, nodeId, expectedNodeId, (String) null);
    }

    public Handshake(long magic, int majorVersion, int minorVersion, long uuidMost, long uuidLeast,
                     int maxFrameBytes, int maxInFlightRequests, long maxInFlightBytes, int nodeId,
                     int expectedNodeId, String clusterName) {
        this(magic, majorVersion, minorVersion, uuidMost, uuidLeast, maxFrameBytes, maxInFlightRequests,
                maxInFlightBytes, nodeId, expectedNodeId,
                clusterName == null ? NO_NAME : clusterName.getBytes(StandardCharsets.US_ASCII));
    }

    private Handshake(long magic, int majorVersion, int minorVersion, long uuidMost, long uuidLeast,
                      int maxFrameBytes, int maxInFlightRequests, long maxInFlightBytes, int nodeId,
                      int expectedNodeId, byte[] clusterName) {
        this.magic = magic;
        this.majorVersion = majorVersion;
        this.minorVersion = minorVersion;
        this.uuidMost = uuidMost;
        this.uuidLeast = uuidLeast;
        this.maxFrameBytes = maxFrameBytes;
        this.maxInFlightRequests = maxInFlightRequests;
        this.maxInFlightBytes = maxInFlightBytes;
        this.nodeId = nodeId;
        this.expectedNodeId = expectedNodeId;
        this.clusterName = clusterName;
    }

    /** This handshake, saying the sender means to reach node {@code nodeId} (0: any node). */
    Handshake expecting(int nodeId) {
        return new Handshake(magic, majorVersion, minorVersion, uuidMost, uuidLeast, maxFrameBytes,
                maxInFlightRequests, maxInFlightBytes, this.nodeId, nodeId, clusterName);
    }

    public long magic() {
        return magic;
    }

    public int majorVersion() {
        return majorVersion;
    }

    public int minorVersion() {
        return minorVersion;
    }

    public long uuidMost() {
        return uuidMost;
    }

    public long uuidLeast() {
        return uuidLeast;
    }

    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    public int maxInFlightRequests() {
        return maxInFlightRequests;
    }

    public long maxInFlightBytes() {
        return maxInFlightBytes;
    }

    /** The sender's node id; 0 when it is no cluster node or speaks minor version 0. */
    public int nodeId() {
        return nodeId;
    }

    /** The node id the sender meant to reach; 0 when any node will do. */
    public int expectedNodeId() {
        return expectedNodeId;
    }

    /** The name of the sender's cluster; empty when it names none. */
    public String clusterName() {
        return new String(clusterName, StandardCharsets.US_ASCII);
    }

    /**
     * Null when {@code name} may be a cluster name (null and empty name none), else why not: at most
     * {@value #MAX_CLUSTER_NAME_CHARS} printable ASCII characters, so it reads the same in every log.
     */
    public static String checkClusterName(String name) {
        if (name == null || name.isEmpty()) {
            return null;
        }
        if (name.length() > MAX_CLUSTER_NAME_CHARS) {
            return "a cluster name has at most " + MAX_CLUSTER_NAME_CHARS + " characters; '" + name + "' has "
                    + name.length();
        }
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            if (ch <= ' ' || ch > '~') {
                return "a cluster name is printable ASCII without spaces; '" + name + "' has character "
                        + (int) ch + " at " + i;
            }
        }
        return null;
    }

    /** Null when acceptable, else why not. */
    String incompatibility() {
        if (magic != MAGIC) {
            return "bad magic 0x" + Long.toHexString(magic) + " (not a Poyang peer)";
        }
        if (majorVersion != MAJOR_VERSION) {
            return "protocol major version " + majorVersion + " is not supported (this side speaks " + MAJOR_VERSION + ")";
        }
        if (maxFrameBytes < 0 || maxInFlightRequests < 0 || maxInFlightBytes < 0) {
            return "negative limits in the handshake";
        }
        if (nodeId < 0 || expectedNodeId < 0) {
            return "negative node id in the handshake";
        }
        String badName = checkClusterName(clusterName());
        if (badName != null) {
            return "bad cluster name in the handshake: " + badName;
        }
        return null;
    }

    /**
     * Null when a connection whose other side sent this handshake may reach the node with id
     * {@code localNodeId} (0: this side is no cluster node and accepts any); else why not, for
     * both sides' logs.
     */
    String misaddressedTo(int localNodeId) {
        if (expectedNodeId == 0 || localNodeId == 0 || expectedNodeId == localNodeId) {
            return null;
        }
        return "this is node " + localNodeId + ", not node " + expectedNodeId;
    }

    /**
     * The sender's cluster name when both sides name one and they differ, else null: a side that
     * names none (a client, an older version) is taken at its address.
     */
    String otherCluster(String localCluster) {
        if (clusterName.length == 0 || localCluster == null || localCluster.isEmpty()) {
            return null;
        }
        String theirs = clusterName();
        return theirs.equals(localCluster) ? null : theirs;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfFixed64Field(1, magic)
                + PbUtil.sizeOfInt32Field(2, majorVersion)
                + PbUtil.sizeOfInt32Field(3, minorVersion)
                + PbUtil.sizeOfFixed64Field(4, uuidMost)
                + PbUtil.sizeOfFixed64Field(5, uuidLeast)
                + PbUtil.sizeOfInt32Field(6, maxFrameBytes)
                + PbUtil.sizeOfInt32Field(7, maxInFlightRequests)
                + PbUtil.sizeOfInt64Field(8, maxInFlightBytes)
                + PbUtil.sizeOfInt32Field(9, nodeId)
                + PbUtil.sizeOfInt32Field(10, expectedNodeId)
                + PbUtil.sizeOfBytesField(11, clusterName);
    }

    @Override
    @SuppressWarnings("fallthrough") // the resumable-encoder pattern: each stage falls into the next
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        switch (c.stage) {
            case 0:
                if (!c.fixed64Field(dest, 1, magic)) {
                    return false;
                }
                // fall through
            case 1:
                if (!c.int32Field(dest, 2, majorVersion)) {
                    return false;
                }
                // fall through
            case 2:
                if (!c.int32Field(dest, 3, minorVersion)) {
                    return false;
                }
                // fall through
            case 3:
                if (!c.fixed64Field(dest, 4, uuidMost)) {
                    return false;
                }
                // fall through
            case 4:
                if (!c.fixed64Field(dest, 5, uuidLeast)) {
                    return false;
                }
                // fall through
            case 5:
                if (!c.int32Field(dest, 6, maxFrameBytes)) {
                    return false;
                }
                // fall through
            case 6:
                if (!c.int32Field(dest, 7, maxInFlightRequests)) {
                    return false;
                }
                // fall through
            case 7:
                if (!c.int64Field(dest, 8, maxInFlightBytes)) {
                    return false;
                }
                // fall through
            case 8:
                if (!c.int32Field(dest, 9, nodeId)) {
                    return false;
                }
                // fall through
            case 9:
                if (!c.int32Field(dest, 10, expectedNodeId)) {
                    return false;
                }
                // fall through
            case 10:
                if (!c.bytesField(dest, 11, clusterName)) {
                    return false;
                }
                // fall through
            default:
                return true;
        }
    }

    @Override
    public String toString() {
        return "Handshake(v" + majorVersion + "." + minorVersion + ", maxFrameBytes=" + maxFrameBytes
                + ", maxInFlightRequests=" + maxInFlightRequests + ", maxInFlightBytes=" + maxInFlightBytes
                + (nodeId != 0 ? ", node " + nodeId : "") + (expectedNodeId != 0 ? ", to node " + expectedNodeId : "")
                + (clusterName.length != 0 ? ", cluster '" + clusterName() + "'" : "") + ")";
    }

    /** Decodes a Handshake. */
    public static final class Decoder extends PbCallback<Handshake> {

        public static final DecoderFactory<Handshake> FACTORY = Decoder::new;

        private long magic;
        private int majorVersion;
        private int minorVersion;
        private long uuidMost;
        private long uuidLeast;
        private int maxFrameBytes;
        private int maxInFlightRequests;
        private long maxInFlightBytes;
        private int nodeId;
        private int expectedNodeId;
        private byte[] clusterName = NO_NAME;

        @Override
        protected int wireTypeOf(int field) {
            switch (field) {
                case 1:
                case 4:
                case 5:
                    return PbWireType.FIXED64;
                case 2:
                case 3:
                case 6:
                case 7:
                case 8:
                case 9:
                case 10:
                    return PbWireType.VARINT;
                case 11:
                    return PbWireType.LEN;
                default:
                    return PbWireType.UNKNOWN;
            }
        }

        @Override
        protected void readFixed64(int field, long value) {
            switch (field) {
                case 1:
                    magic = value;
                    break;
                case 4:
                    uuidMost = value;
                    break;
                case 5:
                    uuidLeast = value;
                    break;
                default:
                    break;
            }
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            if (field == 11) {
                byte[] b = parseBytes(piece, fieldLength, offsetInField);
                if (b != null) {
                    clusterName = b;
                }
            }
        }

        @Override
        protected void readVarint(int field, long value) {
            switch (field) {
                case 2:
                    majorVersion = (int) value;
                    break;
                case 3:
                    minorVersion = (int) value;
                    break;
                case 6:
                    maxFrameBytes = (int) value;
                    break;
                case 7:
                    maxInFlightRequests = (int) value;
                    break;
                case 8:
                    maxInFlightBytes = value;
                    break;
                case 9:
                    nodeId = (int) value;
                    break;
                case 10:
                    expectedNodeId = (int) value;
                    break;
                default:
                    break;
            }
        }

        @Override
        protected Handshake end() {
            return new Handshake(magic, majorVersion, minorVersion, uuidMost, uuidLeast,
                    maxFrameBytes, maxInFlightRequests, maxInFlightBytes, nodeId, expectedNodeId, clusterName);
        }
    }
}
