package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.*;

class HistoryFileTest {

    private static final String[] AWKWARD = {
            "", " ", "two words", "quote\"inside", "back\\slash", "\\\"", "new\nline", "tab\tand\rreturn",
            "absent", "\"absent\"", "ok", "key=value", "# not a comment", "unicode: 鄱阳湖 ✓ 🐟", "\u0000\u0001\u007f",
            "lone \uD800 high", "lone \uDC00 low", "\\u0041 is not an escape here", "trailing space "};

    private static List<Operation> everyShape() {
        List<Operation> ops = new ArrayList<>();
        long id = 1;
        ops.add(Operation.put(id++, 0, "k", "v", 10, 20));
        ops.add(Operation.get(id++, 1, "k", "v", 21, 30));
        ops.add(Operation.get(id++, 1, "k", null, 31, 40));
        ops.add(Operation.cas(id++, 2, "k", "v", "w", true, 41, 50));
        ops.add(Operation.cas(id++, 2, "k", null, "w", false, 51, 60));
        ops.add(Operation.remove(id++, 3, "k", true, 61, 70));
        ops.add(Operation.remove(id++, 3, "k", false, 71, 80));
        ops.add(Invocation.put(id++, 4, "k", "x", 81).unknown(5_000_081, "timeout after 5000 ms"));
        ops.add(Invocation.cas(id++, 4, "k", "x", "y", 90).unknown(95, null));
        ops.add(Invocation.get(id++, 5, "k", 100).failed(101, "NOT_LEADER"));
        ops.add(Invocation.remove(id++, -1, "k", Long.MAX_VALUE - 1).unknown(Long.MAX_VALUE, "connection dropped"));
        for (String s : AWKWARD) {
            ops.add(Operation.put(id++, 7, s, s, 200, 300));
            ops.add(Operation.get(id++, 7, s, s, 301, 400));
            ops.add(Operation.cas(id++, 7, s, s, s + "!", true, 401, 500));
            ops.add(Invocation.get(id++, 7, s, 501).unknown(600, s));
        }
        return ops;
    }

    @Test
    void writerAndReaderRoundTripEveryShapeAndAwkwardValues() throws Exception {
        List<Operation> ops = everyShape();
        StringWriter text = new StringWriter();
        try (HistoryWriter w = new HistoryWriter(text)) {
            w.comment("seed=42 with a\nline break");
            for (Operation op : ops) {
                w.write(op);
            }
            assertEquals(ops.size(), w.operations());
        }
        String[] lines = text.toString().split("\n", -1);
        assertEquals(HistoryWriter.HEADER, lines[0]);
        assertEquals("# seed=42 with a\\nline break", lines[1]);
        assertEquals(ops.size() + 3, lines.length, "header, comment, one line per operation, final newline");
        for (int i = 0; i < ops.size(); i++) {
            assertFalse(lines[i + 2].contains("\n") || lines[i + 2].contains("\r"), lines[i + 2]);
        }
        List<Operation> back = HistoryReader.read(new StringReader(text.toString()));
        assertEquals(ops.size(), back.size());
        for (int i = 0; i < ops.size(); i++) {
            Operation a = ops.get(i);
            Operation b = back.get(i);
            assertEquals(a.toString(), b.toString());
            assertEquals(a.key(), b.key());
            assertEquals(a.value(), b.value());
            assertEquals(a.expected(), b.expected());
            assertEquals(a.readValue(), b.readValue());
            assertEquals(a.status(), b.status());
            assertEquals(a.succeeded(), b.succeeded());
            assertEquals(a.error(), b.error());
            assertEquals(a.invokeNanos(), b.invokeNanos());
            assertEquals(a.completeNanos(), b.completeNanos());
            assertEquals(a.clientId(), b.clientId());
            assertEquals(a.kind(), b.kind());
        }
    }

