package io.poyang.raft.core;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbParser;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.store.ByteBody;

/**
 * A configuration as protobuf (message MembersConfig of raft.proto): the body of a config-change
 * log entry and the configuration carried by a snapshot. Fields: 1 voters, 2 new_voters (during a
 * joint change), 3 observers, 4 old_observers (during a joint change), 5 joint.
 */
final class MembersCodec {

    static final FieldMessage.Schema SCHEMA = new FieldMessage.Schema("MembersConfig", new int[]{1, 2, 3, 4},
            new int[0]);

    private MembersCodec() {
    }

    static FieldMessage encode(Members m) {
        FieldMessage.Builder b = SCHEMA.builder().set(1, m.voters()).set(3, m.observers()).set(5, m.isJoint());
        if (m.isJoint()) {
            b.set(2, m.newVoters()).set(4, m.oldObservers());
        }
        return b.build();
    }

    static byte[] toBytes(Members m) {
        return EncodeContext.encodeToArray(encode(m));
    }

    static Members decode(FieldMessage f) {
        boolean joint = f.getBool(5);
        return new Members(f.getInts(1), joint ? f.getInts(2) : null, f.getInts(3), joint ? f.getInts(4) : null);
    }

    static Members fromBytes(byte[] bytes, int offset, int length) {
        return decode(PbParser.parse(java.nio.ByteBuffer.wrap(bytes, offset, length), SCHEMA.create()));
    }

    /** The configuration a config-change entry's body holds (a FieldMessage on the leader, raw bytes elsewhere). */
    static Members fromBody(Encodable body) {
        if (body instanceof FieldMessage) {
            return decode((FieldMessage) body);
        }
        ByteBody b = (ByteBody) body;
        return fromBytes(b.array(), b.offset(), b.length());
    }
}
