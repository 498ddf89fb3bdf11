package io.poyang.server.config;

import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.server.RaftServerConfig;
import io.poyang.raft.store.LogJournal;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * This node's settings, from {@code config.properties}: who it is, where it listens, where its data
 * lives and its raft timing. Every key is optional except {@code nodeId}; an unknown key is an error
 * (a typo must not silently fall back to a default). Relative paths are relative to the directory
 * the node is started in.
 *
 * <table>
 *   <caption>keys</caption>
 *   <tr><td>nodeId</td><td>this node's id (positive; required in a file)</td></tr>
 *   <tr><td>clusterName</td><td>the cluster's name, the same on all its nodes (default none): a node refuses
 *       connections from nodes of another cluster, and records the name in its data directory: a later start
 *       with another name, or none, is refused</td></tr>
 *   <tr><td>host</td><td>address the ports bind to (default 127.0.0.1; 0.0.0.0 for all interfaces)</td></tr>
 *   <tr><td>replicationPort, servicePort, metricsPort</td><td>9431, 9432, 9433; 0 picks a free one, metricsPort -1 disables HTTP</td></tr>
 *   <tr><td>dataDir</td><td>default ./data</td></tr>
 *   <tr><td>electionTimeoutMillis, heartbeatIntervalMillis, syncForce</td><td>raft timing and durability</td></tr>
 *   <tr><td>snapshotIntervalMillis, snapshotEveryEntries, snapshotsToKeep, snapshotOnStop</td><td>snapshots</td></tr>
 *   <tr><td>dispatchers, logIoThreads, serviceIoThreads, replicationIoThreads, fsyncPermits</td><td>threads</td></tr>
 *   <tr><td>logJournal</td><td>true: the node's groups write their logs through one journal, one fsync per
 *       round for all of them (see the raft README); false: each group fsyncs its own log; auto (the default):
 *       true when servers.properties gives this node more than one group at start and syncForce is on</td></tr>
 *   <tr><td>logJournalFiles, logJournalFileMiB</td><td>with logJournal, the journal's shape: how many files
 *       (default 8, 3 to 1,024) of how many MiB (default 16, 4 to 1,024), made zero-filled in
 *       {@code <dataDir>/log-journal} at the first start; a start with another shape replays the old
 *       journal first, then makes the new files</td></tr>
 *   <tr><td>batchAppends</td><td>true: the AppendEntries of one dispatcher round to one node leave as one frame;
 *       it pays with the journal on, where one fsync persists every part of a batch; auto (the default): the
 *       same as the journal</td></tr>
 *   <tr><td>segmentBytes</td><td>log segment size</td></tr>
 *   <tr><td>recycledSegments</td><td>segment files freed by compaction kept to become the next segments
 *       (default 4, 0 to 1,024; 0 deletes them)</td></tr>
 *   <tr><td>shutdownTimeoutMillis, drainTimeoutMillis</td><td>graceful stop bounds</td></tr>
 *   <tr><td>groupStartTimeoutSeconds</td><td>how long each group may take to recover and replay its log at start (600)</td></tr>
 *   <tr><td>maxWatchesPerConnection</td><td>keys and directories one client connection may watch per group (100,000)</td></tr>
 * </table>
 */
public final class NodeConfig {

    public static final int DEFAULT_REPLICATION_PORT = 9431;
    public static final int DEFAULT_SERVICE_PORT = 9432;
    public static final int DEFAULT_METRICS_PORT = 9433;
    /** metricsPort value that turns the HTTP endpoint off. */
    public static final int METRICS_OFF = -1;

    /** Every key config.properties may hold. */
    public static final Set<String> KEYS = Collections.unmodifiableSet(new LinkedHashSet<>(Arrays.asList(
            "nodeId", "clusterName", "host", "replicationPort", "servicePort", "metricsPort", "dataDir",
            "electionTimeoutMillis", "heartbeatIntervalMillis", "syncForce",
            "snapshotIntervalMillis", "snapshotEveryEntries", "snapshotsToKeep", "snapshotOnStop",
            "dispatchers", "logIoThreads", "serviceIoThreads", "replicationIoThreads", "fsyncPermits", "logJournal",
            "logJournalFiles", "logJournalFileMiB", "batchAppends", "segmentBytes", "recycledSegments", "shutdownTimeoutMillis", "drainTimeoutMillis", "groupStartTimeoutSeconds",
            "maxWatchesPerConnection")));

