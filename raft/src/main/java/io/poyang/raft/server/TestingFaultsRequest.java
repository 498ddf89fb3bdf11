package io.poyang.raft.server;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The body of a TESTING_FAULTS request and of its answer (message TestingFaultsRequest in
 * raft.proto): the ids of the nodes this node must not exchange replication traffic with, replacing
 * any earlier list; empty heals. The answer carries the list now in force.
 */
public final class TestingFaultsRequest implements Encodable {

    private final long[] blockedNodeIds;

    public TestingFaultsRequest(int... blockedNodeIds) {
        this.blockedNodeIds = new long[blockedNodeIds.length];
        for (int i = 0; i < blockedNodeIds.length; i++) {
            this.blockedNodeIds[i] = blockedNodeIds[i];
        }
    }

    private TestingFaultsRequest(long[] ids) {
        this.blockedNodeIds = ids;
    }

    /** The blocked node ids, in the order given. */
    public int[] blockedNodeIds() {
        int[] r = new int[blockedNodeIds.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = (int) blockedNodeIds[i];
        }
        return r;
    }

    @Override
    public int encodedSize() {
        return PbUtil.sizeOfPackedVarint64Field(1, blockedNodeIds, blockedNodeIds.length);
    }

    @Override
    public boolean encode(EncodeContext c, ByteBuffer dest) {
        return c.packedInt64Field(dest, 1, blockedNodeIds, blockedNodeIds.length);
    }

    @Override
    public String toString() {
        return "blocked " + Arrays.toString(blockedNodeIds());
    }

    /** Reads a TestingFaultsRequest (packed or not). */
    public static final class Decoder extends PbCallback<TestingFaultsRequest> {
        private long[] ids = new long[4];
        private int count;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.PACKED_VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int messageLength) {
            count = 0;
        }

        @Override
        protected void readVarint(int field, long value) {
            add(value);
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int fieldLength, int offsetInField) {
            parsePackedVarints(piece, fieldLength, offsetInField, this::add);
        }

        private void add(long id) {
            if (count == ids.length) {
                ids = Arrays.copyOf(ids, count * 2);
            }
            ids[count++] = id;
        }

        @Override
        protected TestingFaultsRequest end() {
            return new TestingFaultsRequest(Arrays.copyOf(ids, count));
        }
    }
}
