package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbParser;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * GroupStatus's preferred_leader (field 19), added after nodes and clients without it were out:
 * a new node's answer read by an old client, and an old node's answer read by a new client.
 */
class GroupStatusWireTest {

    /** GroupStatus as versions before preferred_leader declared it (fields 1..18). */
    private static final FieldMessage.Schema OLD_SCHEMA = new FieldMessage.Schema("GroupStatus",
            new int[]{9, 13, 14, 15, 16}, new int[]{18});

    private static GroupStatus status(int preferredLeader) {
        List<GroupStatus.Follower> followers = Arrays.asList(new GroupStatus.Follower(2, 300, 5, false),
                new GroupStatus.Follower(4, 290, 15, true));
        return new GroupStatus(1, 3, RaftRole.LEADER, 9, 3, 100, 305, 304, 300, 299, new int[]{1, 2, 3}, false,
                null, new int[]{4}, followers, 2, "disk full", preferredLeader);
    }

    @Test
    void thePreferredLeaderIsFieldNineteenAfterEverythingAnOldNodeSends() {
        byte[] old = EncodeContext.encodeToArray(status(0).toMessage());
        byte[] now = EncodeContext.encodeToArray(status(3).toMessage());
        // none (0) is left out, so a node with no preference sends exactly what an old node does;
        // a preference only adds tag 19 (varint: 19 << 3 = 152 = 0x98 0x01) and its value at the end
        byte[] expected = Arrays.copyOf(old, old.length + 3);
        expected[old.length] = (byte) 0x98;
        expected[old.length + 1] = 0x01;
        expected[old.length + 2] = 3;
        assertArrayEquals(expected, now);
        GroupStatus back = PbParser.parse(now, GroupStatus.DECODER.create());
        assertEquals(3, back.preferredLeader());
        assertEquals(status(3).toString(), back.toString());
        assertEquals("group 1 on node 3: LEADER of term 9, leader 3, log 100..305, persisted 304, commit 300, applied"
                + " 299, voters [1, 2, 3], observers [4], followers [node 2: match 300, lag 5, node 4 (observer):"
                + " match 290, lag 15], handing over to 2, preferred leader 3, FAILED: disk full", back.toString());
    }

    @Test
    void anOldClientReadsANewNodesAnswerAndSkipsThePreferredLeader() {
        byte[] now = EncodeContext.encodeToArray(status(3).toMessage());
        FieldMessage asOld = PbParser.parse(now, OLD_SCHEMA.create());
        // every field the old client knows is there as sent
        FieldMessage expected = status(0).toMessage();
        for (int f = 1; f <= 18; f++) {
            assertEquals(expected.getLong(f), asOld.getLong(f), "field " + f);
            assertArrayEquals(expected.getLongs(f), asOld.getLongs(f), "field " + f);
            assertEquals(expected.getString(f), asOld.getString(f), "field " + f);
        }
    }

    @Test
    void aNewClientReadsAnOldNodesAnswerAsNoPreferredLeader() {
        // what an old node sends: its schema has no field 19
        FieldMessage fromOld = OLD_SCHEMA.builder().set(1, 1).set(2, 3).set(3, 9).set(4, 3).set(5, RaftRole.LEADER.code())
                .set(6, 300).set(7, 299).set(8, 305).set(9, new int[]{1, 2, 3}).set(10, 304).set(11, 100)
                .set(14, new int[]{4}).set(15, new int[]{2, 4}).set(16, new long[]{300, 290}).set(17, 2)
                .set(18, "disk full").build();
        GroupStatus back = PbParser.parse(EncodeContext.encodeToArray(fromOld), GroupStatus.DECODER.create());
        assertEquals(0, back.preferredLeader());
        assertEquals(status(0).toString(), back.toString());
    }

    @Test
    @SuppressWarnings("deprecation")
    void theConstructorOfEarlierVersionsStillBuildsAStatusWithNoPreferredLeader() {
        List<GroupStatus.Follower> followers = Arrays.asList(new GroupStatus.Follower(2, 300, 5, false),
                new GroupStatus.Follower(4, 290, 15, true));
        GroupStatus old = new GroupStatus(1, 3, RaftRole.LEADER, 9, 3, 100, 305, 304, 300, 299, new int[]{1, 2, 3},
                false, null, new int[]{4}, followers, 2, "disk full");
        assertEquals(0, old.preferredLeader());
        assertEquals(status(0).toString(), old.toString());
        assertArrayEquals(EncodeContext.encodeToArray(status(0).toMessage()), EncodeContext.encodeToArray(old.toMessage()));
    }
}
