package io.poyang.benchmark.raft;

import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.raft.sm.ApplyBatch;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.ByteBody;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * The trivial state machine of {@code --op raft}: the last value written per key. A body is the
 * key (its first 8 bytes, taken modulo {@code --keys}) followed by the value; the state keeps the
 * body of the last write of each key and counts the writes. No result is sent back (an empty
 * response), so the figures measure raft, not the state machine.
 */
final class BenchStateMachine implements StateMachine {

    private ByteBody[] last;
    private long applied;

    BenchStateMachine(int keys) {
        this.last = new ByteBody[keys];
    }

    @Override
    public PbCallback<? extends Encodable> newBodyDecoder(int bizType) {
        return null;   // bodies stay raw bytes
    }

    @Override
    public void apply(ApplyBatch batch) {
        ByteBody[] l = last;
        for (int i = 0, n = batch.size(); i < n; i++) {
            ByteBody b = (ByteBody) batch.body(i);
            if (b != null) {
                l[slot(b, l.length)] = b;
            }
        }
        applied += batch.size();
    }

    static int slot(ByteBody b, int keys) {
        long k = 0;
        byte[] a = b.array();
        int off = b.offset();
        for (int i = 0; i < Math.min(8, b.length()); i++) {
            k = (k << 8) | (a[off + i] & 0xFF);
        }
        return (int) Math.floorMod(k, (long) keys);
    }

    /** The last value written to {@code key} (with its key prefix), or null. Dispatcher thread. */
    ByteBody get(int key) {
        return last[key];
    }

    long applied() {
        return applied;
    }

    @Override
    public SnapshotWriter takeSnapshot(SnapshotMeta meta) {
        ByteBody[] copy = last.clone();   // bodies are immutable: a shallow copy is a consistent picture
        long count = applied;
        return out -> {
            DataOutputStream d = new DataOutputStream(out);
            d.writeInt(copy.length);
            d.writeLong(count);
            for (int i = 0; i < copy.length; i++) {
                ByteBody b = copy[i];
                if (b != null) {
                    d.writeInt(i);
                    d.writeInt(b.length());
                    d.write(b.array(), b.offset(), b.length());
                }
            }
            d.writeInt(-1);
            d.flush();
        };
    }

    @Override
    public Object readSnapshot(SnapshotMeta meta, InputStream data) throws IOException {
        DataInputStream d = new DataInputStream(data);
        ByteBody[] l = new ByteBody[d.readInt()];
        long count = d.readLong();
        for (int i = d.readInt(); i >= 0; i = d.readInt()) {
            byte[] b = new byte[d.readInt()];
            d.readFully(b);
            l[i] = new ByteBody(b);
        }
        return new Object[]{l, count};
    }

    @Override
    public void installSnapshot(SnapshotMeta meta, Object state) {
        Object[] s = (Object[]) state;
        last = (ByteBody[]) s[0];
        applied = (Long) s[1];
    }
}
