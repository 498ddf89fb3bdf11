package io.poyang.codec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves the encoder writes exactly what protoc writes, and the decoder reads it: reference.txt
 * holds, for each test message, its text format and the bytes {@code protoc --encode} made of it
 * (protoc 3.25.3 on all_types.proto). protoc is not needed to run this; to remake the file run
 * {@code mvn -o -pl client test -Dtest=ProtocReferenceTest -Dpoyang.protoc=/path/to/protoc}.
 */
class ProtocReferenceTest {

    private static final String RESOURCE_DIR = "src/test/resources/protoc";
    private static final int RANDOM_CASES = 60;

    /** The messages compared with protoc: hand-picked edge cases, then seeded random ones. */
    static List<AllTypes> cases() {
        List<AllTypes> out = new ArrayList<>();
        out.add(new AllTypes()); // all defaults: zero bytes

        AllTypes typical = new AllTypes();
        typical.fInt32 = 150;
        typical.fString = "testing";
        typical.fNested = new Nested(150, "");
        typical.fPackedInt64 = new long[]{3, 270, 86942};
        out.add(typical);

        AllTypes max = new AllTypes();
        max.fInt32 = Integer.MAX_VALUE;
        max.fInt64 = Long.MAX_VALUE;
        max.fUint32 = -1; // 2^32-1
        max.fUint64 = -1L; // 2^64-1
        max.fSint32 = Integer.MAX_VALUE;
        max.fSint64 = Long.MAX_VALUE;
        max.fBool = true;
        max.fEnum = 2;
        max.fFixed32 = -1;
        max.fFixed64 = -1L;
        max.fSfixed32 = Integer.MAX_VALUE;
        max.fSfixed64 = Long.MAX_VALUE;
        max.fFloat = Float.MAX_VALUE;
        max.fDouble = Double.MAX_VALUE;
        max.fString = "\u00e9\u4e2d\ud83d\ude00";
        max.fBytes = new byte[]{0, (byte) 0xFF, '"', '\\'};
        max.fNested = new Nested(Long.MAX_VALUE, "n");
        max.fPackedInt64 = new long[]{Long.MAX_VALUE, -1L, 0};
        max.fPackedFixed64 = new long[]{-1L, 0, Long.MAX_VALUE};
        max.fMaxField = Integer.MAX_VALUE;
        out.add(max);

        AllTypes min = new AllTypes();
        min.fInt32 = Integer.MIN_VALUE;
        min.fInt64 = Long.MIN_VALUE;
        min.fUint32 = 1;
        min.fUint64 = Long.MIN_VALUE; // 2^63
        min.fSint32 = Integer.MIN_VALUE;
        min.fSint64 = Long.MIN_VALUE;
        min.fEnum = AllTypes.COLOR_NEGATIVE; // a negative enum takes 10 bytes
        min.fFixed32 = 1;
        min.fFixed64 = 1;
        min.fSfixed32 = Integer.MIN_VALUE;
        min.fSfixed64 = Long.MIN_VALUE;
        min.fFloat = Float.MIN_VALUE;
        min.fDouble = -Double.MIN_VALUE;
        min.fNested = new Nested(0, ""); // present but empty: written as 8a 01 00
        min.fRepeatedNested.add(new Nested(0, ""));
        min.fRepeatedNested.add(new Nested(-1, "x"));
        min.fRepeatedString.add("");
        min.fRepeatedString.add("a");
        min.fRepeatedString.add("");
        min.fPackedInt64 = new long[]{Long.MIN_VALUE, Integer.MIN_VALUE};
        min.fMaxField = Integer.MIN_VALUE;
        out.add(min);

        AllTypes special = new AllTypes();
        special.fFloat = Float.NaN;
        special.fDouble = Double.NEGATIVE_INFINITY;
        special.fChild = new AllTypes();
        special.fChild.fFloat = Float.POSITIVE_INFINITY;
        special.fChild.fDouble = Double.NaN;
        special.fChild.fChild = new AllTypes(); // an empty grandchild, present
        out.add(special);

        for (int i = 0; i < RANDOM_CASES; i++) {
            out.add(AllTypes.random(new Random(1000 + i), 3));
        }
        return out;
    }