    /** Where the settings came from (null: built-in defaults). */
    public final Path file;
    public final int nodeId;
    /** The cluster's name, or null when none is given. */
    public final String clusterName;
    public final String host;
    public final int replicationPort;
    public final int servicePort;
    public final int metricsPort;
    public final Path dataDir;
    public final int dispatchers;
    public final int logIoThreads;
    public final int serviceIoThreads;
    public final int replicationIoThreads;
    public final int fsyncPermits;
    /**
     * The node's groups write through one log journal ({@code RaftServerConfig.Builder.logJournal});
     * {@code AUTO}: when the node hosts more than one group at start ({@link #logJournal(int)}).
     */
    public final AutoSwitch logJournal;
    /** How many files the log journal has ({@code RaftServerConfig.Builder.logJournalFiles}). */
    public final int logJournalFiles;
    /** The size of each log journal file, in MiB. */
    public final int logJournalFileMiB;
    /**
     * A dispatcher round's AppendEntries to one node leave as one frame
     * ({@code RaftServerConfig.Builder.batchAppends}). Without the journal each part of a batch waits
     * for its own group's fsync and the answer for the slowest: DtKV measured slower with it
     * (docs/plans/shared-log.md step 2). {@code AUTO}: the same as the journal.
     */
    public final AutoSwitch batchAppends;
    public final boolean snapshotOnStop;
    /** How long a graceful stop may take in all before the process is halted. */
    public final long shutdownTimeoutMillis;
    /** How long a stop waits for writes already taken to be answered before it stops the groups. */
    public final long drainTimeoutMillis;
    /** How long each group may take at start to recover its log, then to replay it, before the start fails. */
    public final long groupStartTimeoutSeconds;
    /** The keys and directories one client connection may watch in one group (TOO_MANY_WATCHES beyond). */
    public final int maxWatchesPerConnection;
    /** The raft settings built from the timing, durability and snapshot keys. */
    public final RaftConfig raft;

    private NodeConfig(Path file, int nodeId, String clusterName, String host, int replicationPort, int servicePort, int metricsPort,
                       Path dataDir, int dispatchers, int logIoThreads, int serviceIoThreads, int replicationIoThreads,
                       int fsyncPermits, AutoSwitch logJournal, int logJournalFiles, int logJournalFileMiB, AutoSwitch batchAppends, boolean snapshotOnStop, long shutdownTimeoutMillis, long drainTimeoutMillis,
                       long groupStartTimeoutSeconds, int maxWatchesPerConnection, RaftConfig raft) {
        this.file = file;
        this.nodeId = nodeId;
        this.clusterName = clusterName;
        this.host = host;
        this.replicationPort = replicationPort;
        this.servicePort = servicePort;
        this.metricsPort = metricsPort;
        this.dataDir = dataDir;
        this.dispatchers = dispatchers;
        this.logIoThreads = logIoThreads;
        this.serviceIoThreads = serviceIoThreads;
        this.replicationIoThreads = replicationIoThreads;
        this.fsyncPermits = fsyncPermits;
        this.logJournal = logJournal;
        this.logJournalFiles = logJournalFiles;
        this.logJournalFileMiB = logJournalFileMiB;
        this.batchAppends = batchAppends;
        this.snapshotOnStop = snapshotOnStop;
        this.shutdownTimeoutMillis = shutdownTimeoutMillis;
        this.drainTimeoutMillis = drainTimeoutMillis;
        this.groupStartTimeoutSeconds = groupStartTimeoutSeconds;
        this.maxWatchesPerConnection = maxWatchesPerConnection;
        this.raft = raft;
    }

    /**
     * Whether a node hosting {@code groups} raft groups at start writes through the log journal;
     * {@code auto} never with syncForce off, where there are no fsyncs to share.
     */
    public boolean logJournal(int groups) {
        return logJournal.resolve(groups > 1 && raft.syncForce());
    }

    /** Whether a node hosting {@code groups} raft groups at start batches its AppendEntries per round. */
    public boolean batchAppends(int groups) {
        return batchAppends.resolve(logJournal(groups));
    }

    /** The settings of a node started without {@code --conf}: node 1 on 127.0.0.1, data in ./data. */
    public static NodeConfig defaults() {
        return from(PropertiesFile.empty(null), false);
    }

    /** Reads {@code config.properties}; {@link ConfigException} names the key and the reason of the first problem. */
    public static NodeConfig load(Path file) {
        return from(PropertiesFile.read(file), true);
    }

