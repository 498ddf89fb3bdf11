package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.sm.ApplyBatch;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.ByteBody;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The state machine of the cluster tests: it records every value written (an 8-byte long body),
 * in apply order, and the log index each was applied at. Two nodes agree when their lists are
 * equal; an acknowledged write is not lost when its value is in the list. Snapshots hold the whole
 * list. The result of a write is its log index (8 bytes).
 */
final class TestStateMachine implements StateMachine {

    private long[] values = new long[1024];
    private long[] indexes = new long[1024];
    private int count;
    /** The entry timestamps of the values applied since this machine was made (not kept in snapshots). */
    private long[] stamps = new long[1024];
    private int stampCount;
    /** Values whose body was not 8 bytes (a test writing garbage); counted, not stored. */
    private int odd;

    /** A value whose apply throws: the group fails on every node that applies it (tests of failed groups). */
    static final long POISON = Long.MIN_VALUE;

    /** Set before the group starts: {@link #appliesRaftEntries()}; raft's own entries are then recorded apart. */
    boolean wantsRaftEntries;
    private long[] raftEntryIndexes = new long[16];
    private int raftEntryCount;

    @Override
    public boolean appliesRaftEntries() {
        return wantsRaftEntries;
    }

    /** The indexes of the raft entries (no-ops, membership changes) applied, with wantsRaftEntries. Dispatcher thread. */
    long[] raftEntryIndexes() {
        return Arrays.copyOf(raftEntryIndexes, raftEntryCount);
    }

    /** The roles onRoleChange was called with, in order (written on the dispatcher; any thread reads). */
    final java.util.List<RaftRole> roleChanges = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void onRoleChange(RaftRole role, int term, int leaderId) {
        roleChanges.add(role);
    }

    /** Set on one node's machine: its next apply throws, so the group fails on that node alone. */
    volatile boolean failNextApply;

    /** Set on one node's machine: its snapshots fail halfway with this error (a disk that filled up). */
    volatile IOException failSnapshotWrites;

    static ByteBody body(long value) {
        return new ByteBody(ByteBuffer.allocate(8).putLong(value).array());
    }

    static long index(Encodable result) {
        return ByteBuffer.wrap(((ByteBody) result).array()).getLong();
    }

    /**
     * The bizType of a value sent as the protobuf message {@code {int64 value = 1}}, which this
     * machine decodes itself (tests of body decoding); bodies of every other bizType stay raw bytes.
     */
    static final int TYPED_BIZ_TYPE = 9;

    /** A value decoded from a {@link #TYPED_BIZ_TYPE} body; encodes back to the same message. */
    static final class TypedValue implements Encodable {
        final long value;

        TypedValue(long value) {
            this.value = value;
        }

        @Override
        public int encodedSize() {
            return io.poyang.codec.PbUtil.sizeOfInt64Field(1, value);
        }

        @Override
        public boolean encode(io.poyang.codec.EncodeContext c, ByteBuffer dest) {
            return c.int64Field(dest, 1, value);
        }
    }

    /** Set: asking for a body decoder throws this, which ends the group's apply fiber (a bug of the machine). */
    volatile RuntimeException failBodyDecoder;

    @Override
    public PbCallback<? extends Encodable> newBodyDecoder(int bizType) {
        RuntimeException fail = failBodyDecoder;
        if (fail != null) {
            throw fail;
        }
        if (bizType != TYPED_BIZ_TYPE) {
            return null;   // raw bytes
        }
        return new PbCallback<TypedValue>() {
            private long value;

            @Override
            protected int wireTypeOf(int field) {
                return field == 1 ? io.poyang.codec.PbWireType.VARINT : io.poyang.codec.PbWireType.UNKNOWN;
            }

            @Override
            protected void readVarint(int field, long v) {
                value = v;
            }

            @Override
            protected TypedValue end() {
                return new TypedValue(value);
            }
        };
    }

