package io.poyang.server.process;

import io.poyang.server.ServerCommand;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A node as a real process: {@code java -cp <test classpath> io.poyang.server.ServerCommand --conf
 * DIR}, started the way the benchmark and the chaos runner start one (wait for the ready line on
 * stdout). stderr goes to a file kept for diagnostics.
 */
final class NodeProcess implements AutoCloseable {

    private static final Pattern READY = Pattern.compile(
            "poyang node (\\d+) ready: service ([^,]+):(\\d+), replication ([^,]+):(\\d+), metrics (\\S+?), .*pid (\\d+)");

    final int nodeId;
    final Path confDir;
    final Path stderrFile;
    private Process process;
    private final CompletableFuture<String> readyLine = new CompletableFuture<>();
    private final List<String> stdout = new ArrayList<>();

    NodeProcess(int nodeId, Path confDir, Path logDir) {
        this.nodeId = nodeId;
        this.confDir = confDir;
        this.stderrFile = logDir.resolve("node-" + nodeId + "-stderr.log");
    }

    static String javaBin() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    NodeProcess start() throws IOException {
        return start(new String[]{"--conf", confDir.toString()});
    }

    NodeProcess start(String[] args) throws IOException {
        return start(new ArrayList<>(), args);
    }

    /** Starts the node with {@code jvmOptions} (a {@code -D...} setting) before the main class. */
    NodeProcess start(List<String> jvmOptions, String[] args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBin());
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ServerCommand.class.getName());
        for (String a : args) {
            cmd.add(a);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.appendTo(stderrFile.toFile()));
        process = pb.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (stdout) {
                        stdout.add(line);
                    }
                    if (line.startsWith(ServerCommand.READY_PREFIX) && line.contains(" ready: ")) {
                        readyLine.complete(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            readyLine.completeExceptionally(new IllegalStateException("node " + nodeId + " ended without a ready line"));
        }, "node-" + nodeId + "-stdout");
        reader.setDaemon(true);
        reader.start();
        return this;
    }

    /** Waits for the ready line; fails with the node's stderr when it does not come. */
    String awaitReady(long timeoutMillis) throws Exception {
        try {
            String line = readyLine.get(timeoutMillis, TimeUnit.MILLISECONDS);
            if (!READY.matcher(line).matches()) {
                throw new AssertionError("the ready line does not have the documented form: " + line);
            }
            return line;
        } catch (Exception e) {
            throw new AssertionError("node " + nodeId + " did not print its ready line within " + timeoutMillis
                    + " ms (" + e + "); alive=" + process.isAlive() + "; stderr:\n" + stderrTail(), e);
        }
    }

    /** The pid printed on the ready line. */
    long pidFromReadyLine() throws Exception {
        Matcher m = READY.matcher(readyLine.get());
        if (!m.matches()) {
            throw new AssertionError(readyLine.get());
        }
        return Long.parseLong(m.group(7));
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** SIGKILL. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM (a graceful stop). */
    void terminate() {
        process.destroy();
    }

    /** Sends SIGTERM (or another signal) by pid with the kill command. */
    void signal(String name) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).start();
        k.waitFor(10, TimeUnit.SECONDS);
    }

    /** The exit code, waiting up to {@code timeoutMillis}; fails when the process does not end. */
    int waitForExit(long timeoutMillis) throws Exception {
        if (!process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("node " + nodeId + " did not exit within " + timeoutMillis + " ms; stderr:\n"
                    + stderrTail());
        }
        return process.exitValue();
    }

    List<String> stdoutLines() {
        synchronized (stdout) {
            return new ArrayList<>(stdout);
        }
    }

    String stderrTail() {
        try {
            if (!Files.exists(stderrFile)) {
                return "(no stderr)";
            }
            List<String> lines = Files.readAllLines(stderrFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + stderrFile + ": " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
