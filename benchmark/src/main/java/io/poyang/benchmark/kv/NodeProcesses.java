package io.poyang.benchmark.kv;

import io.poyang.benchmark.BenchDirs;
import io.poyang.benchmark.BenchOptions;
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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * {@code close}, so an interrupted run leaves no server process and no data behind; when the signal
 * comes while {@code close} is under way, the hook waits for it to finish (the JVM ends when its
 * hooks have). The nodes' stderr (their log) goes to a file beside their data and is printed when a
 * node fails to start. A node that exits on its own once the nodes are up is reported by
 * {@link #failure}.
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
    /** node id → host:port of its replication (admin) port, from its ready line. */
    private final Map<Integer, String> replicationAddresses = new LinkedHashMap<>();
    private final Thread shutdownHook;
    /** Held for the whole of {@link #stopAndDelete}, so a second caller returns only once it is done. */
    private final Object stopLock = new Object();
    private boolean closed;
    /** Why the nodes cannot serve the run any more (a node exited), or null. */
    private volatile String failure;

    /** Nodes in {@code dir}, none started yet; {@link #start} registers the exit hook. */
    NodeProcesses(Path dir) {
        this.dir = dir;
        this.shutdownHook = new Thread(this::stopAndDelete, "bench-node-cleanup");
    }

    /**
     * Starts {@code o.nodes} nodes hosting DtKV groups {@code 1..o.groups} (every node a member of
     * every group), fsync, log journal and batched appends per {@code o}, {@code dispatchers}
     * dispatcher threads each, and waits until all are ready. On failure everything started is
     * stopped and deleted before the exception leaves.
     */
    static NodeProcesses start(BenchOptions o, int dispatchers) throws IOException {
        // not BenchDirs.create: this directory is deleted by this class's own exit hook, after its processes stopped
        NodeProcesses p = new NodeProcesses(Files.createTempDirectory(BenchDirs.parent(), "poyang-bench-nodes-"));
        try {
            Runtime.getRuntime().addShutdownHook(p.shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is already exiting (Ctrl-C during the setup): no hook would delete the directory
            BenchDirs.deleteTree(p.dir);
            throw new IOException("the benchmark is stopping", e);
        }
        try {
            p.launch(o, dispatchers);
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /** The config.properties of node {@code nodeId} of a bench cluster (server/README, docs/operations.md). */
    static String configProperties(BenchOptions o, int nodeId, int replicationPort, Path dataDir, int dispatchers) {
        return "# written by ./poyang bench\n"
                + "nodeId = " + nodeId + "\n"
                + "host = 127.0.0.1\n"
                + "replicationPort = " + replicationPort + "\n"
                + "servicePort = 0\n"
                + "metricsPort = -1\n"
                + "dataDir = " + dataDir + "\n"
                + "syncForce = " + o.fsync + "\n"
                + "dispatchers = " + dispatchers + "\n"
                + "logJournal = " + o.logJournal + "\n"
                + "batchAppends = " + o.batchAppends + "\n"
                // nothing to gain from a snapshot of data deleted right after
                + "snapshotOnStop = false\n";
    }

    /**
     * The servers.properties of every node of a bench cluster: nodes 1..{@code o.nodes} at
     * 127.0.0.1 and {@code replicationPorts}, groups 1..{@code o.groups} of all of them, and with
     * {@code --leaders N} node N as every group's preferred leader (the placement outlasts a failover).
     */
    static String serversProperties(BenchOptions o, int[] replicationPorts) {
        StringBuilder servers = new StringBuilder("# written by ./poyang bench\n");
        for (int i = 1; i <= o.nodes; i++) {
            servers.append("node.").append(i).append(" = 127.0.0.1:").append(replicationPorts[i - 1]).append('\n');
        }
        StringBuilder members = new StringBuilder();
        for (int i = 1; i <= o.nodes; i++) {
            members.append(i == 1 ? "" : ",").append(i);
        }
        for (int g = 1; g <= o.groups; g++) {
            servers.append("group.").append(g).append(".members = ").append(members).append('\n');
            if (o.leadersOn > 0) {
                servers.append("group.").append(g).append(".preferredLeader = ").append(o.leadersOn).append('\n');
            }
        }
        return servers.toString();
    }

    private void launch(BenchOptions o, int dispatchers) throws IOException {
        int nodes = o.nodes;
        int[] replication = LoopbackPorts.pick(nodes);
        String servers = serversProperties(o, replication);
        List<BlockingQueue<String>> readyLines = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            Path conf = dir.resolve("node" + i);
            synchronized (this) {
                // not into a directory a close (the exit hook's) is deleting
                if (closed) {
                    throw new IOException("the benchmark is stopping");
                }
                Files.createDirectories(conf);
                write(conf.resolve("servers.properties"), servers);
                write(conf.resolve("config.properties"),
                        configProperties(o, i, replication[i - 1], conf.resolve("data"), dispatchers));
            }
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
            replicationAddresses.put(i, m.group(4) + ":" + m.group(5));
        }
        for (int i = 1; i <= nodes; i++) {
            watch(i, processes.get(i - 1));
        }
    }

    /** Starts one process of this cluster, unless {@link #close} began (it would not stop it). */
    Process startProcess(ProcessBuilder pb) throws IOException {
        synchronized (this) {
            if (closed) {
                throw new IOException("the benchmark is stopping");
            }
            Process p = pb.start();
            processes.add(p);
            return p;
        }
    }

    /** Once the nodes are up, a node that exits before {@link #close} makes {@link #failure} say so. */
    void watch(int id, Process p) {
        p.onExit().thenAccept(gone -> {
            synchronized (this) {
                if (closed || failure != null) {
                    return;
                }
                int code = p.exitValue();
                failure = "node " + id + " (" + MAIN_CLASS + ", pid " + p.pid() + ") exited with code " + code
                        + (code > 128 ? " (signal " + (code - 128) + ")" : "") + " during the run; its log ends with:\n"
                        + tail(logOf(id), 10);
            }
        });
    }

    /** Why the run cannot go on (a node process exited before {@link #close}), or null while every node runs. */
    String failure() {
        return failure;
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
        Process p = startProcess(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(logOf(id).toFile())));
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

    /** node id → host:port of its replication (admin) port, as its ready line said (for an AdminClient). */
    Map<Integer, String> replicationAddresses() {
        return Collections.unmodifiableMap(replicationAddresses);
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

    /**
     * Stops every node (SIGTERM; SIGKILL after the grace period) and deletes the directory. Idempotent;
     * a caller that comes while another one is stopping waits until it is done (the exit hook must not
     * let the JVM end half-way through {@link #close}). An interrupt does not cut it short: the
     * directory is deleted only once the processes are gone, or they would write into it again. Every
     * call deletes the directory: the setup may have written config files after the exit hook's call.
     */
    private void stopAndDelete() {
        synchronized (stopLock) {
            List<Process> toStop;
            synchronized (this) {
                // after the first call no process starts, and those it found are gone
                toStop = closed ? new ArrayList<>() : new ArrayList<>(processes);
                closed = true;
            }
            for (Process p : toStop) {
                p.destroy();
            }
            boolean interrupted = false;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_GRACE_MILLIS);
            for (Process p : toStop) {
                while (true) {
                    try {
                        if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                            System.err.println("bench: node process " + p.pid() + " did not stop within " + STOP_GRACE_MILLIS
                                    + " ms of SIGTERM; killing it");
                            p.destroyForcibly();
                            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                                System.err.println("bench: node process " + p.pid() + " did not end after SIGKILL");
                            }
                        }
                        break;
                    } catch (InterruptedException e) {
                        // the exit hook stops the run: the processes must still be gone before the delete
                        interrupted = true;
                    }
                }
            }
            try {
                BenchDirs.deleteTree(dir);
            } catch (IOException | UncheckedIOException e) {
                System.err.println("bench: could not delete " + dir + ": " + e);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
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
