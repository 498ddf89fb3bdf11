package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReq;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/**
 * A put of a value as long as the key's current one copies its bytes into the array the key's
 * version owns ({@link KvVersion#overwriteValue}), so no reference to a new array is stored into a
 * long-lived object. What that must never do: write into an array somebody else still reads — the
 * request's (the raft log's tail cache may hold it), or one handed out in an answer, a watch event
 * or a snapshot chunk.
 */
class InPlaceValueTest {

    private KvStore store;
    private long index;

    @BeforeEach
    void setUp() {
        store = new KvStore();
        apply(KvReq.mkdir("app"));
    }

    private void apply(KvReq req) {
        assertEquals(KvCode.SUCCESS, store.apply(++index, 1, index, req).code(), req.toString());
    }

    private static byte[] bytes(int fill, int length) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    private byte[] storedArray(String key) {
        return store.tree.lookup(key).latest.value;
    }

    @Test
    void putsOfTheSameLengthCopyIntoOneArrayTheVersionOwns() {
        apply(KvReq.put("app.k", bytes(1, 256)));
        apply(KvReq.put("app.k", bytes(2, 256)));
        byte[] owned = storedArray("app.k");
        for (int fill = 3; fill < 10; fill++) {
            apply(KvReq.put("app.k", bytes(fill, 256)));
            assertSame(owned, storedArray("app.k"), "put " + fill + " stored a new array");
            assertArrayEquals(bytes(fill, 256), owned);
        }
        // nodeOf hands the array out: the next put must leave it alone and take a copy of its own
        KvNode handedOut = store.nodeOf("app.k");
        apply(KvReq.put("app.k", bytes(10, 256)));
        assertNotSame(owned, storedArray("app.k"));
        assertArrayEquals(bytes(9, 256), handedOut.value());
        byte[] next = storedArray("app.k");
        apply(KvReq.put("app.k", bytes(11, 256)));
        assertSame(next, storedArray("app.k"));
    }

    @Test
    void theRequestsArraysAreNeverWrittenInto() {
        List<byte[]> sent = new ArrayList<>();
        for (int fill = 1; fill <= 5; fill++) {
            byte[] v = bytes(fill, 256);
            sent.add(v);
            apply(KvReq.put("app.k", v));
        }
        for (int i = 0; i < sent.size(); i++) {
            assertArrayEquals(bytes(i + 1, 256), sent.get(i), "the array of put " + (i + 1) + " was overwritten");
            assertNotSame(sent.get(i), storedArray("app.k"));
        }
    }

    @Test
    void aValueInAnAnswerKeepsItsBytesThroughLaterPuts() {
        apply(KvReq.put("app.k", bytes(1, 256)));
        apply(KvReq.put("app.k", bytes(2, 256)));
        KvNode answered = store.get("app.k").node();
        KvNode looked = store.nodeOf("app.k");
        apply(KvReq.put("app.k", bytes(3, 256)));
        apply(KvReq.put("app.k", bytes(4, 256)));
        assertArrayEquals(bytes(2, 256), answered.value());
        assertArrayEquals(bytes(2, 256), looked.value());
        assertArrayEquals(bytes(4, 256), store.nodeOf("app.k").value());
    }

    @Test
    void aSnapshotChunkKeepsTheValuesItReadAfterTheSnapshotCloses() {
        for (int i = 0; i < 20; i++) {
            apply(KvReq.put("app.k" + i, bytes(1, 100)));
            apply(KvReq.put("app.k" + i, bytes(2, 100)));
        }
        List<KvNode> read = new ArrayList<>();
        try (KvSnapshot snap = store.openSnapshot()) {
            while (true) {
                KvSnapshotChunk c = snap.nextChunk();
                read.addAll(c.nodes());
                if (c.isLast()) {
                    break;
                }
            }
        }
        for (int i = 0; i < 20; i++) {
            apply(KvReq.put("app.k" + i, bytes(3, 100)));
            apply(KvReq.put("app.k" + i, bytes(4, 100)));
        }
        int values = 0;
        for (KvNode n : read) {
            if (n.key().startsWith("app.k")) {
                assertArrayEquals(bytes(2, 100), n.value(), n.key());
                values++;
            }
        }
        assertEquals(20, values);
    }

    @Test
    void aValueOfAnotherLengthReplacesTheArray() {
        apply(KvReq.put("app.k", bytes(1, 256)));
        apply(KvReq.put("app.k", bytes(2, 256)));
        byte[] owned = storedArray("app.k");
        apply(KvReq.put("app.k", bytes(3, 10)));
        assertNotSame(owned, storedArray("app.k"));
        assertArrayEquals(bytes(2, 256), owned, "the array of the longer value was written into");
        assertArrayEquals(bytes(3, 10), store.nodeOf("app.k").value());
        apply(KvReq.put("app.k", bytes(4, 0)));
        assertArrayEquals(new byte[0], store.nodeOf("app.k").value());
    }
}
