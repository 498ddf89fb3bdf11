package io.poyang.benchmark.chaos;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

class ChaosCommandTest {

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();

    private int run(String... args) {
        return ChaosCommand.run(args, new PrintStream(outBytes, true), new PrintStream(errBytes, true));
    }

    private int run(ChaosRunner runner, String... args) {
        return ChaosCommand.run(args, new PrintStream(outBytes, true), new PrintStream(errBytes, true), () -> runner);
    }

    private String out() {
        return new String(outBytes.toByteArray(), StandardCharsets.UTF_8);
    }

    private String err() {
        return new String(errBytes.toByteArray(), StandardCharsets.UTF_8);
    }

    private static Path write(Path dir, List<Operation> ops) throws IOException {
        Path file = dir.resolve("history.txt");
        try (HistoryWriter w = HistoryWriter.create(file)) {
            for (Operation op : ops) {
                w.write(op);
            }
        }
        return file;
    }

    @Test
    void helpExitsZero() {
        assertEquals(0, run("--help"));
        assertTrue(out().startsWith("usage: poyang chaos"), out());
        assertTrue(out().contains("--check FILE"), out());
    }

    @Test
    void badOptionExitsTwoWithTheReason() {
        assertEquals(2, run("--nodes", "7"));
        assertEquals("poyang chaos: --nodes must be 3 or 5, got 7\n", err());
    }

    @Test
    void checkOfALinearizableHistoryExitsZero(@TempDir Path dir) throws IOException {
        Path file = write(dir, LinearizableHistoryGenerator.generate(3, 4, 4, 2_000, 0.02));
        assertEquals(0, run("--check", file.toString()), err());
        assertTrue(out().startsWith("checking " + file + ": 2,000 operations on 4 keys"), out());
        assertTrue(out().trim().endsWith("s"), out());
        assertTrue(out().contains("linearizable: all 4 keys (2,000 operations)"), out());
        assertFalse(out().contains("key \"k0\""), "passing keys are not listed without --verbose");
        outBytes.reset();
        assertEquals(0, run("--check", file.toString(), "--verbose"));
        assertTrue(out().contains("key \"k0\": linearizable;"), out());
    }

    @Test
    void checkOfAViolationExitsOneAndPrintsTheWindow(@TempDir Path dir) throws IOException {
        Path file = write(dir, new HistoryBuilder()
                .put(1, "1", 0, 1_000)
                .put(2, "2", 2_000, 3_000)
                .get(3, "1", 4_000, 5_000)
                .build());
        assertEquals(1, run("--check", file.toString()));
        assertTrue(out().contains("key \"k\": NOT LINEARIZABLE: no order of the 2 operations below"), out());
        String[] lines = out().trim().split("\n");
        assertTrue(lines[lines.length - 1].startsWith("NOT LINEARIZABLE: 1 of 1 keys (\"k\")"), out());
    }

    @Test
    void checkThatRunsOutOfBudgetExitsThree(@TempDir Path dir) throws IOException {
        Path file = write(dir, LinearizableHistoryGenerator.generate(5, 4, 1, 500, 0.0));
        assertEquals(3, run("--check", file.toString(), "--max-states", "3"));
        assertTrue(out().contains("INCONCLUSIVE: the search budget ran out on 1 of 1 keys (\"k0\")"), out());
        assertTrue(out().contains("raise --max-states or --max-time"), out());
    }

    @Test
    void checkOfAMissingFileExitsTwo(@TempDir Path dir) {
        Path missing = dir.resolve("nope.txt");
        assertEquals(2, run("--check", missing.toString()));
        assertEquals("poyang chaos: no such history file: " + missing + "\n", err());
    }

    @Test
    void checkOfABadFileExitsTwoNamingTheLine(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bad.txt");
        Files.write(file, ("# poyang chaos history v1\n"
                + "id=1 client=0 op=put key=\"k\" value=\"v\" invoke=1 complete=2 status=ok result=ok\n"
                + "id=2 client=0 op=get key=\"k\" invoke=3 complete=4 status=ok\n").getBytes(StandardCharsets.UTF_8));
        assertEquals(2, run("--check", file.toString()));
        assertEquals("poyang chaos: " + file + ": line 3: status=ok needs result= (a get's result is a \"quoted value\" "
                + "or absent)\n", err());
    }

    @Test
    void checkWithRunOptionsExitsTwo() {
        assertEquals(2, run("--check", "h.txt", "--clients", "3"));
        assertTrue(err().contains("--check replays a recorded history and takes no run options (--clients)"), err());
    }

