package io.poyang.benchmark.chaos;

import io.poyang.dtkv.client.KvClient;
import io.poyang.dtkv.client.KvClientConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The chaos run with real node processes ({@link ChaosCluster}): starts the nodes, creates the key
 * directory, runs {@link ClientWorker}s and the {@link FaultRunner} together for the run's duration
 * while printing a progress line, then heals everything (partitions lifted, paused nodes continued,
 * dead nodes restarted), waits for one leader with every node caught up, and reads every key on
 * every node with a follower read. The history and the checks are {@link ChaosCommand}'s.
 *
 * <p>Files: a run directory under {@code $POYANG_CHAOS_DIR} (or the system temp directory) holding
 * each node's log ({@code node-N.log}), data directory, and {@code lib/} (a copy of the class path's jars
 * the nodes run from); the data directories and {@code lib/} are deleted at the end, the logs are kept.
 */
final class ProcessChaosRunner implements ChaosRunner {

    /** The DtKV directory holding the keys the clients share. */
    static final String DIR = "chaos";
    static final long ELECTION_TIMEOUT_MILLIS = 1000;
    /** A DtKV operation's deadline: long enough to ride out most leader changes, short against the run. */
    static final long OP_TIMEOUT_MILLIS = 5000;
    /** Entries between snapshots, so runs install snapshots on nodes that fell behind and cut logs. */
    static final long SNAPSHOT_EVERY_ENTRIES = 20_000;
    private static final long CONVERGE_TIMEOUT_MILLIS = 120_000;

    /**
     * The clients' INFO lines (connections closing as nodes die) would bury the progress lines, so this
     * process logs warnings and worse; the nodes log everything to their own files. Held here so the
     * setting is not lost with a collected logger.
     */
    private static final java.util.logging.Logger CLIENT_LOG = java.util.logging.Logger.getLogger("io.poyang");

    private FaultRunner faults;
    private ClientWorker.ChaosCounters counters;
    private Path runDir;

