package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EncodeContext#encodeToArray} encodes through a direct scratch buffer kept per thread, in
 * pieces when the message is larger: its arrays must come out as a heap-buffer encoding would make
 * them, whatever the size, one after another on a thread, and from an encoder that itself calls it.
 */
class EncodeToArrayTest {

    /** A message of one bytes field (field 1). */
    private static final class Blob implements Encodable {
        final byte[] bytes;

        Blob(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfBytesField(1, bytes);
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.stage != 0 || c.bytesField(dest, 1, bytes);
        }
    }

    /** Field 1: the encoding of an inner Blob, made with encodeToArray while this one encodes. */
    private static final class Wrapper implements Encodable {
        final Blob inner;

        Wrapper(Blob inner) {
            this.inner = inner;
        }

        @Override
        public int encodedSize() {
            return PbUtil.sizeOfBytesField(1, EncodeContext.encodeToArray(inner));
        }

        @Override
        public boolean encode(EncodeContext c, ByteBuffer dest) {
            return c.stage != 0 || c.bytesField(dest, 1, EncodeContext.encodeToArray(inner));
        }
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** The encoding through a heap buffer of exactly the message's size, as encodeToArray made it before. */
    private static byte[] throughHeap(Encodable m) {
        ByteBuffer b = ByteBuffer.allocate(m.encodedSize());
        assertTrue(m.encode(new EncodeContext(), b));
        return b.array();
    }

    @Test
    void smallAndLargeMessagesComeOutAsAHeapBufferEncodesThem() {
        // within the scratch buffer, just over it (two pieces), and many times over it
        for (int n : new int[]{0, 1, 100, EncodeContext.SCRATCH_BYTES - 5, 70_000, 5 << 20}) {
            Blob m = new Blob(pattern(n, n));
            byte[] out = EncodeContext.encodeToArray(m);
            assertEquals(m.encodedSize(), out.length, n + " bytes");
            assertArrayEquals(throughHeap(m), out, n + " bytes");
        }
    }

    @Test
    void eachCallGetsItsOwnArrayOnAThreadThatReusesItsScratch() {
        byte[] first = EncodeContext.encodeToArray(new Blob(pattern(5000, 1)));
        byte[] copy = first.clone();
        byte[] second = EncodeContext.encodeToArray(new Blob(pattern(3000, 2)));
        assertArrayEquals(copy, first, "the second call changed the first one's array");
        assertArrayEquals(throughHeap(new Blob(pattern(3000, 2))), second);
    }

    @Test
    void anEncoderThatCallsItItselfGetsBothEncodingsWhole() {
        Blob inner = new Blob(pattern(200_000, 7));   // both in several pieces
        Wrapper outer = new Wrapper(inner);
        byte[] out = EncodeContext.encodeToArray(outer);
        assertArrayEquals(throughHeap(outer), out);
        byte[] innerBytes = throughHeap(inner);
        // the wrapper's field body is the inner encoding, after its tag and length
        int bodyAt = out.length - innerBytes.length;
        assertArrayEquals(innerBytes, Arrays.copyOfRange(out, bodyAt, out.length));
    }

    /** A message that says it is {@code claimed} bytes long and writes what {@code actual} writes. */
    private static Encodable claiming(int claimed, Encodable actual) {
        return new Encodable() {
            @Override
            public int encodedSize() {
                return claimed;
            }

            @Override
            public boolean encode(EncodeContext c, ByteBuffer dest) {
                return actual.encode(c, dest);
            }
        };
    }

    @Test
    void aMessageWritingMoreBytesThanItsSizeIsRefused() {
        Encodable liar = claiming(10, new Blob(pattern(20, 4)));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> EncodeContext.encodeToArray(liar));
        assertTrue(e.getMessage().contains("needs more than its encodedSize() of 10 bytes"), e.getMessage());
    }

    @Test
    void aMessageWritingFewerBytesThanItsSizeIsStillRefused() {
        Encodable liar = claiming(10, new Blob(pattern(1, 5)));   // 3 bytes: tag, length, one byte
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> EncodeContext.encodeToArray(liar));
        assertTrue(e.getMessage().contains("wrote 3 bytes but its encodedSize() is 10"), e.getMessage());
        // the scratch went back: the next call on this thread works
        assertArrayEquals(throughHeap(new Blob(pattern(10, 3))), EncodeContext.encodeToArray(new Blob(pattern(10, 3))));
    }
}