    /**
     * A stand-in for the real runner: clients on threads doing random operations on one in-process register per
     * key, recorded like the real runner will. With {@code loseLastWrite} the final state forgets an acknowledged
     * write, as a buggy cluster might.
     */
    private static ChaosRunner inProcess(boolean loseLastWrite) {
        return (options, recorder, out) -> {
            Map<String, String> registers = new HashMap<>();
            Object lock = new Object();
            Thread[] clients = new Thread[options.clients];
            String[] lastWriteKey = new String[1];
            String[] overwrittenByLastPut = new String[1];
            for (int c = 0; c < clients.length; c++) {
                int client = c;
                clients[c] = new Thread(() -> {
                    Random random = new Random(options.seed + client);
                    for (int i = 0; i < 300; i++) {
                        String key = "k" + random.nextInt(options.keys);
                        String value = "c" + client + "-" + i;
                        int kind = random.nextInt(4);
                        Invocation inv = kind == 0 ? recorder.invokePut(client, key, value)
                                : kind == 1 ? recorder.invokeGet(client, key)
                                : kind == 2 ? recorder.invokeCas(client, key, value, value + "'")
                                : recorder.invokeRemove(client, key);
                        Operation done;
                        synchronized (lock) {
                            String current = registers.get(key);
                            switch (kind) {
                                case 0:
                                    overwrittenByLastPut[0] = registers.put(key, value);
                                    lastWriteKey[0] = key;
                                    done = inv.putOk(recorder.nowNanos());
                                    break;
                                case 1:
                                    done = inv.getOk(recorder.nowNanos(), current);
                                    break;
                                case 2:
                                    boolean swap = value.equals(current);
                                    if (swap) {
                                        registers.put(key, value + "'");
                                    }
                                    done = inv.casOk(recorder.nowNanos(), swap);
                                    break;
                                default:
                                    done = inv.removeOk(recorder.nowNanos(), registers.remove(key) != null);
                                    break;
                            }
                        }
                        recorder.record(done);
                    }
                });
                clients[c].start();
            }
            recorder.note("fault: none (in-process stand-in)");
            for (Thread t : clients) {
                t.join();
            }
            if (loseLastWrite) {
                // the last put is lost: the key goes back to the acknowledged value it overwrote (one
                // nobody wrote again: values are unique), or to a value nobody wrote
                String older = overwrittenByLastPut[0];
                registers.put(lastWriteKey[0], older != null ? older : "stale");
            }
            Map<String, Map<String, String>> nodes = new HashMap<>();
            for (int n = 1; n <= options.nodes; n++) {
                nodes.put("n" + n, new HashMap<>(registers));
            }
            return nodes;
        };
    }

    @Test
    void runnerPlugsIn(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("run.txt");
        assertEquals(0, run(inProcess(false), "--seed", "5", "--clients", "3", "--keys", "2", "--history",
                file.toString()), out() + err());
        assertTrue(out().startsWith("chaos: nodes=3 duration=60s faults=kill,pause,partition,transfer,membership,"
                + "restart-all clients=3 keys=2 seed=5\nhistory: " + file + "\n"), out());
        assertTrue(out().contains("linearizable: all 2 keys (902 operations)"), out());
        assertTrue(out().contains("replay the check: ./poyang chaos --check " + file), out());
        List<String> lines = Files.readAllLines(file);
        assertEquals("# poyang chaos history v1", lines.get(0));
        assertEquals("# nodes=3 duration=60s faults=kill,pause,partition,transfer,membership,restart-all clients=3 "
                + "keys=2 seed=5", lines.get(1));
        outBytes.reset();
        assertEquals(0, run("--check", file.toString()));
        assertTrue(out().contains("900 operations on 2 keys"), out());
        assertTrue(out().contains("with the final state of 3 nodes"), out());
    }

    @Test
    void runWhoseFinalStateLostAWriteExitsOne(@TempDir Path dir) {
        Path file = dir.resolve("run.txt");
        assertEquals(1, run(inProcess(true), "--seed", "6", "--clients", "2", "--keys", "1", "--history",
                file.toString()));
        assertTrue(out().contains("NOT LINEARIZABLE"), out());
        // the replay judges the final state the run wrote into the file the same way
        outBytes.reset();
        assertEquals(1, run("--check", file.toString()), out() + err());
        assertTrue(out().contains("with the final state of 3 nodes"), out());
        assertTrue(out().contains("NOT LINEARIZABLE"), out());
    }

    @Test
    void aReplayOfARunWhoseNodesDisagreeFailsToo(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("run.txt");
        ChaosRunner disagreeing = (options, recorder, out) -> {
            Map<String, Map<String, String>> nodes = inProcess(false).run(options, recorder, out);
            nodes.get("n2").put("k0", "only-on-n2");
            return nodes;
        };
        assertEquals(1, run(disagreeing, "--seed", "8", "--clients", "2", "--keys", "1", "--history", file.toString()));
        assertTrue(out().contains("the nodes disagree"), out());
        assertTrue(Files.readAllLines(file).contains("node=\"n2\" key=\"k0\" value=\"only-on-n2\""));
        outBytes.reset();
        assertEquals(1, run("--check", file.toString()), out() + err());
        assertTrue(out().contains("the nodes disagree"), out());
    }

    @Test
    void runThatThrowsExitsOneAndPointsAtTheHistory(@TempDir Path dir) {
        Path file = dir.resolve("run.txt");
        ChaosRunner broken = (options, recorder, out) -> {
            throw new IllegalStateException("node n2 did not start");
        };
        assertEquals(1, run(broken, "--history", file.toString()));
        assertTrue(err().contains("the run failed: java.lang.IllegalStateException: node n2 did not start"), err());
        assertTrue(err().contains("check it with ./poyang chaos --check " + file), err());
        assertTrue(Files.exists(file), "the history file is there to check");
    }

    @Test
    void runWhoseCheckRunsOutOfBudgetExitsThreeAndIsNoPass(@TempDir Path dir) {
        Path file = dir.resolve("run.txt");
        assertEquals(3, run(inProcess(false), "--seed", "7", "--clients", "3", "--keys", "1", "--max-states", "3",
                "--history", file.toString()), out() + err());
        assertTrue(out().contains("INCONCLUSIVE: the search budget ran out on 1 of 1 keys"), out());
        assertFalse(out().contains("PASS"), out());
    }
}
