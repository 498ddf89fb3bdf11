package io.poyang.raft.example;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbUtil;
import io.poyang.codec.PbWireType;
import io.poyang.net.DecoderFactory;
import io.poyang.raft.client.RaftClient;
import io.poyang.raft.client.RaftClientConfig;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.sm.ApplyBatch;
import io.poyang.raft.sm.SnapshotMeta;
import io.poyang.raft.sm.SnapshotWriter;
import io.poyang.raft.sm.StateMachine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/** Three raft nodes in one JVM replicate named counters; a client adds to them. */
public final class CounterExample {

    /** The command, written in protobuf: message Add { string key = 1; int64 delta = 2; } */
    public static final class Add implements Encodable {
        final String key;
        final long delta;
        private final byte[] keyBytes;

        public Add(String key, long delta) {
            this.key = key;
            this.delta = delta;
            this.keyBytes = PbUtil.utf8(key);
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfBytesField(1, keyBytes) + PbUtil.sizeOfInt64Field(2, delta);
        }

        @Override
        @SuppressWarnings("fallthrough")
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            switch (c.stage) {
                case 0:
                    if (!c.bytesField(dest, 1, keyBytes)) {
                        return false;
                    }
                    // fall through
                case 1:
                    return c.int64Field(dest, 2, delta);
                default:
                    return true;
            }
        }
    }

    /** Decodes an Add (on the leader's network thread, and on followers before applying). */
    static final class AddDecoder extends PbCallback<Add> {
        private String key = "";
        private long delta;

        @Override
        protected int wireTypeOf(int field) {
            return field == 1 ? PbWireType.LEN : field == 2 ? PbWireType.VARINT : PbWireType.UNKNOWN;
        }

        @Override
        protected void begin(int length) {
            key = "";
            delta = 0;
        }

        @Override
        protected void readBytes(int field, ByteBuffer piece, int length, int offset) {
            String s = parseString(piece, length, offset);
            if (s != null) {
                key = s;
            }
        }

        @Override
        protected void readVarint(int field, long value) {
            delta = value;
        }

        @Override
        protected Add end() {
            return new Add(key, delta);
        }
    }

    /** The result: message Value { int64 value = 1; } */
    public static final class Value implements Encodable {
        public static final DecoderFactory<Long> DECODER = () -> new PbCallback<Long>() {
            private long value;

            @Override
            protected int wireTypeOf(int field) {
                return field == 1 ? PbWireType.VARINT : PbWireType.UNKNOWN;
            }

            @Override
            protected void readVarint(int field, long v) {
                value = v;
            }

            @Override
            protected Long end() {
                return value;
            }
        };
        final long value;

        Value(long value) {
            this.value = value;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfInt64Field(1, value);
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.int64Field(dest, 1, value);
        }
    }

    /** The state machine: counters by name. Runs on its group's dispatcher thread; never blocks. */
    public static final class CounterStateMachine implements StateMachine {
        private Map<String, Long> counters = new HashMap<>();

        @Override
        public PbCallback<? extends Encodable> newBodyDecoder(int bizType) {
            return new AddDecoder();
        }

        @Override
        public void apply(ApplyBatch batch) {
            for (int i = 0; i < batch.size(); i++) {
                Add add = (Add) batch.body(i);
                long v = counters.merge(add.key, add.delta, Long::sum);
                batch.setResult(i, new Value(v));
            }
        }

        @Override
        public SnapshotWriter takeSnapshot(SnapshotMeta meta) {
            Map<String, Long> copy = new HashMap<>(counters);   // the state as of meta.lastIndex()
            return out -> {                                     // written on an I/O thread
                DataOutputStream d = new DataOutputStream(out);
                d.writeInt(copy.size());
                for (Map.Entry<String, Long> e : copy.entrySet()) {
                    d.writeUTF(e.getKey());
                    d.writeLong(e.getValue());
                }
                d.flush();
            };
        }

        @Override
        public Object readSnapshot(SnapshotMeta meta, InputStream in) throws IOException {
            DataInputStream d = new DataInputStream(in);
            Map<String, Long> m = new HashMap<>();
            for (int n = d.readInt(); n > 0; n--) {
                m.put(d.readUTF(), d.readLong());
            }
            return m;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void installSnapshot(SnapshotMeta meta, Object state) {
            counters = (Map<String, Long>) state;
        }
    }

    public static void main(String[] args) throws Exception {
        Path data = args.length > 0 ? Paths.get(args[0]) : Files.createTempDirectory("counter-example");
        RaftServer[] nodes = new RaftServer[3];
        for (int i = 0; i < 3; i++) {
            int id = i + 1;
            nodes[i] = RaftServer.builder()
                    .nodeId(id)
                    .node(1, "127.0.0.1:19431")            // replication ports (servers and admin)
                    .node(2, "127.0.0.1:19441")
                    .node(3, "127.0.0.1:19451")
                    .servicePort("127.0.0.1", 19432 + 10 * i) // where clients connect
                    .dataDir(data.resolve("node-" + id))
                    .raftConfig(new RaftConfig().electionTimeoutMillis(1000).syncForce(true))
                    .group(1, CounterStateMachine::new, 1, 2, 3)
                    .build();
            nodes[i].start();
        }
        RaftClient client = new RaftClient(new RaftClientConfig()
                .node(1, "127.0.0.1:19432").node(2, "127.0.0.1:19442").node(3, "127.0.0.1:19452"));
        client.start();
        try {
            for (int i = 1; i <= 3; i++) {
                long v = client.write(1, 0, new Add("apples", i), Value.DECODER, 10_000).get();
                System.out.println("apples = " + v);            // 1, 3, 6
            }
            int leader = client.knownLeader(1);
            long v = ((Value) nodes[leader - 1].group(1).submit(0, new Add("pears", 2), 3_000).get()).value;
            System.out.println("pears = " + v + " (written in-process on leader " + leader + ")");
        } finally {
            client.stop();
            for (RaftServer s : nodes) {
                s.stop();
            }
        }
    }
}
