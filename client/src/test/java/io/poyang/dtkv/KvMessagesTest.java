package io.poyang.dtkv;

import io.poyang.codec.CodecException;
import io.poyang.codec.EncodeContext;
import io.poyang.codec.Encodable;
import io.poyang.codec.PbCallback;
import io.poyang.codec.PbParser;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/** Every DtKV message round-trips, and the bytes are what protoc makes of docs/proto/dtkv.proto. */
class KvMessagesTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The Java side of every vector in dtkv-vectors.txt. */
    private static Map<String, Encodable> javaVectors() {
        Map<String, Encodable> m = new LinkedHashMap<>();
        m.put("put", KvReq.put("app.db.url", b("jdbc:x")).session(0x0102030405060708L, 0x1112131415161718L).seq(7, 5));
        m.put("batch_put", KvReq.batchPut(Arrays.asList("a.b", "a.c"), Arrays.asList(b("1"), new byte[0])).groupId(3));
        m.put("cas_absent", KvReq.compareAbsentAndSet("k", b("v")));
        m.put("cas", KvReq.compareAndSet("k", b("old"), b("new")));
        m.put("put_temp", KvReq.putTemp("svc.n1", b("127.0.0.1:9000"), 30000).session(1, 2));
        m.put("expire", KvReq.expire("svc.n1", 123456789));
        m.put("try_lock", KvReq.tryLock("locks.leader", 10000, 5000).session(-1L, 9));
        m.put("list_root", KvReq.list(""));
        m.put("list_page", KvReq.listPage("d", "d.m", 100));
        m.put("get_follower_read", KvReq.get("app.url").groupId(2).readKind(KvReadKind.FOLLOWER_READ));
        m.put("batch_get_read_index", KvReq.batchGet(Arrays.asList("a", "b")).readKind(KvReadKind.READ_INDEX));
        m.put("node_value", KvNode.of("a.b", b("hi"), false, 3, 300));
        m.put("node_temp_dir", new KvNode("t", null, true, 5, 5, 1, 2, 1000, 1700000000000L));
        m.put("resp_get", KvResp.success(42, KvNode.of("a", b("x"), false, 1, 2)));
        m.put("resp_fail", KvResp.fail(KvCode.PARENT_NOT_FOUND, 9,
                "parent directory 'a' of 'a.b' does not exist; mkdir it first").failedPosition(2));
        m.put("resp_list", KvResp.success(10).nodes(Arrays.asList(KvNode.of("d.a", null, true, 1, 1),
                KvNode.of("d.b", b("v"), false, 2, 2))));
        m.put("resp_list_more", KvResp.success(11).nodes(Collections.singletonList(
                KvNode.of("d.n", b("v"), false, 3, 3))).more(true));
        m.put("resp_lock", KvResp.success(77).lock(KvResp.LOCK_GRANTED, 77, 1700000010000L));
        m.put("watch_req", new KvWatchReq(1, false, true, Arrays.asList("a", "", "b.c"), new long[]{5, 0, 300}));
        m.put("notify", new KvWatchNotify(1, 99, Arrays.asList(
                KvWatchEvent.change("a", KvNode.of("a.x", b("1"), false, 98, 99)),
                new KvWatchEvent("d", KvNode.of("d", null, true, 1, 1), true,
                        Collections.singletonList(KvNode.of("d.k", b("v"), false, 2, 2))))));
        m.put("notify_part", new KvWatchNotify(1, 120, Collections.singletonList(new KvWatchEvent("d", null, true,
                Collections.singletonList(KvNode.of("d.k", b("v"), false, 2, 2)), true))));
        m.put("notify_continued", new KvWatchNotify(1, 121, Collections.singletonList(new KvWatchEvent("d", null, true,
                Collections.singletonList(KvNode.of("d.m", b("w"), false, 3, 3)), true, true))));
        m.put("notify_moved", new KvWatchNotify(2, 300, Collections.emptyList(), true));
        m.put("lock_event", new KvLockEvent(0, "l", KvLockEvent.GRANTED, 500, 1700000000000L, 3, 4));
        return m;
    }

    private static PbCallback<?> decoderFor(String message) {
        switch (message) {
            case "KvReq":
                return new KvReq.Decoder();
            case "KvNode":
                return new KvNode.Decoder();
            case "KvResp":
                return new KvResp.Decoder();
            case "KvWatchReq":
                return new KvWatchReq.Decoder();
            case "KvWatchNotify":
                return new KvWatchNotify.Decoder();
            case "KvLockEvent":
                return new KvLockEvent.Decoder();
            default:
                throw new AssertionError(message);
        }
    }

    private static List<String[]> loadVectors() throws IOException {
        List<String[]> out = new ArrayList<>();
        try (InputStream in = KvMessagesTest.class.getResourceAsStream("dtkv-vectors.txt");
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.startsWith("#") && !line.trim().isEmpty()) {
                    out.add(line.split("\\|"));
                }
            }
        }
        return out;
    }

    static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    @Test
    void encodingsMatchProtocAndDecodeBack() throws IOException {
        Map<String, Encodable> java = javaVectors();
        List<String[]> vectors = loadVectors();
        assertEquals(java.size(), vectors.size(), "one Java message per protoc vector");
        for (String[] v : vectors) {
            String name = v[0];
            Encodable m = java.get(name);
            assertNotNull(m, name);
            byte[] expected = hex(v[v.length - 1]);
            assertArrayEquals(expected, EncodeContext.encodeToArray(m), name + ": bytes differ from protoc's");
            Object decoded = PbParser.parse(expected, decoderFor(v[1]));
            assertEquals(m, decoded, name + ": decoding protoc's bytes");
        }
    }

    /** Encodes through 16-byte buffers and decodes fed one byte at a time: resumption on both sides. */
    static <T> T splitRoundTrip(Encodable m, PbCallback<T> decoder) {
        byte[] whole = EncodeContext.encodeToArray(m);
        ByteBuffer out = ByteBuffer.allocate(whole.length);
        EncodeContext c = new EncodeContext();
        ByteBuffer small = ByteBuffer.allocate(EncodeContext.MIN_BUFFER_BYTES);
        while (true) {
            small.clear();
            boolean done = m.encode(c, small);
            small.flip();
            out.put(small);
            if (done) {
                break;
            }
        }
        assertArrayEquals(whole, out.array(), "split encoding equals whole encoding");
        PbParser p = new PbParser(1 << 20);
        p.prepare(decoder, whole.length);
        for (int i = 0; i < whole.length; i++) {
            boolean finished = p.feed(ByteBuffer.wrap(whole, i, 1));
            assertEquals(i == whole.length - 1, finished);
        }
        if (whole.length == 0) {
            assertTrue(p.isFinished());
        }
        return p.result();
    }

    @Test
    void everyRequestKindRoundTripsSplitAtEveryByte() {
        List<KvReq> reqs = Arrays.asList(
                KvReq.put("a", b("v")), KvReq.batchPut(Arrays.asList("a", "b"), Arrays.asList(b("1"), b("2"))),
                KvReq.remove("a"), KvReq.batchRemove(Arrays.asList("x.y", "x")), KvReq.mkdir("d"),
                KvReq.compareAndSet("k", b(""), b("n")), KvReq.compareAbsentAndSet("k", b("n")),
                KvReq.putTemp("t", b("v"), 5), KvReq.makeTempDir("td", 7), KvReq.updateTtl("t", 9),
                KvReq.expire("t", 3), KvReq.tryLock("l", 100, 0), KvReq.unlock("l"), KvReq.updateLease("l", 50),
                KvReq.expireLock("l", 44), KvReq.get("g"), KvReq.batchGet(Arrays.asList("g1", "g2")),
                KvReq.list("d"), KvReq.get("r").readKind(KvReadKind.READ_INDEX),
                KvReq.list("").readKind(KvReadKind.FOLLOWER_READ), KvReq.put("\u4e2d\u6587.\ud83d\ude00", new byte[70000]).session(5, 6).seq(1000, 990),
                new KvReq());
        KvReq.Decoder d = new KvReq.Decoder();
        for (KvReq r : reqs) {
            assertEquals(r, splitRoundTrip(r, d), r.toString());
        }
    }

    @Test
    void theReadKindIsField16AndLeftOutWhenItIsTheDefault() {
        KvReq follower = KvReq.list("chaos").groupId(1).readKind(KvReadKind.FOLLOWER_READ);
        KvReq back = splitRoundTrip(follower, new KvReq.Decoder());
        assertEquals(KvReadKind.FOLLOWER_READ.number(), back.readKindNumber());
        assertEquals(follower, back);
        byte[] bytes = EncodeContext.encodeToArray(follower);
        // field 16, varint: tag (16 << 3 | 0) = 128 = 0x80 0x01, then 2
        assertEquals("800102", toHex(Arrays.copyOfRange(bytes, bytes.length - 3, bytes.length)));
        // the default (lease read) is not written, so requests of older clients mean the same
        assertArrayEquals(EncodeContext.encodeToArray(KvReq.get("k")),
                EncodeContext.encodeToArray(KvReq.get("k").readKind(KvReadKind.LEASE_READ)));
        assertEquals(KvReadKind.LEASE_READ.number(), PbParser.parse(EncodeContext.encodeToArray(KvReq.get("k")),
                new KvReq.Decoder()).readKindNumber());
    }

    private static String toHex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    @Test
    void responsesAndPushesRoundTrip() {
        KvResp big = KvResp.success(5).nodes(Arrays.asList(KvNode.absent("x"),
                new KvNode("y", b("v"), false, 1, 2, 3, 4, 5, 6)));
        assertEquals(big, splitRoundTrip(big, new KvResp.Decoder()));
        KvResp empty = new KvResp();
        assertEquals(empty, PbParser.parse(new byte[0], new KvResp.Decoder()));
        KvLockEvent lost = new KvLockEvent(2, "l", KvLockEvent.LOST, 9, 0, 1, 1);
        assertEquals(lost, splitRoundTrip(lost, new KvLockEvent.Decoder()));
        KvWatchReq remove = new KvWatchReq(0, true, false, Collections.singletonList("k"), new long[]{0});
        assertEquals(remove, splitRoundTrip(remove, new KvWatchReq.Decoder()));
        // a later part of a resync in parts (field 6, continued): no protoc vector of its own
        KvWatchNotify later = new KvWatchNotify(1, 121, Collections.singletonList(new KvWatchEvent("d", null, true,
                Collections.singletonList(KvNode.of("d.k2", b("w"), false, 3, 3)), false, true)));
        KvWatchNotify back = splitRoundTrip(later, new KvWatchNotify.Decoder());
        assertEquals(later, back);
        assertTrue(back.events().get(0).isContinued());
        // "moved" (field 4): the node dropped the connection's watches; no protoc vector of its own
        KvWatchNotify moved = new KvWatchNotify(1, 130, Collections.emptyList(), true);
        KvWatchNotify movedBack = splitRoundTrip(moved, new KvWatchNotify.Decoder());
        assertEquals(moved, movedBack);
        assertTrue(movedBack.moved());
        assertFalse(back.moved());
        // field 4 as protobuf writes it: tag 0x20, value 1, after group 1 and index 130
        assertEquals(moved, PbParser.parse(hex("0801" + "108201" + "2001"), new KvWatchNotify.Decoder()));
    }

    @Test
    void decodersAcceptUnpackedKnownIndexesAndRefuseMismatchedCounts() {
        // keys "a","b" and known_indexes 5, 6 written unpacked (tag 0x28), as protobuf allows
        byte[] unpacked = hex("2201612201622805" + "2806");
        KvWatchReq r = PbParser.parse(unpacked, new KvWatchReq.Decoder());
        assertArrayEquals(new long[]{5, 6}, r.knownIndexes());
        byte[] mismatched = hex("22016122016228 05".replace(" ", ""));
        assertThrows(CodecException.class, () -> PbParser.parse(mismatched, new KvWatchReq.Decoder()));
        // no known_indexes at all means 0 for every key
        assertArrayEquals(new long[2], PbParser.parse(hex("2201612201 62".replace(" ", "")),
                new KvWatchReq.Decoder()).knownIndexes());
    }

    @Test
    void malformedUtf8KeyIsACodecError() {
        byte[] bad = hex("1a02c328"); // field 3 (key) holding an invalid 2-byte sequence
        assertThrows(CodecException.class, () -> PbParser.parse(bad, new KvReq.Decoder()));
    }

    @Test
    void unknownFieldsAreSkipped() {
        // op PUT, then an unknown field 99 (varint 1), then key "k"
        byte[] withUnknown = hex("0801" + "98 06 01".replace(" ", "") + "1a016b");
        KvReq r = PbParser.parse(withUnknown, new KvReq.Decoder());
        assertEquals(KvOp.PUT, r.op());
        assertEquals("k", r.key());
    }

    @Test
    void accessorsGiveNeverNullDefaults() {
        KvReq r = new KvReq();
        assertNull(r.op());
        assertEquals(0, r.value().length);
        assertTrue(r.keys().isEmpty());
        assertTrue(r.values().isEmpty());
        assertEquals(0, r.expectedValue().length);
        assertTrue(new KvResp().nodes().isEmpty());
        // a null value is an empty one: not written (op takes 2 bytes, key "a" 3)
        assertEquals(5, EncodeContext.encodeToArray(KvReq.put("a", null)).length);
    }
}
