package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Random messages of every field type, encoded into buffers of every size and decoded from any split. */
class CodecRoundTripTest {

    /** One parser and one callback reused for every decode, as a connection would. */
    private final PbParser parser = new PbParser(1 << 20);
    private final AllTypes.Callback callback = new AllTypes.Callback();

    static List<AllTypes> messages(long seed, int count, int depth) {
        Random r = new Random(seed);
        List<AllTypes> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(AllTypes.random(r, depth));
        }
        return out;
    }

    /**
     * Decodes {@code msg} fed as the pieces between consecutive cut points, each piece in its own
     * buffer with unrelated bytes before and after it (so position and limit must be respected).
     */
    AllTypes decodeInPieces(byte[] msg, int[] cuts, boolean direct) {
        parser.prepare(callback, msg.length);
        int from = 0;
        for (int k = 0; k <= cuts.length; k++) {
            int to = k < cuts.length ? cuts[k] : msg.length;
            int len = to - from;
            ByteBuffer b = direct ? ByteBuffer.allocateDirect(len + 6) : ByteBuffer.allocate(len + 6);
            b.put(new byte[]{(byte) 0xFF, (byte) 0x80, 0x7F});
            b.put(msg, from, len);
            b.put(new byte[]{(byte) 0xFF, (byte) 0x80, 0x0A});
            b.position(3);
            b.limit(3 + len);
            boolean done = parser.feed(b);
            assertEquals(to == msg.length, done, "finished exactly at the end (piece ending at " + to + ")");
            assertEquals(3 + len, b.position(), "the whole piece was consumed");
            assertEquals(3 + len, b.limit(), "the limit is left alone");
            from = to;
        }
        return parser.result();
    }

    @Test
    void randomMessagesOfEveryFieldTypeRoundTrip() {
        for (AllTypes m : messages(1, 3000, 2)) {
            byte[] bytes = EncodeContext.encodeToArray(m);
            assertEquals(m.encodedSize(), bytes.length);
            assertEquals(m, PbParser.parse(bytes, new AllTypes.Callback()));
            assertEquals(m, decodeInPieces(bytes, new int[0], false), "with a reused parser and callback");
        }
    }

    @Test
    void everyMessageDecodesTheSameWhenSplitAtEveryBytePosition() {
        List<AllTypes> ms = messages(2, 40, 2);
        ms.addAll(ProtocReferenceTest.cases().subList(0, 5));
        int n = 0;
        for (AllTypes m : ms) {
            byte[] bytes = EncodeContext.encodeToArray(m);
            for (int cut = 0; cut <= bytes.length; cut++) {
                assertEquals(m, decodeInPieces(bytes, new int[]{cut}, (n++ & 1) == 0), "split at " + cut);
            }
        }
    }

    @Test
    void everyMessageDecodesTheSameInThreeRandomPieces() {
        Random r = new Random(3);
        for (AllTypes m : messages(3, 2000, 2)) {
            byte[] bytes = EncodeContext.encodeToArray(m);
            int a = r.nextInt(bytes.length + 1);
            int b = r.nextInt(bytes.length + 1);
            int[] cuts = {Math.min(a, b), Math.max(a, b)};
            assertEquals(m, decodeInPieces(bytes, cuts, r.nextBoolean()), "cuts " + Arrays.toString(cuts));
        }
    }

    @Test
    void everyMessageDecodesTheSameFedByteByByte() {
        for (AllTypes m : messages(4, 150, 3)) {
            byte[] bytes = EncodeContext.encodeToArray(m);
            int[] cuts = new int[Math.max(0, bytes.length - 1)];
            for (int i = 0; i < cuts.length; i++) {
                cuts[i] = i + 1;
            }
            assertEquals(m, decodeInPieces(bytes, cuts, false));
        }
    }

    /** Encodes into a destination of {@code size} bytes again and again, draining it each time. */
    static byte[] encodeInChunks(Encodable m, EncodeContext c, int size, boolean direct) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer dest = direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
        c.reset();
        int calls = 0;
        int maxCalls = m.encodedSize() + 2;
        for (; ; ) {
            dest.clear();
            boolean done = m.encode(c, dest);
            dest.flip();
            byte[] chunk = new byte[dest.remaining()];
            dest.get(chunk);
            out.write(chunk, 0, chunk.length);
            if (done) {
                return out.toByteArray();
            }
            assertTrue(chunk.length > 0, "no progress with a " + size + "-byte buffer");
            assertTrue(++calls <= maxCalls, "encoding does not end");
        }
    }

    @Test
    void encodingIntoBuffersOfEverySizeFromTheMinimumGivesIdenticalBytes() {
        EncodeContext c = new EncodeContext(); // reused across messages, as a connection would
        int n = 0;
        for (AllTypes m : messages(5, 30, 2)) {
            byte[] expected = EncodeContext.encodeToArray(m);
            for (int size = EncodeContext.MIN_BUFFER_BYTES; size <= expected.length + 1; size++) {
                assertArrayEquals(expected, encodeInChunks(m, c, size, (n++ & 1) == 0), "buffer of " + size);
            }
        }
    }

    @Test
    void aBufferWithTheWholeRestOfTheMessageIsAlwaysEnoughEvenBelowTheMinimum() {
        for (AllTypes m : messages(6, 300, 1)) {
            byte[] expected = EncodeContext.encodeToArray(m);
            // Encode a prefix with roomy buffers, then the rest into a buffer of exactly its size.
            for (int prefix : new int[]{expected.length / 2, expected.length - 3}) {
                if (prefix < EncodeContext.MIN_BUFFER_BYTES) {
                    continue;
                }
                EncodeContext c = new EncodeContext();
                ByteBuffer first = ByteBuffer.allocate(prefix);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                if (m.encode(c, first)) {
                    continue;
                }
                out.write(first.array(), 0, first.position());
                ByteBuffer rest = ByteBuffer.allocate(expected.length - first.position());
                assertTrue(m.encode(c, rest), "the rest fits exactly");
                out.write(rest.array(), 0, rest.position());
                assertArrayEquals(expected, out.toByteArray());
            }
        }
    }

    /** A message whose bytes field comes from a ByteBuffer, direct or heap. */
    static final class BufferBody implements Encodable {
        final ByteBuffer body;

        BufferBody(ByteBuffer body) {
            this.body = body;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfInt32Field(1, 7) + PbUtil.sizeOfLenField(2, body.remaining());
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            switch (c.stage) {
                case 0:
                    if (!c.int32Field(dest, 1, 7)) return false;
                case 1:
                    if (!c.bytesField(dest, 2, body)) return false;
                default:
                    return true;
            }
        }
    }

    @Test
    void bytesFieldsFromBuffersResumeAndLeaveTheSourceAlone() {
        byte[] data = new byte[300];
        new Random(7).nextBytes(data);
        ByteBuffer direct = ByteBuffer.allocateDirect(310);
        direct.position(5);
        direct.put(data);
        direct.position(5);
        direct.limit(305);
        ByteBuffer heap = ByteBuffer.wrap(new byte[310], 5, 300).slice();
        heap.put(data);
        heap.clear();
        byte[] expected = EncodeContext.encodeToArray(new BufferBody(ByteBuffer.wrap(data)));
        for (int size = EncodeContext.MIN_BUFFER_BYTES; size < 320; size++) {
            assertArrayEquals(expected, encodeInChunks(new BufferBody(direct), new EncodeContext(), size, false));
            assertArrayEquals(expected, encodeInChunks(new BufferBody(heap), new EncodeContext(), size, true));
            assertEquals(5, direct.position());
            assertEquals(305, direct.limit());
            assertEquals(0, heap.position());
        }
    }

    @Test
    void feedStopsAtTheEndOfTheMessageAndLeavesTheNextOneInTheBuffer() {
        List<AllTypes> ms = messages(8, 3, 1);
        byte[] a = EncodeContext.encodeToArray(ms.get(0));
        byte[] b = EncodeContext.encodeToArray(ms.get(1));
        ByteBuffer both = ByteBuffer.allocate(a.length + b.length);
        both.put(a).put(b).flip();
        parser.prepare(callback, a.length);
        assertTrue(parser.feed(both));
        assertEquals(a.length, both.position());
        assertEquals(0, parser.remaining());
        assertEquals(ms.get(0), parser.result());
        assertTrue(parser.feed(both), "a finished parser takes nothing more");
        assertEquals(a.length, both.position());
        parser.prepare(callback, b.length);
        assertTrue(parser.feed(both));
        assertEquals(ms.get(1), parser.result());
        assertFalse(both.hasRemaining());
    }

    @Test
    void anEmptyMessageFinishesAtPrepare() {
        parser.prepare(callback, 0);
        assertTrue(parser.isFinished());
        assertEquals(new AllTypes(), parser.result());
        assertTrue(parser.feed(ByteBuffer.allocate(0)));
        assertEquals(0, EncodeContext.encodeToArray(new AllTypes()).length);
    }

    @Test
    void resultBeforeTheEndAndFeedBeforePrepareAreRefused() {
        PbParser p = new PbParser(100);
        assertThrows(IllegalStateException.class, () -> p.feed(ByteBuffer.allocate(1)));
        p.prepare(callback, 3);
        p.feed(ByteBuffer.wrap(new byte[]{8}));
        assertFalse(p.isFinished());
        assertEquals(2, p.remaining());
        assertThrows(IllegalStateException.class, p::result);
        assertThrows(IllegalArgumentException.class, () -> new PbParser(-1));
    }

    /** A message that claims one size and writes another. */
    static final class Liar implements Encodable {
        final int claimed;

        Liar(int claimed) {
            this.claimed = claimed;
        }

        @Override
        public int encodedSize() {
            return claimed;
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.int32Field(dest, 1, 150); // 3 bytes
        }
    }

    static final class Holder implements Encodable {
        final Encodable child;

        Holder(Encodable child) {
            this.child = child;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfMessageField(1, child);
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.messageField(dest, 1, child);
        }
    }

    @Test
    void aMessageWritingOtherThanItsEncodedSizeIsCaughtAndNamed() {
        for (int claimed : new int[]{2, 4}) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> encodeInChunks(new Holder(new Liar(claimed)), new EncodeContext(), 64, false));
            assertTrue(e.getMessage().contains(Liar.class.getName()) && e.getMessage().contains("encodedSize()"),
                    e.getMessage());
        }
        assertThrows(IllegalStateException.class, () -> EncodeContext.encodeToArray(new Liar(2)));
        assertThrows(IllegalStateException.class, () -> EncodeContext.encodeToArray(new Liar(4)));
    }
}
