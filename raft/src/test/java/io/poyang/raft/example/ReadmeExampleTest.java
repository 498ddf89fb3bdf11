package io.poyang.raft.example;

import io.poyang.log.ImpossibleStates;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedding example of raft/README.md: it is this file's neighbour, compiled and run, and the README shows it verbatim. */
class ReadmeExampleTest {

    @Test
    void theReadmeShowsTheExampleAsItIs() throws Exception {
        String source = new String(Files.readAllBytes(Paths.get("src/test/java/io/poyang/raft/example/CounterExample.java")),
                StandardCharsets.UTF_8);
        String readme = new String(Files.readAllBytes(Paths.get("README.md")), StandardCharsets.UTF_8);
        String body = source.substring(source.indexOf("import "));
        assertTrue(readme.replace("\r", "").contains(body.replace("\r", "").trim()),
                "raft/README.md must show CounterExample.java from its imports to its end, unchanged");
    }

    @org.junit.jupiter.api.io.TempDir
    Path dir;

    @Test
    void theExampleRuns() throws Exception {
        ImpossibleStates.reset();
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, "UTF-8"));
        try {
            CounterExample.main(new String[]{dir.toString()});
        } finally {
            System.setOut(old);
        }
        String printed = out.toString("UTF-8");
        old.print(printed);
        assertTrue(printed.contains("apples = 1\n") && printed.contains("apples = 3\n")
                && printed.contains("apples = 6\n"), printed);
        assertTrue(printed.contains("pears = 2 "), printed);
        assertEquals(0, ImpossibleStates.count());
    }
}