    @Override
    public void apply(ApplyBatch batch) {
        for (int i = 0; i < batch.size(); i++) {
            long v;
            if (batch.body(i) == null && wantsRaftEntries) {
                if (raftEntryCount == raftEntryIndexes.length) {
                    raftEntryIndexes = Arrays.copyOf(raftEntryIndexes, raftEntryCount * 2);
                }
                raftEntryIndexes[raftEntryCount++] = batch.index(i);
                continue;
            }
            if (batch.body(i) instanceof TypedValue) {
                v = ((TypedValue) batch.body(i)).value;
            } else {
                ByteBody b = (ByteBody) batch.body(i);
                if (b == null || b.length() != 8) {
                    odd++;
                    batch.setError(i, 42, "a test value is 8 bytes");
                    continue;
                }
                v = ByteBuffer.wrap(b.array(), b.offset(), 8).getLong();
            }
            if (v == POISON || failNextApply) {
                throw new IllegalStateException(failNextApply ? "the test state machine was told to fail"
                        : "the test state machine was given the poison value");
            }
            if (count == values.length) {
                values = Arrays.copyOf(values, count * 2);
                indexes = Arrays.copyOf(indexes, count * 2);
            }
            values[count] = v;
            indexes[count] = batch.index(i);
            count++;
            if (stampCount == stamps.length) {
                stamps = Arrays.copyOf(stamps, stampCount * 2);
            }
            stamps[stampCount++] = batch.timestampMillis(i);
            batch.setResult(i, new ByteBody(ByteBuffer.allocate(8).putLong(batch.index(i)).array()));
        }
    }

    /** The timestamps (leader's clock, ms) of the values applied since this machine was made. Dispatcher thread. */
    long[] timestamps() {
        return Arrays.copyOf(stamps, stampCount);
    }

    /** The values in apply order. Dispatcher thread (use RaftGroup.callInGroup). */
    long[] values() {
        return Arrays.copyOf(values, count);
    }

    /** The log index of each value. Dispatcher thread. */
    long[] indexes() {
        return Arrays.copyOf(indexes, count);
    }

    int count() {
        return count;
    }

    /** Entries whose body was not a test value. Dispatcher thread. */
    int odd() {
        return odd;
    }

    @Override
    public SnapshotWriter takeSnapshot(SnapshotMeta meta) {
        long[] v = Arrays.copyOf(values, count);
        long[] ix = Arrays.copyOf(indexes, count);
        int n = count;
        int o = odd;
        IOException fail = failSnapshotWrites;
        return out -> {
            DataOutputStream d = new DataOutputStream(out);
            d.writeInt(n);
            d.writeInt(o);
            for (int i = 0; i < n; i++) {
                d.writeLong(v[i]);
                d.writeLong(ix[i]);
                if (fail != null && i == n / 2) {
                    d.flush();
                    throw fail;   // the disk filled up halfway through the snapshot
                }
            }
            d.flush();
        };
    }

    /** Tests: how long reading a snapshot takes at least (a large state on a slow disk). */
    static volatile long readSnapshotDelayMillis;
    /** Tests: when set, every snapshot read fails with it (a snapshot the state machine cannot read). */
    static volatile IOException failSnapshotReads;
    /**
     * Tests: when positive, reading the snapshot of this last index fails on every machine, as
     * {@code readSnapshot} does on content it cannot parse (one bad snapshot among good ones).
     */
    static volatile long failSnapshotReadAtIndex;

    /** Tests: when set, called with the snapshot's meta as every snapshot read begins (on the reading thread). */
    static volatile java.util.function.Consumer<SnapshotMeta> onSnapshotRead;

    /** Set: reading a snapshot throws this (a machine that cannot load its state: the group's start fails). */
    volatile IOException failReadSnapshot;

    @Override
    public Object readSnapshot(SnapshotMeta meta, InputStream data) throws IOException {
        java.util.function.Consumer<SnapshotMeta> hook = onSnapshotRead;
        if (hook != null) {
            hook.accept(meta);
        }
        IOException fail = failReadSnapshot;
        if (fail != null) {
            throw fail;
        }
        if (readSnapshotDelayMillis > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(readSnapshotDelayMillis * 1_000_000L);
        }
        IOException failEverywhere = failSnapshotReads;
        if (failEverywhere != null) {
            throw failEverywhere;
        }
        if (failSnapshotReadAtIndex > 0 && meta.lastIndex() == failSnapshotReadAtIndex) {
            throw new IOException("test: the state machine cannot parse the snapshot of index " + meta.lastIndex());
        }
        DataInputStream d = new DataInputStream(data);
        int n = d.readInt();
        int o = d.readInt();
        long[] v = new long[Math.max(1024, n)];
        long[] ix = new long[Math.max(1024, n)];
        for (int i = 0; i < n; i++) {
            v[i] = d.readLong();
            ix[i] = d.readLong();
        }
        if (d.read() != -1) {
            throw new IOException("trailing bytes in the snapshot");
        }
        return new Object[]{v, ix, n, o};
    }

    @Override
    public void installSnapshot(SnapshotMeta meta, Object state) {
        Object[] s = (Object[]) state;
        values = (long[]) s[0];
        indexes = (long[]) s[1];
        count = (Integer) s[2];
        odd = (Integer) s[3];
    }
}