    static final class Reference {
        final String text;
        final String hex;

        Reference(String text, String hex) {
            this.text = text;
            this.hex = hex;
        }
    }

    static List<Reference> load() throws IOException {
        List<Reference> refs = new ArrayList<>();
        String text = null;
        try (InputStream in = ProtocReferenceTest.class.getResourceAsStream("/protoc/reference.txt")) {
            if (in == null) {
                throw new IOException("protoc/reference.txt is missing from the test resources");
            }
            for (String line : new String(readAll(in), StandardCharsets.UTF_8).split("\n")) {
                if (line.startsWith("text: ")) {
                    text = line.substring(6);
                } else if (line.startsWith("hex: ")) {
                    refs.add(new Reference(text, line.substring(5)));
                }
            }
        }
        return refs;
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    @Test
    void encoderWritesExactlyTheBytesProtocWrites() throws IOException {
        List<AllTypes> cases = cases();
        List<Reference> refs = load();
        assertEquals(cases.size(), refs.size(), "reference.txt is out of date: regenerate it");
        for (int i = 0; i < cases.size(); i++) {
            AllTypes m = cases.get(i);
            Reference ref = refs.get(i);
            assertEquals(ref.text, m.toText(), "case " + i + ": the test message changed; regenerate reference.txt");
            assertEquals(ref.hex, Hex.of(EncodeContext.encodeToArray(m)), "case " + i + ": " + ref.text);
        }
    }

    @Test
    void decoderReadsWhatProtocWrites() throws IOException {
        List<AllTypes> cases = cases();
        List<Reference> refs = load();
        for (int i = 0; i < cases.size(); i++) {
            AllTypes decoded = PbParser.parse(Hex.bytes(refs.get(i).hex), new AllTypes.Callback());
            assertEquals(cases.get(i), decoded, "case " + i);
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "poyang.protoc", matches = ".+")
    void regenerateReferenceWithProtoc() throws Exception {
        String protoc = System.getProperty("poyang.protoc");
        Path dir = Paths.get(RESOURCE_DIR);
        assertTrue(Files.exists(dir.resolve("all_types.proto")), "run from the client module directory");
        StringBuilder out = new StringBuilder();
        out.append("# Made by ProtocReferenceTest with protoc --encode=poyang.test.AllTypes all_types.proto\n");
        out.append("# (").append(version(protoc)).append("). One case per text/hex pair.\n");
        List<AllTypes> cases = cases();
        for (int i = 0; i < cases.size(); i++) {
            String text = cases.get(i).toText();
            Process p = new ProcessBuilder(protoc, "--encode=poyang.test.AllTypes", "-I", dir.toString(),
                    dir.resolve("all_types.proto").toString()).redirectErrorStream(false).start();
            try (OutputStream stdin = p.getOutputStream()) {
                stdin.write(text.getBytes(StandardCharsets.UTF_8));
            }
            byte[] encoded = readAll(p.getInputStream());
            String err = new String(readAll(p.getErrorStream()), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "protoc hung");
            assertEquals(0, p.exitValue(), "protoc failed on case " + i + ": " + err + "\n" + text);
            out.append("# case ").append(i).append('\n');
            out.append("text: ").append(text).append('\n');
            out.append("hex: ").append(Hex.of(encoded)).append('\n');
        }
        Files.write(dir.resolve("reference.txt"), out.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String version(String protoc) throws Exception {
        Process p = new ProcessBuilder(protoc, "--version").start();
        String v = new String(readAll(p.getInputStream()), StandardCharsets.UTF_8).trim();
        p.waitFor(30, TimeUnit.SECONDS);
        return v;
    }
}
