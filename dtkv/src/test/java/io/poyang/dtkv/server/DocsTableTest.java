package io.poyang.dtkv.server;

import io.poyang.dtkv.KvCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/** The error-code table in docs/dtkv.md is the one in KvCode: same numbers, names and meanings. */
class DocsTableTest {

    @Test
    void docsTableMatchesKvCode() throws IOException {
        Path doc = Paths.get("..", "docs", "dtkv.md");
        List<String> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
            if (line.startsWith("| code | name | meaning |")) {
                inTable = true;
            } else if (inTable && line.startsWith("| ") && !line.startsWith("|---")) {
                rows.add(line);
            } else if (inTable && !line.startsWith("|")) {
                break;
            }
        }
        List<String> expected = new ArrayList<>();
        for (KvCode c : KvCode.values()) {
            expected.add("| " + c.number() + " | " + c.name() + " | " + c.meaning() + " |");
        }
        assertEquals(expected, rows);
    }
}
