package io.poyang.benchmark.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a history file written by {@link HistoryWriter}: one operation per line; blank lines and lines starting
 * with {@code #} are skipped. A bad line stops the read with a {@link HistoryFormatException} naming the line
 * and the problem; so does an operation id used twice.
 */
public final class HistoryReader {

    private HistoryReader() {
    }

    public static List<Operation> read(Path file) throws IOException, HistoryFormatException {
        try (InputStream in = Files.newInputStream(file)) {
            return read(new InputStreamReader(in, StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)));
        }
    }

    /** Reads every operation from {@code in} (closing it is the caller's job). */
    public static List<Operation> read(Reader in) throws IOException, HistoryFormatException {
        BufferedReader lines = in instanceof BufferedReader ? (BufferedReader) in : new BufferedReader(in, 1 << 16);
        List<Operation> ops = new ArrayList<>();
        Map<Long, Long> lineOfId = new HashMap<>();
        long lineNumber = 0;
        while (true) {
            String line;
            try {
                line = lines.readLine();
            } catch (CharacterCodingException e) {
                throw new HistoryFormatException(lineNumber + 1, "not valid UTF-8 text");
            }
            if (line == null) {
                return ops;
            }
            lineNumber++;
            String trimmed = line.trim();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            Operation op = HistoryLine.parse(line, lineNumber);
            Long first = lineOfId.putIfAbsent(op.id(), lineNumber);
            if (first != null) {
                throw new HistoryFormatException(lineNumber, "id=" + op.id() + " was already used on line " + first);
            }
            ops.add(op);
        }
    }
}