    /** The settings in {@code p}; {@code nodeIdRequired} for a real file. */
    public static NodeConfig from(PropertiesFile p, boolean nodeIdRequired) {
        for (String k : p.keys()) {
            if (!KEYS.contains(k)) {
                throw new ConfigException(p.path(), k, p.locate(k) + ": unknown key '" + k + "'"
                        + suggestion(k) + "; the keys are: " + String.join(", ", KEYS));
            }
        }
        Settings s = new Settings(p);
        if (nodeIdRequired && !p.contains("nodeId")) {
            throw new ConfigException(p.path(), "nodeId", p.path() + ": nodeId is missing; every node needs its own"
                    + " id (a positive integer, the same as its node.<id> line in servers.properties)");
        }
        int nodeId = s.intValue("nodeId", 1, 1, Integer.MAX_VALUE);
        String clusterName = s.string("clusterName", "");
        String badName = io.poyang.net.Handshake.checkClusterName(clusterName);
        if (badName != null) {
            throw p.invalid("clusterName", badName);
        }
        String host = s.string("host", "127.0.0.1");
        if (host.isEmpty() || host.contains(" ") || host.contains(",")) {
            throw p.invalid("host", "not a host name or IP address");
        }
        int replicationPort = s.intValue("replicationPort", DEFAULT_REPLICATION_PORT, 0, 65535);
        int servicePort = s.intValue("servicePort", DEFAULT_SERVICE_PORT, 0, 65535);
        int metricsPort = s.intValue("metricsPort", DEFAULT_METRICS_PORT, METRICS_OFF, 65535);
        if (replicationPort != 0 && replicationPort == servicePort) {
            throw p.invalid("servicePort", "the same port as replicationPort; a node needs two different ports");
        }
        if (metricsPort > 0 && (metricsPort == servicePort || metricsPort == replicationPort)) {
            throw p.invalid("metricsPort", "the same port as " + (metricsPort == servicePort ? "servicePort"
                    : "replicationPort") + "; give the HTTP endpoint its own port (or -1 to turn it off)");
        }
        String dir = s.string("dataDir", "./data");
        Path dataDir;
        try {
            dataDir = Paths.get(dir);
        } catch (java.nio.file.InvalidPathException e) {
            throw p.invalid("dataDir", "not a valid path: " + e.getReason());
        }
        if (dir.isEmpty()) {
            throw p.invalid("dataDir", "empty; name the directory the node keeps its data in");
        }
        int cores = Runtime.getRuntime().availableProcessors();
        int dispatchers = s.intValue("dispatchers", cores, 1, 1024);
        int logIoThreads = s.intValue("logIoThreads", 4, 2, 1024);
        int serviceIoThreads = s.intValue("serviceIoThreads", 1, 1, 1024);
        int replicationIoThreads = s.intValue("replicationIoThreads", 1, 1, 1024);
        int fsyncPermits = s.intValue("fsyncPermits", 0, 0, 1024);
        AutoSwitch logJournal = s.autoSwitch("logJournal");
        int logJournalFiles = s.intValue("logJournalFiles", RaftServerConfig.DEFAULT_LOG_JOURNAL_FILES,
                Integer.MIN_VALUE, 1024);
        if (logJournalFiles < 3) {
            throw p.invalid("logJournalFiles", "too few; the log journal needs at least 3 files (one being written,"
                    + " one whose records a checkpoint is making safe to write over, one spare)");
        }
        int minFileMiB = (int) (LogJournal.MIN_FILE_BYTES >> 20);
        int logJournalFileMiB = s.intValue("logJournalFileMiB",
                (int) (RaftServerConfig.DEFAULT_LOG_JOURNAL_FILE_BYTES >> 20), Integer.MIN_VALUE, 1024);
        if (logJournalFileMiB < minFileMiB) {
            throw p.invalid("logJournalFileMiB", "too small; a log journal file must hold at least " + minFileMiB
                    + " MiB (a log write larger than half a file goes as several records)");
        }
        AutoSwitch batchAppends = s.autoSwitch("batchAppends");
        boolean snapshotOnStop = s.bool("snapshotOnStop", false);
        long shutdownTimeoutMillis = s.longValue("shutdownTimeoutMillis", 30_000, 100, 24L * 3600 * 1000);
        long drainTimeoutMillis = s.longValue("drainTimeoutMillis", 5_000, 0, 24L * 3600 * 1000);
        if (drainTimeoutMillis >= shutdownTimeoutMillis) {
            throw p.invalid("drainTimeoutMillis", "must be shorter than shutdownTimeoutMillis ("
                    + shutdownTimeoutMillis + "): the drain is one step of the graceful stop");
        }
        long groupStartTimeoutSeconds = s.longValue("groupStartTimeoutSeconds", 600, 1, 7L * 24 * 3600);
        int maxWatchesPerConnection = s.intValue("maxWatchesPerConnection", 100_000, 1, Integer.MAX_VALUE);

        RaftConfig raft = new RaftConfig();
        s.apply("electionTimeoutMillis", () -> raft.electionTimeoutMillis(s.longValue("electionTimeoutMillis",
                raft.electionTimeoutMillis(), 10, 600_000)));
        s.apply("heartbeatIntervalMillis", () -> raft.heartbeatIntervalMillis(s.longValue("heartbeatIntervalMillis",
                raft.heartbeatIntervalMillis(), 1, 600_000)));
        s.apply("syncForce", () -> raft.syncForce(s.bool("syncForce", true)));
        long everyEntries = s.longValue("snapshotEveryEntries", raft.snapshotEveryEntries(), 0, Long.MAX_VALUE);
        long everyMillis = s.longValue("snapshotIntervalMillis", raft.snapshotIntervalMillis(), 0, Long.MAX_VALUE);
        raft.snapshotEvery(everyEntries, everyMillis);
        s.apply("snapshotsToKeep", () -> raft.snapshotsToKeep(s.intValue("snapshotsToKeep", 2, 1, 1000)));
        s.apply("segmentBytes", () -> raft.segmentBytes(s.longValue("segmentBytes", raft.segmentBytes(), 4096,
                1L << 40)));
        s.apply("recycledSegments", () -> raft.recycledSegments(s.intValue("recycledSegments", raft.recycledSegments(),
                0, 1024)));
        try {
            raft.validate();
        } catch (IllegalArgumentException e) {
            String key = raft.heartbeatIntervalMillis() >= raft.electionTimeoutMillis() ? "heartbeatIntervalMillis"
                    : "electionTimeoutMillis";
            throw new ConfigException(p.path(), key, (p.path() == null ? "config" : p.locate(key)) + ": "
                    + e.getMessage());
        }
        return new NodeConfig(p.path(), nodeId, clusterName.isEmpty() ? null : clusterName, host, replicationPort, servicePort, metricsPort, dataDir, dispatchers,
                logIoThreads, serviceIoThreads, replicationIoThreads, fsyncPermits, logJournal, logJournalFiles, logJournalFileMiB, batchAppends,
                snapshotOnStop, shutdownTimeoutMillis, drainTimeoutMillis, groupStartTimeoutSeconds, maxWatchesPerConnection, raft);
    }

