package io.poyang.raft.client;

import io.poyang.codec.EncodeContext;
import io.poyang.codec.PbParser;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class FieldMessageTest {

    private static final FieldMessage.Schema SCHEMA = new FieldMessage.Schema("Test", new int[]{2, 3},
            new int[]{4}, new int[]{5});

    @Test
    void aMessageRoundTrips() {
        FieldMessage m = SCHEMA.builder().set(1, 7).set(2, new long[]{1, 2, 3}).set(3, new long[0])
                .set(4, "four").set(5, new String[]{"a", "", "c"}).build();
        FieldMessage back = PbParser.parse(EncodeContext.encodeToArray(m), SCHEMA.create());
        assertEquals(m.toString(), back.toString());
        assertArrayEquals(new long[]{1, 2, 3}, back.getLongs(2));
        assertArrayEquals(new String[]{"a", "", "c"}, back.getStrings(5));
    }

    @Test
    void listFieldsThatAlternateCollectEachFieldsElementsInOrder() {
        // unpacked elements of fields 2 and 3 taking turns, and string list 5 between them: each
        // field's elements in the order they came (decoded with one growing array per field; the
        // decoder once copied a whole list at every change of field, quadratic in the message)
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        int n = 50_000;
        for (int i = 0; i < n; i++) {
            wire.write(2 << 3);
            wire.write(i % 100);
            wire.write(3 << 3);
            wire.write(99 - i % 100);
            if (i % 1000 == 0) {
                wire.write(5 << 3 | 2);
                wire.write(1);
                wire.write('x');
            }
        }
        FieldMessage back = PbParser.parse(wire.toByteArray(), SCHEMA.create());
        long[] twos = back.getLongs(2);
        long[] threes = back.getLongs(3);
        assertEquals(n, twos.length);
        assertEquals(n, threes.length);
        for (int i = 0; i < n; i++) {
            assertEquals(i % 100, twos[i]);
            assertEquals(99 - i % 100, threes[i]);
        }
        assertEquals(n / 1000, back.getStrings(5).length);
    }

    @Test
    void fieldsANewerPeerAddedWithOtherWireTypesAreSkippedAndTheKnownOnesKept() {
        // field 1 (a varint here), then fields 6, 7 and 8 this schema does not name, sent as a
        // string, a fixed64 and a fixed32 (a newer version of the message), then field 9 as a varint
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(1 << 3);
        wire.write(7);
        wire.write(6 << 3 | 2);
        wire.write(3);
        wire.write('n');
        wire.write('e');
        wire.write('w');
        wire.write(7 << 3 | 1);
        wire.write(new byte[8], 0, 8);
        wire.write(8 << 3 | 5);
        wire.write(new byte[4], 0, 4);
        wire.write(9 << 3);
        wire.write(42);
        FieldMessage back = PbParser.parse(wire.toByteArray(), SCHEMA.create());
        assertEquals(7, back.getLong(1));
        assertEquals(0, back.getLong(6), "the unknown string was skipped, not read as a number");
        assertEquals(42, back.getLong(9), "an unnamed field that comes as a varint is read");
    }
}