    @Override
    public Map<String, Map<String, String>> run(ChaosOptions o, HistoryRecorder recorder, PrintStream out)
            throws Exception {
        CLIENT_LOG.setLevel(java.util.logging.Level.WARNING);
        Path base = System.getenv("POYANG_CHAOS_DIR") != null ? Paths.get(System.getenv("POYANG_CHAOS_DIR"))
                : Paths.get(System.getProperty("java.io.tmpdir"));
        Files.createDirectories(base);
        runDir = Files.createTempDirectory(base, "poyang-chaos-" + o.seed + "-");
        out.println("run directory (node logs): " + runDir);
        long durationMillis = Math.round(o.durationSeconds * 1000);
        FaultSchedule schedule = FaultSchedule.draw(o.seed, o.faults, durationMillis, ELECTION_TIMEOUT_MILLIS);
        recorder.note("fault schedule: " + schedule.steps().size() + " steps drawn; they run while time remains");
        try (ChaosCluster cluster = new ChaosCluster(runDir, o.nodes, o.faults.contains("membership"),
                ELECTION_TIMEOUT_MILLIS, SNAPSHOT_EVERY_ENTRIES)) {
            out.println("starting " + o.nodes + " node processes on loopback ...");
            cluster.startAll();
            int leader = cluster.awaitConverged(ChaosCluster.GROUP, CONVERGE_TIMEOUT_MILLIS);
            out.println("nodes ready; leader: node " + leader);
            String[] keys = new String[o.keys];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = DIR + ".k" + i;
            }
            List<KvClient> clients = new ArrayList<>();
            try {
                for (int c = 0; c < o.clients; c++) {
                    KvClientConfig cfg = new KvClientConfig().timeoutMillis(OP_TIMEOUT_MILLIS);
                    cluster.serviceAddresses().forEach(cfg::node);
                    KvClient kv = new KvClient(cfg);
                    kv.start();
                    clients.add(kv);
                }
                clients.get(0).mkdirAsync(DIR).get(OP_TIMEOUT_MILLIS + 5000, TimeUnit.MILLISECONDS);
                runClientsAndFaults(o, recorder, out, cluster, schedule, clients, keys, durationMillis);
            } finally {
                for (KvClient kv : clients) {
                    kv.close();
                }
            }
            out.println("healing: partitions lifted, paused nodes continued, stopped nodes restarted ...");
            heal(cluster, o.faults.contains("membership"));
            leader = cluster.awaitConverged(ChaosCluster.GROUP, CONVERGE_TIMEOUT_MILLIS);
            out.println("converged: leader node " + leader + ", every node applied the leader's commit index");
            Map<String, Map<String, String>> finalValues = new LinkedHashMap<>();
            for (int id : cluster.ids()) {
                finalValues.put("node-" + id, cluster.readAll(id, ChaosCluster.GROUP, DIR, 30_000));
            }
            out.println("read " + o.keys + " keys on each of " + o.nodes + " nodes (follower reads)");
            return finalValues;
        } finally {
            deleteDataDirs(runDir, o.nodes);
        }
    }

    private void runClientsAndFaults(ChaosOptions o, HistoryRecorder recorder, PrintStream out, ChaosCluster cluster,
                                     FaultSchedule schedule, List<KvClient> clients, String[] keys,
                                     long durationMillis) throws InterruptedException {
        long start = System.nanoTime();
        AtomicLong end = new AtomicLong(
                start + TimeUnit.MILLISECONDS.toNanos(durationMillis));
        long historyOffset = recorder.nowNanos() - start;
        counters = new ClientWorker.ChaosCounters();
        List<Thread> threads = new ArrayList<>();
        // a client thread that dies (the history file could not be written) must fail the run: its
        // operations would be missing from the file that --check replays
        java.util.Map<String, Throwable> died = new java.util.concurrent.ConcurrentHashMap<>();
        for (int c = 0; c < clients.size(); c++) {
            ClientWorker w = new ClientWorker(c, clients.get(c), OP_TIMEOUT_MILLIS, recorder, keys, end,
                    o.seed * 31 + c, counters);
            Thread t = new Thread(w, "chaos-client-" + c);
            t.setDaemon(true);
            t.setUncaughtExceptionHandler((th, e) -> died.put(th.getName(), e));
            threads.add(t);
        }
        faults = new FaultRunner(cluster, schedule, recorder, out, end, ChaosCluster.GROUP, o.faults);
        Thread faultThread = new Thread(faults, "chaos-faults");
        faultThread.setDaemon(true);
        threads.forEach(Thread::start);
        faultThread.start();
        out.println(String.format(Locale.ROOT, "running %d clients on %d keys for %.0f s with faults %s",
                clients.size(), keys.length, o.durationSeconds, o.faults.isEmpty() ? "none" : String.join(",", o.faults)));
        long printEveryNanos = TimeUnit.SECONDS.toNanos(durationMillis <= 120_000 ? 1 : 5);
        long nextPrint = start + printEveryNanos;
        long lastTotal = 0;
        long lastNanos = start;
        while (true) {
            boolean alive = false;
            for (Thread t : threads) {
                alive |= t.isAlive();
            }
            if (!alive) {
                break;
            }
            long now = System.nanoTime();
            if (now - nextPrint >= 0) {
                long total = counters.total();
                double rate = (total - lastTotal) / ((now - lastNanos) / 1e9);
                synchronized (out) {
                    out.println(String.format(Locale.ROOT, "t=%.0fs %7.0f ops/s  ok %,d  unknown %,d  failed %,d  "
                                    + "| nodes %s | fault: %s", (now + historyOffset) / 1e9, rate, counters.ok.get(),
                            counters.unknown.get(), counters.failed.get(), nodeStates(cluster), faults.current()));
                }
                lastTotal = total;
                lastNanos = now;
                nextPrint += printEveryNanos;
            }
            Thread.sleep(50);
        }
        faults.requestStop();
        faultThread.join();
        if (faults.failure() != null) {
            throw new IllegalStateException("the fault runner failed: " + faults.failure(), faults.failure());
        }
        if (!died.isEmpty()) {
            java.util.Map.Entry<String, Throwable> first = died.entrySet().iterator().next();
            throw new IllegalStateException(died.size() + " client thread(s) died, " + first.getKey() + " with "
                    + first.getValue() + "; the history is incomplete", first.getValue());
        }
    }

    private static String nodeStates(ChaosCluster cluster) {
        StringBuilder b = new StringBuilder();
        for (int id : cluster.ids()) {
            ChaosNode n = cluster.node(id);
            b.append(b.length() == 0 ? "" : " ").append(id).append(n.isPaused() ? ":paused" : n.isAlive() ? ":up" : ":DOWN");
        }
        return b.toString();
    }

    private static void heal(ChaosCluster cluster, boolean membership) throws IOException, InterruptedException {
        for (int id : cluster.ids()) {
            ChaosNode n = cluster.node(id);
            if (n.isPaused()) {
                n.resume();
            }
        }
        for (int id : cluster.ids()) {
            if (!cluster.node(id).isAlive()) {
                cluster.restart(id);
            }
        }
        cluster.healPartitions();
        if (membership) {
            cluster.restoreMembers(ChaosCluster.GROUP);
        }
    }

    /**
     * The longest time from a kill -9 of the leader (alone) to the first acknowledged write invoked after it; -1 when no leader was killed, {@code Long.MAX_VALUE} when no write was acknowledged
     * after some kill.
     */
    long maxUnavailabilityNanos(List<Operation> history) {
        return faults == null ? -1 : maxUnavailabilityNanos(history, faults.leaderKillNanos());
    }

    /** The same measure after each kill -9 of every node, JVM starts included; -1 when there was none. */
    long maxUnavailabilityAfterRestartAllNanos(List<Operation> history) {
        return faults == null ? -1 : maxUnavailabilityNanos(history, faults.restartAllNanos());
    }

    private static String seconds(long nanos) {
        return nanos == Long.MAX_VALUE ? "no write acknowledged after it" : String.format(Locale.ROOT, "%.2f s",
                nanos / 1e9);
    }

    private static long maxUnavailabilityNanos(List<Operation> history, List<Long> faultTimes) {
        long max = -1;
        for (long at : faultTimes) {
            long w = UnavailabilityWindow.afterNanos(history, at);
            max = Math.max(max, w < 0 ? Long.MAX_VALUE : w);
        }
        return max;
    }

    /** Faults injected per kind (after {@link #run}). */
    Map<String, Integer> injected() {
        return faults == null ? new LinkedHashMap<>() : faults.injected();
    }

    @Override
    public List<String> summary(List<Operation> history) {
        List<String> lines = new ArrayList<>();
        if (faults == null) {
            return lines;
        }
        StatusCounts n = StatusCounts.of(history);
        lines.add(String.format(Locale.ROOT, "operations: %,d (%,d acknowledged, %,d unknown outcome, %,d failed)",
                history.size(), n.ok, n.unknown, n.failed));
        StringBuilder f = new StringBuilder("faults injected:");
        faults.injected().forEach((k, v) -> f.append(' ').append(k).append('=').append(v));
        lines.add(f.toString());
        List<Long> kills = faults.leaderKillNanos();
        lines.add(kills.isEmpty() ? "max unavailability after a leader kill: no leader was killed alone"
                : String.format(Locale.ROOT, "max unavailability after a leader kill: %s (over %d kills of the leader: "
                + "from the moment it was gone to the first acknowledged write invoked after that)",
                seconds(maxUnavailabilityNanos(history, kills)), kills.size()));
        List<Long> restarts = faults.restartAllNanos();
        if (!restarts.isEmpty()) {
            lines.add(String.format(Locale.ROOT, "max unavailability after a restart of every node: %s (over %d; the "
                    + "same measure, JVM starts included)", seconds(maxUnavailabilityNanos(history, restarts)),
                    restarts.size()));
        }
        if (counters != null && counters.unexpected.get() > 0) {
            lines.add("unexpected DtKV errors (recorded as unknown): " + counters.unexpected.get() + ", the first: "
                    + counters.firstUnexpected());
        }
        lines.add("node logs: " + runDir);
        return lines;
    }

    private static void deleteDataDirs(Path runDir, int nodes) {
        List<Path> dirs = new ArrayList<>();
        dirs.add(runDir.resolve("lib"));
        for (int i = 1; i <= nodes + 1; i++) {   // + 1: the spare, if there was one
            dirs.add(runDir.resolve("node-" + i + "-data"));
        }
        for (Path d : dirs) {
            if (!Files.exists(d)) {
                continue;
            }
            try {
                Files.walkFileTree(d, new SimpleFileVisitor<Path>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                        Files.delete(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                        Files.delete(dir);
                        return FileVisitResult.CONTINUE;
                    }
                });
            } catch (IOException e) {
                System.err.println("chaos: could not delete " + d + ": " + e);
            }
        }
    }
}
