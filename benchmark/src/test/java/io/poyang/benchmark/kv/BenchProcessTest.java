package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code ./poyang bench} as a user runs it: a benchmark process that starts DtKV node processes of
 * its own. Checks that it cleans up after itself when it ends normally and when it is interrupted
 * (SIGINT, as Ctrl-C sends): no node process left, nothing left in its data directory.
 */
class BenchProcessTest {

    /** POYANG_BENCH_DIR of the benchmark: must be empty once it ended. */
    @TempDir
    Path benchDir;

    /** The benchmark's stderr goes here, outside benchDir (and deleted with it, unlike a file beside it). */
    @TempDir
    Path logDir;

    /** Starts a benchmark process; {@code serverJavaOpts} (or null) become its POYANG_SERVER_JAVA_OPTS. */
    private Process startBench(String serverJavaOpts, String[] args) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (sigintIgnoredHere()) {
            // A build started in the background by a non-interactive shell (as CI runners may start it)
            // has SIGINT ignored, its processes inherit that, and a JVM that starts with SIGINT ignored
            // never runs its shutdown hooks on it. The benchmark is run as from a terminal, with SIGINT
            // at its default (GNU env 8.31 or later).
            assumeTrue(envCanResetSignals(), "SIGINT is ignored in this process and env cannot reset it");
            cmd.add("env");
            cmd.add("--default-signal=INT");
        }
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(BenchCommand.class.getName());
        for (String a : args) {
            cmd.add(a);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(logDir.resolve("bench.err").toFile());
        pb.environment().put("POYANG_BENCH_DIR", benchDir.toString());
        if (serverJavaOpts != null) {
            pb.environment().put("POYANG_SERVER_JAVA_OPTS", serverJavaOpts);
        }
        return pb.start();
    }