    @Test
    void lineFormatIsStableAndReadable() {
        assertEquals("id=7 client=2 op=cas key=\"k3\" expect=\"c1-4\" value=\"c2-7\" invoke=1200 complete=2500 status=ok result=true",
                Operation.cas(7, 2, "k3", "c1-4", "c2-7", true, 1200, 2500).toString());
        assertEquals("id=8 client=1 op=get key=\"k3\" invoke=3000 complete=3100 status=ok result=absent",
                Operation.get(8, 1, "k3", null, 3000, 3100).toString());
        assertEquals("id=9 client=1 op=put key=\"k3\" value=\"say \\\"hi\\\"\\n\" invoke=1 complete=2 status=unknown error=\"timeout\"",
                Invocation.put(9, 1, "k3", "say \"hi\"\n", 1).unknown(2, "timeout").toString());
        assertEquals("id=10 client=0 op=remove key=\"k\" invoke=5 complete=6 status=ok result=not-found",
                Operation.remove(10, 0, "k", false, 5, 6).toString());
        assertEquals("id=11 client=0 op=cas key=\"k\" expect=absent value=\"a\" invoke=5 complete=6 status=failed error=\"NOT_LEADER\"",
                Invocation.cas(11, 0, "k", null, "a", 5).failed(6, "NOT_LEADER").toString());
    }

    @Test
    void fileRoundTripInUtf8() throws Exception {
        Path dir = Files.createTempDirectory("history");
        Path file = dir.resolve("h.txt");
        List<Operation> ops = everyShape();
        try (HistoryWriter w = HistoryWriter.create(file)) {
            for (Operation op : ops) {
                w.write(op);
            }
        }
        assertTrue(new String(Files.readAllBytes(file), StandardCharsets.UTF_8).contains("鄱阳湖 ✓ 🐟"));
        List<Operation> back = HistoryReader.read(file);
        assertEquals(ops.size(), back.size());
        assertEquals(ops.get(ops.size() - 1).toString(), back.get(back.size() - 1).toString());
    }

    @Test
    void theFinalStateOfTheNodesRoundTrips() throws Exception {
        Path dir = Files.createTempDirectory("history");
        Path file = dir.resolve("h.txt");
        Map<String, Map<String, String>> nodes = new TreeMap<>();
        nodes.put("n1", new TreeMap<>(Collections.singletonMap("k \"1\"", "v\n1")));
        nodes.put("n2", new TreeMap<>());   // holds no key: declared all the same
        try (HistoryWriter w = HistoryWriter.create(file)) {
            w.write(everyShape().get(0));
            w.finalState(nodes);
        }
        HistoryReader.Contents back = HistoryReader.readAll(file);
        assertEquals(1, back.operations.size());
        assertEquals(nodes, back.finalValuesByNode);
        assertBadLine("node=\"n1\" key=\"k\" value=\"a\"\nnode=\"n1\" key=\"k\" value=\"b\"\n", 2,
                "lists key \"k\" twice");
        assertBadLine("node=\"n1\" key=\"k\" value=\"a\" status=ok\n", 1, "unexpected field 'status'");
        assertBadLine("node=\"n1\" value=\"a\"\n", 1, "does not belong with a node declaration");
    }