    /**
     * " (did you mean 'x'?)" for the known key most like {@code key}: one within two edits of it, else
     * the one sharing the longest prefix with it (ignoring case) when that prefix is at least 6
     * characters.
     */
    static String suggestion(String key) {
        String lower = key.toLowerCase(java.util.Locale.ROOT);
        for (String k : KEYS) {
            if (editDistance(k.toLowerCase(java.util.Locale.ROOT), lower) <= 2) {
                return " (did you mean '" + k + "'?)";
            }
        }
        String best = null;
        int bestPrefix = 0;
        for (String k : KEYS) {
            String kl = k.toLowerCase(java.util.Locale.ROOT);
            int n = 0;
            while (n < kl.length() && n < lower.length() && kl.charAt(n) == lower.charAt(n)) {
                n++;
            }
            if (n > bestPrefix) {
                bestPrefix = n;
                best = k;
            }
        }
        if (best != null && bestPrefix >= Math.min(6, key.length())) {
            return " (did you mean '" + best + "'?)";
        }
        return "";
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** Typed reads of a {@link PropertiesFile} with errors that name the key, the value and the valid range. */
    static final class Settings {
        private final PropertiesFile p;

        Settings(PropertiesFile p) {
            this.p = p;
        }

        String string(String key, String dflt) {
            String v = p.get(key);
            return v == null ? dflt : v;
        }

        int intValue(String key, int dflt, int min, int max) {
            return (int) longValue(key, dflt, min, max);
        }

        long longValue(String key, long dflt, long min, long max) {
            String v = p.get(key);
            if (v == null) {
                return dflt;
            }
            long n;
            try {
                n = Long.parseLong(v.replace("_", ""));
            } catch (NumberFormatException e) {
                throw p.invalid(key, "not a whole number");
            }
            if (n < min || n > max) {
                throw p.invalid(key, "out of range; it must be " + range(min, max));
            }
            return n;
        }

        boolean bool(String key, boolean dflt) {
            String v = p.get(key);
            if (v == null) {
                return dflt;
            }
            if (v.equalsIgnoreCase("true")) {
                return true;
            }
            if (v.equalsIgnoreCase("false")) {
                return false;
            }
            throw p.invalid(key, "must be true or false");
        }

        /** true, false or auto; auto when the key is not set. */
        AutoSwitch autoSwitch(String key) {
            String v = p.get(key);
            if (v == null) {
                return AutoSwitch.AUTO;
            }
            AutoSwitch a = AutoSwitch.parse(v);
            if (a == null) {
                throw p.invalid(key, "must be true, false or auto");
            }
            return a;
        }

        /** Runs a RaftConfig setter for a key that is set, turning its refusal into an error naming the key. */
        void apply(String key, Runnable setter) {
            if (!p.contains(key)) {
                return;
            }
            try {
                setter.run();
            } catch (ConfigException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw p.invalid(key, e.getMessage());
            }
        }

        private static String range(long min, long max) {
            if (max == Long.MAX_VALUE || max == Integer.MAX_VALUE) {
                return "at least " + min;
            }
            return "between " + min + " and " + max;
        }
    }
}