    /** Whether this process ignores SIGINT (Linux: bit 2 of SigIgn in /proc/self/status). */
    private static boolean sigintIgnoredHere() throws IOException {
        Path status = Paths.get("/proc/self/status");
        if (!Files.exists(status)) {
            return false;
        }
        for (String line : Files.readAllLines(status, StandardCharsets.UTF_8)) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << 1)) != 0;
            }
        }
        return false;
    }

    private static boolean envCanResetSignals() {
        try {
            Process p = new ProcessBuilder("env", "--default-signal=INT", "true").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static List<ProcessHandle> nodesOf(Process bench) {
        return bench.descendants().filter(p -> p.info().commandLine().map(c -> c.contains(NodeProcesses.MAIN_CLASS))
                .orElse(false)).collect(Collectors.toList());
    }

    private List<String> leftInBenchDir() throws IOException {
        try (Stream<Path> s = Files.list(benchDir)) {
            return s.map(Path::toString).collect(Collectors.toList());
        }
    }

    private String errOutput() throws IOException {
        File f = logDir.resolve("bench.err").toFile();
        return f.exists() ? new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8) : "";
    }

    @Test
    void aRunStartsANodeProcessMeasuresAndRemovesItAndItsData() throws Exception {
        // -Xlog:gc makes the node's JVM print on stdout before the ready line: the benchmark must still find it
        // --leaders 1 reaches the node through the replication address of its ready line (a transfer to the leader itself)
        Process bench = startBench("-Xlog:gc", new String[]{"--duration", "1", "--warmup", "0.5", "--keys", "500",
                "--leaders", "1", "--output", "json", "--strict"});
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(bench.getInputStream(), StandardCharsets.UTF_8))) {
            out = r.lines().collect(Collectors.joining("\n"));
        }
        assertTrue(bench.waitFor(120, TimeUnit.SECONDS), "the benchmark did not end");
        assertEquals(0, bench.exitValue(), out + "\n" + errOutput());
        String json = out.substring(out.lastIndexOf('\n') + 1);
        assertTrue(json.startsWith("{\"op\":\"put\""), json);
        assertTrue(json.contains("\"servers\":\"child processes\""), json);
        assertTrue(json.contains("\"leaders_on\":1,\"leaders\":\"1\""), json);
        assertTrue(json.contains("\"log_journal\":false,\"batch_appends\":false"), json);
        assertTrue(errOutput().contains("bench: moved the leaders of 1 group(s) to node 1"), errOutput());
        assertTrue(json.contains("\"failed\":0,\"timeout\":0"), json);
        assertTrue(json.contains("\"server_cpu_us_per_op\":"), json);
        assertFalse(json.contains("\"success\":0,"), json);
        assertEquals(List.of(), leftInBenchDir(), "the data directory is removed");
        assertTrue(errOutput().contains("node 1: [") && errOutput().contains("[gc"),
                "the node's JVM output is passed on, marked with the node: " + errOutput());
    }

    /** What a test checks while the run is under way, before the SIGINT. */
    /** A per-second line of the timeline, such as "    3.0s      120,000 ...". */
    private static final String TIMELINE_LINE = "\\s+\\d+\\.\\ds\\s+.*";

    private interface WhileRunning {
        void check(Process bench) throws Exception;
    }

    /**
     * Starts a benchmark, waits until the run is under way (the first per-second timeline line),
     * runs {@code whileRunning}, SIGINTs it as Ctrl-C does and waits for it to end; then nothing may
     * be left under POYANG_BENCH_DIR: the benchmark's exit hooks stopped its servers and deleted
     * their data.
     */
    private void interruptOnceRunning(WhileRunning whileRunning, String... args) throws Exception {
        Process bench = startBench(null, args);
        BufferedReader r = new BufferedReader(new InputStreamReader(bench.getInputStream(), StandardCharsets.UTF_8));
        String line;
        StringBuilder seen = new StringBuilder();
        while ((line = r.readLine()) != null && !line.matches(TIMELINE_LINE)) {
            seen.append(line).append('\n');
        }
        assertNotNull(line, "the benchmark ended before running: " + seen + errOutput());
        assertFalse(leftInBenchDir().isEmpty(), "the servers' data is under POYANG_BENCH_DIR while they run");
        whileRunning.check(bench);
        Process kill = new ProcessBuilder("kill", "-INT", String.valueOf(bench.pid())).start();
        assertEquals(0, kill.waitFor());
        List<String> after = Collections.synchronizedList(new ArrayList<>());
        Thread reader = new Thread(() -> r.lines().forEach(after::add));   // keeps the pipe drained
        reader.setDaemon(true);
        reader.start();
        assertTrue(bench.waitFor(60, TimeUnit.SECONDS), "the benchmark did not end after SIGINT");
        reader.join(10_000);
        // one line may have been on its way when the signal came; the stop itself prints none
        long timelineLines = after.stream().filter(l -> l.matches(TIMELINE_LINE)).count();
        assertTrue(timelineLines <= 1, "the run stops printing its timeline once interrupted: " + after);
        assertEquals(List.of(), leftInBenchDir(), "nothing is left of the servers' data: " + errOutput());
        assertTrue(errOutput().contains("poyang bench: interrupted: stopping the servers and deleting their data"),
                "the benchmark says why it stops: " + errOutput());
    }

    @Test
    void sigintStopsTheNodeProcessesAndRemovesTheirData() throws Exception {
        List<ProcessHandle> nodes = new ArrayList<>();
        interruptOnceRunning(bench -> {
            nodes.addAll(nodesOf(bench));
            assertEquals(3, nodes.size(), "three node processes run under the benchmark");
        }, "--nodes", "3", "--duration", "5m", "--warmup", "0", "--keys", "500");
        for (ProcessHandle n : nodes) {
            assertFalse(n.isAlive(), "node process " + n.pid() + " outlived the benchmark");
        }
    }

    @Test
    void sigintRemovesTheDataOfTheRaftBenchmarksServers() throws Exception {
        interruptOnceRunning(bench -> { }, "--op", "raft", "--nodes", "3", "--duration", "5m", "--warmup", "0");
    }

    @Test
    void sigintRemovesTheDataOfInProcessDtKvNodes() throws Exception {
        interruptOnceRunning(bench -> { }, "--in-process", "--nodes", "3", "--duration", "5m", "--warmup", "0", "--keys", "500");
    }

    @Test
    void sigintRemovesTheDataOfTheLogBenchmark() throws Exception {
        interruptOnceRunning(bench -> { }, "--op", "log", "--duration", "5m", "--warmup", "0");
    }
}
