package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchDirs;
import io.poyang.net.LoopbackPorts;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * DtKV nodes as child processes on loopback, for {@code ./poyang bench}: each node is
 * {@code java -cp <this JVM's class path> io.poyang.server.ServerCommand --conf DIR} (the node
 * process of the server module, see server/README.md "Starting a node from another program") with a
 * fresh data directory under one temporary directory (under {@code $POYANG_BENCH_DIR} or the system
 * temp directory). {@link #start} returns once every node printed its ready line; {@link #close}
 * stops them (SIGTERM, then SIGKILL after a grace period) and deletes the temporary directory.
 *
 * <p>A shutdown hook does the same when the benchmark's JVM is ended by a signal (Ctrl-C) before
 * {@code close}, so an interrupted run leaves no server process and no data behind. The nodes' stderr
 * (their log) goes to a file beside their data and is printed when a node fails to start.
 */
final class NodeProcesses implements AutoCloseable {

    static final String MAIN_CLASS = "io.poyang.server.ServerCommand";
    /** The start of the node's ready line (server/README); {@code ServerCommand.READY_PREFIX}. */
    private static final String READY_PREFIX = "poyang node ";
    /** How long a node may take to print its ready line. */
    private static final long READY_TIMEOUT_MILLIS = 60_000;
    /** How long a node may take to stop after SIGTERM before it is killed. */
    private static final long STOP_GRACE_MILLIS = 15_000;
    /** servers/README: "poyang node <id> ready: service HOST:PORT, ..., pid N". */
    private static final Pattern READY = Pattern.compile(
            "poyang node (\\d+) ready: service ([^,]+):(\\d+), replication ([^,]+):(\\d+), .*pid (\\d+)");

    private final Path dir;
    private final List<Process> processes = new ArrayList<>();
    private final List<String> serviceAddresses = new ArrayList<>();
    private final Thread shutdownHook;
    private boolean closed;

    private NodeProcesses(Path dir) {
        this.dir = dir;
        this.shutdownHook = new Thread(this::stopAndDelete, "bench-node-cleanup");
    }

    /**
     * Starts {@code nodes} nodes hosting DtKV groups {@code 1..groups} (every node a member of every
     * group), fsync per {@code fsync}, {@code dispatchers} dispatcher threads each, and waits until all
     * are ready. On failure everything started is stopped and deleted before the exception leaves.
     */
    static NodeProcesses start(int nodes, int groups, boolean fsync, int dispatchers) throws IOException {
        // not BenchDirs.create: this directory is deleted by this class's own exit hook, after its processes stopped
        NodeProcesses p = new NodeProcesses(Files.createTempDirectory(BenchDirs.parent(), "poyang-bench-nodes-"));
        Runtime.getRuntime().addShutdownHook(p.shutdownHook);
        try {
            p.launch(nodes, groups, fsync, dispatchers);
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private void launch(int nodes, int groups, boolean fsync, int dispatchers) throws IOException {
        int[] replication = LoopbackPorts.pick(nodes);
        StringBuilder servers = new StringBuilder("# written by ./poyang bench\n");
        for (int i = 1; i <= nodes; i++) {
            servers.append("node.").append(i).append(" = 127.0.0.1:").append(replication[i - 1]).append('\n');
        }
        StringBuilder members = new StringBuilder();
        for (int i = 1; i <= nodes; i++) {
            members.append(i == 1 ? "" : ",").append(i);
        }
        for (int g = 1; g <= groups; g++) {
            servers.append("group.").append(g).append(".members = ").append(members).append('\n');
        }
        List<BlockingQueue<String>> readyLines = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            Path conf = Files.createDirectories(dir.resolve("node" + i));
            write(conf.resolve("servers.properties"), servers.toString());
            write(conf.resolve("config.properties"), "# written by ./poyang bench\n"
                    + "nodeId = " + i + "\n"
                    + "host = 127.0.0.1\n"
                    + "replicationPort = " + replication[i - 1] + "\n"
                    + "servicePort = 0\n"
                    + "metricsPort = -1\n"
                    + "dataDir = " + conf.resolve("data") + "\n"
                    + "syncForce = " + fsync + "\n"
                    + "dispatchers = " + dispatchers + "\n"
                    // nothing to gain from a snapshot of data deleted right after
                    + "snapshotOnStop = false\n");
            readyLines.add(spawn(i, conf));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MILLIS);
        for (int i = 1; i <= nodes; i++) {
            String line;
            try {
                line = readyLines.get(i - 1).poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for node " + i + " to start", e);
            }
            Matcher m = line == null ? null : READY.matcher(line);
            if (m == null || !m.find()) {
                Process p = processes.get(i - 1);
                String why = line == null ? "did not print its ready line within " + READY_TIMEOUT_MILLIS + " ms"
                        : line.isEmpty() ? "exited with code " + exitCode(p) + " before it was ready"
                        : "printed a ready line this benchmark cannot read: " + line;
                throw new IOException("node " + i + " (" + MAIN_CLASS + ", pid " + p.pid() + ") " + why
                        + "; its log " + logOf(i) + " ends with:\n" + tail(logOf(i), 20));
            }
            serviceAddresses.add(m.group(2) + ":" + m.group(3));
        }
    }

    /** Starts node {@code id}; the queue gets its ready line, or "" when its stdout ends first. */
    private BlockingQueue<String> spawn(int id, Path conf) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        String opts = System.getenv("POYANG_SERVER_JAVA_OPTS");
        if (opts != null && !opts.trim().isEmpty()) {
            for (String o : opts.trim().split("\\s+")) {
                cmd.add(o);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(MAIN_CLASS);
        cmd.add("--conf");
        cmd.add(conf.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(logOf(id).toFile()));
        Process p;
        synchronized (this) {
            if (closed) {
                throw new IOException("the benchmark is stopping");
            }
            p = pb.start();
            processes.add(p);
        }
        BlockingQueue<String> ready = new ArrayBlockingQueue<>(1);
        // Reads the node's stdout to the end, so the pipe never fills: the node itself prints only its
        // ready line there, but JVM options given through POYANG_SERVER_JAVA_OPTS may print too (JFR,
        // -Xlog go to stdout): such lines are passed on to stderr, marked with the node.
        Thread reader = new Thread(() -> {
            boolean offered = false;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (!offered && line.startsWith(READY_PREFIX)) {
                        offered = ready.offer(line);
                    } else {
                        System.err.println("node " + id + ": " + line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            if (!offered) {
                ready.offer("");
            }
        }, "bench-node-" + id + "-stdout");
        reader.setDaemon(true);
        reader.start();
        return ready;
    }

    private Path logOf(int id) {
        return dir.resolve("node" + id).resolve("node.log");
    }

    /** host:port of each node's service port, comma-separated, in node order. */
    String serviceAddresses() {
        return String.join(",", serviceAddresses);
    }

    List<Long> pids() {
        List<Long> pids = new ArrayList<>();
        synchronized (this) {
            for (Process p : processes) {
                pids.add(p.pid());
            }
        }
        return pids;
    }

    Path directory() {
        return dir;
    }

    @Override
    public void close() {
        stopAndDelete();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs (or ran) stopAndDelete, which is idempotent
        }
    }

    /** Stops every node (SIGTERM; SIGKILL after the grace period) and deletes the directory. Idempotent. */
    private void stopAndDelete() {
        List<Process> toStop;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toStop = new ArrayList<>(processes);
        }
        for (Process p : toStop) {
            p.destroy();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_GRACE_MILLIS);
        for (Process p : toStop) {
            try {
                if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    System.err.println("bench: node process " + p.pid() + " did not stop within " + STOP_GRACE_MILLIS
                            + " ms of SIGTERM; killing it");
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try {
            BenchDirs.deleteTree(dir);
        } catch (IOException | UncheckedIOException e) {
            System.err.println("bench: could not delete " + dir + ": " + e);
        }
    }

    private static String exitCode(Process p) {
        try {
            return p.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(p.exitValue()) : "(still running)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(unknown)";
        }
    }

    private static void write(Path file, String text) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(text);
        }
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read it: " + e + ")";
        }
    }


    @Override
    public String toString() {
        return "node processes in " + dir + File.separator;
    }
}
