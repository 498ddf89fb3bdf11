package io.poyang.benchmark.chaos;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a history file written by {@link HistoryWriter}: one operation per line in UTF-8; blank lines and lines
 * starting with {@code #} are skipped. A bad line stops the read with a {@link HistoryFormatException} naming the
 * line and the problem; so does an operation id used twice, and text that is not valid UTF-8.
 */
public final class HistoryReader {

    private final List<Operation> operations = new ArrayList<>();
    private final Map<Long, Long> lineOfId = new HashMap<>();
    /** node → key → value, from the final-state lines (empty when the file has none). */
    private final Map<String, Map<String, String>> finalState = new java.util.TreeMap<>();

    /** A history file's operations and the final state of the nodes (empty: the file has none). */
    public static final class Contents {
        public final List<Operation> operations;
        public final Map<String, Map<String, String>> finalValuesByNode;

        Contents(List<Operation> operations, Map<String, Map<String, String>> finalValuesByNode) {
            this.operations = operations;
            this.finalValuesByNode = finalValuesByNode;
        }
    }

    private HistoryReader() {
    }

    public static List<Operation> read(Path file) throws IOException, HistoryFormatException {
        return readAll(file).operations;
    }

    /** The operations and the final-state lines of {@code file}. */
    public static Contents readAll(Path file) throws IOException, HistoryFormatException {
        // Lines are split as bytes and decoded one by one, so an encoding error is reported on its own line.
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        HistoryReader reader = new HistoryReader();
        try (InputStream in = Files.newInputStream(file)) {
            byte[] chunk = new byte[1 << 16];
            ByteArrayOutputStream partial = new ByteArrayOutputStream(256);
            long lineNumber = 0;
            int n;
            while ((n = in.read(chunk)) > 0) {
                int lineStart = 0;
                for (int i = 0; i < n; i++) {
                    if (chunk[i] != '\n') {
                        continue;
                    }
                    ByteBuffer bytes;
                    if (partial.size() == 0) {
                        bytes = ByteBuffer.wrap(chunk, lineStart, i - lineStart);
                    } else {
                        partial.write(chunk, lineStart, i - lineStart);
                        bytes = ByteBuffer.wrap(partial.toByteArray());
                        partial.reset();
                    }
                    reader.accept(decode(utf8, bytes, ++lineNumber), lineNumber);
                    lineStart = i + 1;
                }
                partial.write(chunk, lineStart, n - lineStart);
            }
            if (partial.size() > 0) {
                reader.accept(decode(utf8, ByteBuffer.wrap(partial.toByteArray()), ++lineNumber), lineNumber);
            }
            return new Contents(reader.operations, reader.finalState);
        }
    }

    private static String decode(CharsetDecoder utf8, ByteBuffer bytes, long lineNumber) throws HistoryFormatException {
        String text;
        try {
            text = utf8.decode(bytes).toString();
        } catch (CharacterCodingException e) {
            throw new HistoryFormatException(lineNumber, "not valid UTF-8 text");
        }
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
    }

    /** Reads every operation from text already decoded (closing {@code in} is the caller's job). */
    public static List<Operation> read(Reader in) throws IOException, HistoryFormatException {
        BufferedReader lines = in instanceof BufferedReader ? (BufferedReader) in : new BufferedReader(in, 1 << 16);
        HistoryReader reader = new HistoryReader();
        long lineNumber = 0;
        String line;
        while ((line = lines.readLine()) != null) {
            reader.accept(line, ++lineNumber);
        }
        return reader.operations;
    }

    private void accept(String line, long lineNumber) throws HistoryFormatException {
        String trimmed = line.trim();
        if (trimmed.isEmpty() || trimmed.startsWith("#")) {
            return;
        }
        if (HistoryLine.isFinal(line)) {
            String[] f = HistoryLine.parseFinal(line, lineNumber);
            Map<String, String> node = finalState.computeIfAbsent(f[0], n -> new java.util.TreeMap<>());
            if (f[1] != null && node.put(f[1], f[2]) != null) {
                throw new HistoryFormatException(lineNumber, "node " + HistoryLine.quote(f[0]) + " lists key "
                        + HistoryLine.quote(f[1]) + " twice");
            }
            return;
        }
        Operation op = HistoryLine.parse(line, lineNumber);
        Long first = lineOfId.putIfAbsent(op.id(), lineNumber);
        if (first != null) {
            throw new HistoryFormatException(lineNumber, "id=" + op.id() + " was already used on line " + first);
        }
        operations.add(op);
    }
}