    private static void assertBadLine(String text, long line, String problem) {
        HistoryFormatException e = assertThrows(HistoryFormatException.class,
                () -> HistoryReader.read(new StringReader(text)), text);
        assertEquals(line, e.lineNumber(), e.getMessage());
        assertTrue(e.getMessage().startsWith("line " + line + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(problem), "expected '" + problem + "' in: " + e.getMessage());
    }

    @Test
    void badLinesGiveLineNumberedErrors() {
        String good = "id=1 client=0 op=put key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=ok\n";
        String header = "# poyang chaos history v1\n\n";
        assertBadLine(header + good + "id=2 client=0 op=put key=\"k\" value=\"v\" invoke=1 complete=2 status=ok\n", 4,
                "status=ok needs result= (a put's result is ok)");
        assertBadLine(good + "id=2 client=0 op=get key=\"k\" invoke=1 complete=2 status=ok result=v\n", 2,
                "result=v does not fit op=get");
        assertBadLine(good + "id=2 client=0 op=frob key=\"k\" invoke=1 complete=2 status=ok\n", 2,
                "op=frob is not one of put, get, cas, remove");
        assertBadLine(good + "id=2 client=0 op=get key=\"k invoke=1 complete=2 status=ok result=absent\n", 2,
                "unterminated string in key=");
        assertBadLine(good + "id=2 client=0 op=get key=\"k\" invoke=5 complete=2 status=ok result=absent\n", 2,
                "complete=2 is before invoke=5");
        assertBadLine(good + "id=1 client=0 op=get key=\"k\" invoke=1 complete=2 status=ok result=absent\n", 2,
                "id=1 was already used on line 1");
        assertBadLine(good + "id=2 client=0 op=get key=\"k\" invoke=1 complete=2 status=ok result=absent colour=\"red\"\n",
                2, "unexpected field 'colour'");
        assertBadLine("id=2 client=0 op=get invoke=1 complete=2 status=ok result=absent\n", 1, "missing field key=");
        assertBadLine("id=two client=0 op=get key=\"k\" invoke=1 complete=2 status=ok result=absent\n", 1,
                "id= takes a whole number, got two");
        assertBadLine("id=2 client=0 op=get key=k invoke=1 complete=2 status=ok result=absent\n", 1,
                "key= takes a double-quoted string, got k");
        assertBadLine("id=2 client=0 op=get key=\"k\" invoke=1 complete=2 status=unknown result=absent\n", 1,
                "field result= does not belong with status=unknown");
        assertBadLine("id=2 client=0 op=cas key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=true\n", 1,
                "missing field expect=");
        assertBadLine("id=2 client=0 op=get key=\"a\\qb\" invoke=1 complete=2 status=ok result=absent\n", 1,
                "unknown escape '\\q' in key=");
        assertBadLine("id=2 client=0 op=get key=\"a\\u00zz\" invoke=1 complete=2 status=ok result=absent\n", 1,
                "bad \\u escape");
        assertBadLine("id=2 client=0 op=get key=\"k\"invoke=1 complete=2 status=ok result=absent\n", 1,
                "expected a space after the value of key=");
        assertBadLine("id=2 client=0 op=get key=\"k\" invoke=1 complete=2 status=sure result=absent\n", 1,
                "status=sure is not one of ok, unknown, failed");
        assertBadLine("garbage\n", 1, "expected name=value at column 1, got 'garbage'");
        assertBadLine("id=2 id=3 client=0 op=get key=\"k\" invoke=1 complete=2 status=ok result=absent\n", 1,
                "field id= appears twice");
        assertBadLine("id=2 client=0 op=get key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=absent\n", 1,
                "field value= does not belong with op=get");
    }

    @Test
    void invalidUtf8IsAnErrorWithItsLine(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bad.txt");
        byte[] good = "id=1 client=0 op=put key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=ok\n"
                .getBytes(StandardCharsets.UTF_8);
        byte[] bad = {'i', 'd', '=', (byte) 0xC3, (byte) 0x28, '\n'};
        byte[] all = new byte[good.length + bad.length];
        System.arraycopy(good, 0, all, 0, good.length);
        System.arraycopy(bad, 0, all, good.length, bad.length);
        Files.write(file, all);
        HistoryFormatException e = assertThrows(HistoryFormatException.class, () -> HistoryReader.read(file));
        assertEquals(2, e.lineNumber(), e.getMessage());
        assertTrue(e.getMessage().contains("not valid UTF-8"), e.getMessage());
    }

    @Test
    void lineCutShortByACrashIsAnErrorNotLeftOut(@TempDir Path dir) throws IOException {
        // A runner killed mid-write leaves a last line without its end: dropping it silently would check a history
        // with an operation missing, so it must stop the read like any bad line.
        String good = "id=1 client=0 op=put key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=ok\n";
        for (String cut : new String[]{"id=2 client=0 op=get key=\"k\" invoke=3 complete=4 status=ok result=\"v",
                "id=2 client=0 op=cas key=\"k\" expect=\"v\" value=\"w\" invoke=3 complete=4 status=ok result=tr",
                "id=2 client=0 op=remove key=\"k\" invoke=3 complete=4 status=ok result=not",
                "id=2 client=0 op=put key=\"k\" value=\"w\" invoke=3 comp"}) {
            Path file = dir.resolve("cut.txt");
            Files.write(file, (HistoryWriter.HEADER + "\n" + good + cut).getBytes(StandardCharsets.UTF_8));
            HistoryFormatException e = assertThrows(HistoryFormatException.class, () -> HistoryReader.read(file), cut);
            assertEquals(3, e.lineNumber(), e.getMessage());
        }
    }
}
