package io.poyang.codec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random mutations of valid messages either decode or raise {@link CodecException}: no other
 * exception (the callback throws AssertionError if handed a wire type it did not declare), no
 * hang, no huge allocation (the test JVM has 1 GiB), and the same outcome whole or in pieces.
 */
class CodecFuzzTest {

    private static byte[] mutate(byte[] valid, Random r) {
        byte[] m = valid.clone();
        switch (r.nextInt(7)) {
            case 0: // flip bits
                for (int i = 1 + r.nextInt(3); i > 0 && m.length > 0; i--) {
                    m[r.nextInt(m.length)] ^= (byte) (1 << r.nextInt(8));
                }
                return m;
            case 1: // overwrite with an interesting byte
                if (m.length > 0) {
                    byte[] bytes = {0, (byte) 0x80, (byte) 0xFF, 0x7F, 0x02, 0x0B, 0x0F};
                    m[r.nextInt(m.length)] = bytes[r.nextInt(bytes.length)];
                }
                return m;
            case 2: // truncate
                return Arrays.copyOf(m, m.length == 0 ? 0 : r.nextInt(m.length));
            case 3: { // insert random bytes
                int at = r.nextInt(m.length + 1);
                byte[] ins = new byte[1 + r.nextInt(4)];
                r.nextBytes(ins);
                byte[] out = new byte[m.length + ins.length];
                System.arraycopy(m, 0, out, 0, at);
                System.arraycopy(ins, 0, out, at, ins.length);
                System.arraycopy(m, at, out, at + ins.length, m.length - at);
                return out;
            }
            case 4: { // delete a range
                if (m.length == 0) {
                    return m;
                }
                int at = r.nextInt(m.length);
                int n = 1 + r.nextInt(Math.min(4, m.length - at));
                byte[] out = new byte[m.length - n];
                System.arraycopy(m, 0, out, 0, at);
                System.arraycopy(m, at + n, out, at, m.length - at - n);
                return out;
            }
            case 5: { // a run of continuation bytes
                if (m.length == 0) {
                    return m;
                }
                int at = r.nextInt(m.length);
                for (int i = at; i < Math.min(m.length, at + 1 + r.nextInt(12)); i++) {
                    m[i] = (byte) 0xFF;
                }
                return m;
            }
            default: { // pure noise
                byte[] out = new byte[r.nextInt(40)];
                r.nextBytes(out);
                return out;
            }
        }
    }

    /** "ok" or the CodecException's message; anything else propagates and fails the test. */
    private static String outcome(byte[] msg, int[] cuts) {
        PbParser p = new PbParser(1 << 16);
        try {
            p.prepare(new AllTypes.Callback(), msg.length);
            int from = 0;
            boolean done = false;
            for (int k = 0; k <= cuts.length; k++) {
                int to = k < cuts.length ? cuts[k] : msg.length;
                done = p.feed(ByteBuffer.wrap(msg, from, to - from));
                from = to;
            }
            assertTrue(done, "all bytes fed but the message is not finished");
            return "ok " + p.result();
        } catch (CodecException e) {
            return e.getMessage();
        }
    }

    @Test
    void mutatedMessagesDecodeOrFailWithACodecExceptionAndNothingElse() {
        Random r = new Random(99);
        long deadline = System.nanoTime() + 40_000_000_000L;
        int decoded = 0;
        int refused = 0;
        for (AllTypes m : CodecRoundTripTest.messages(10, 300, 2)) {
            byte[] valid = EncodeContext.encodeToArray(m);
            for (int i = 0; i < 100; i++) {
                byte[] bad = mutate(valid, r);
                String whole = outcome(bad, new int[0]);
                int a = r.nextInt(bad.length + 1);
                int b = r.nextInt(bad.length + 1);
                String split = outcome(bad, new int[]{Math.min(a, b), Math.max(a, b)});
                if (!whole.equals(split)) {
                    throw new AssertionError("whole: " + whole + "\nsplit: " + split + "\ninput " + Hex.of(bad));
                }
                if (whole.startsWith("ok")) {
                    decoded++;
                } else {
                    refused++;
                }
            }
            assertTrue(System.nanoTime() < deadline, "fuzzing took too long: a decoder loop?");
        }
        assertTrue(decoded > 1000 && refused > 1000, "both outcomes exercised: " + decoded + " decoded, "
                + refused + " refused");
    }
}
