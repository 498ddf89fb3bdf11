package io.poyang.benchmark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** The options of {@code ./poyang bench} (DESIGN §10), parsed and checked. */
public final class BenchOptions {

    public static final List<String> OPS = Collections.unmodifiableList(
            Arrays.asList("rpc", "fiber", "log", "raft", "raft-read", "put", "get", "mixed"));

    /**
     * Operations in flight at most, --clients × --max-pending: each holds a slot and a pending
     * request, and a start-up burst of billions ran out of memory rather than measure anything.
     */
    static final int MAX_IN_FLIGHT = 1_000_000;
    /** Clients at most: each has its own connections and I/O thread. */
    static final int MAX_CLIENTS = 1_000;
    /** --threads at most: platform threads on JDKs before 21, where tens of thousands fail to start. */
    static final int MAX_THREADS = 10_000;
    /** --groups at most: every group has its own raft log, and fsyncs, on every node. */
    static final int MAX_GROUPS = 256;

    /**
     * Read when --log-journal / --batch-appends are not given: commands from before the options
     * (docs/benchmarks.md) turned these on with {@code -Dpoyang.bench.logJournal=true} and
     * {@code -Dpoyang.bench.batchAppends=true}.
     */
    public static final String LOG_JOURNAL_PROPERTY = "poyang.bench.logJournal";
    public static final String BATCH_APPENDS_PROPERTY = "poyang.bench.batchAppends";
    /** The ops whose raft nodes the bench starts itself: the ones --log-journal, --batch-appends and --leaders set up. */
    static final List<String> OPS_WITH_RAFT_NODES = Collections.unmodifiableList(
            Arrays.asList("raft", "raft-read", "put", "get", "mixed"));

    public String op = "put";
    public int nodes = 1;
    /** Whether --nodes was given (with --servers the listed cluster's size is the one reported). */
    public boolean nodesGiven;
    /** Existing cluster to use instead of local servers, "host:port" each; empty: start local ones. */
    public List<String> servers = new ArrayList<>();
    public int valueSize = 128;
    /** True when --value-size was given (a scenario may pick its own default otherwise: log uses 256). */
    public boolean valueSizeGiven;
    public int keys = 100_000;
    /** Whether --keys was given (put/get/mixed default to 10,000 keys otherwise). */
    public boolean keysGiven;
    public int maxPending = 1_000;
    public int clients = 1;
    public int batchSize = 1;
    public double durationSeconds = 10;
    public double warmupSeconds = 3;
    public boolean sync;
    public int threads = 64;
    public boolean fsync = true;
    public int groups = 1;
    /** How reads (get, mixed, raft-read) are made linearizable: lease (default), read-index or follower. */
    public String readKind = "lease";
    public String output = "table";
    public boolean strict;
    /** put/get/mixed: the local nodes run in this JVM instead of as child processes (profiling, tests). */
    public boolean inProcess;
    /**
     * The nodes started here write their groups' logs through the node's log journal
     * (RaftServerConfig.Builder.logJournal, the node key logJournal): --log-journal, else
     * {@link #LOG_JOURNAL_PROPERTY}, else on with several groups (as a DtKV node's {@code auto}).
     */
    public boolean logJournal = Boolean.getBoolean(LOG_JOURNAL_PROPERTY);
    /** Whether --log-journal was given. */
    public boolean logJournalGiven;
    /**
     * The nodes started here send a dispatcher round's AppendEntries to one node as one frame
     * (RaftServerConfig.Builder.batchAppends, the node key batchAppends): --batch-appends, else
     * {@link #BATCH_APPENDS_PROPERTY}, else the same as the journal (as a DtKV node's {@code auto}).
     */
    public boolean batchAppends = Boolean.getBoolean(BATCH_APPENDS_PROPERTY);
    /** Whether --batch-appends was given. */
    public boolean batchAppendsGiven;
    /**
     * --leaders: the node every group's leader is moved to before the warm-up, so one client's
     * writes to all groups go over one connection, and every group's preferred leader, so they
     * come back to it after a failover; 0: where the elections put them. Not given: node 1 when
     * the bench starts several nodes with several groups (the workload is one client on one
     * connection, as with one group), else 0.
     */
    public int leadersOn;
    /** Whether --leaders was given. */
    public boolean leadersGiven;
    public boolean help;

    public static String usage() {
        return String.join("\n",
                "usage: poyang bench [options]",
                "",
                "Runs one benchmark, prints a per-second timeline as it goes, then a report. With no options:",
                "asynchronous DtKV puts of 256-byte values over 10,000 keys from one client on one connection",
                "to a single-node server started as a child process (fsync on), 10 s after a 3 s warm-up.",
                "",
                "  --op put|get|mixed|raft|raft-read|rpc|fiber|log  what to measure (default put)",
                "  --nodes 1|3               local servers: DtKV node processes for put/get/mixed (default 1)",
                "  --servers [id=]h:p,...    use an existing cluster (service ports): nothing is started or stopped;",
                "                            ids default to 1, 2, 3 ... in order",
                "  --in-process              put/get/mixed: run the local nodes in this JVM, not as child processes",
                "  --value-size BYTES        body or value size (default 256; 128 for --op rpc)",
                "  --keys N                  distinct keys (default 10000 for put/get/mixed, 100000 for raft)",
                "  --max-pending N           requests in flight per client, asynchronous mode (default 1000)",
                "  --clients N               clients, one connection each (default 1)",
                "  --batch-size N            keys per request (default 1)",
                "  --duration TIME           measured time: 10, 10s, 500ms, 2m, 1h (default 10s)",
                "  --warmup TIME             time run first and left out of the totals (default 3s)",
                "  --sync                    blocking calls from --threads threads instead of asynchronous ones",
                "  --threads N               caller threads for --sync; virtual threads on JDK 21+ (default 64)",
                "  --fsync true|false        fsync the raft log before acknowledging (default true)",
                "  --groups N                raft groups (default 1)",
                "  --read-kind lease|read-index|follower  how get, mixed and raft-read reads are served (default lease)",
                "  --log-journal true|false  the nodes started here write through the node's log journal",
                "                            (default: true with --groups above 1, as a DtKV node's logJournal = auto)",
                "  --batch-appends true|false  the nodes started here send a round's appends to a node as one frame",
                "                            (default: as --log-journal; it pays with the journal)",
                "  --leaders N               move every group's leader to node N before the warm-up and keep it",
                "                            there: node N is every group's preferred leader; 0: where the elections",
                "                            put them (default: 1 with --groups above 1 on the nodes started here,",
                "                            so one client reaches every leader on one connection; else 0)",
                "  --output table|json       report format; json prints one object on the last line (default table)",
                "  --strict                  exit 1 when any operation failed or timed out",
                "  --help                    this text",
                "");
    }

    public static BenchOptions parse(String... args) throws UsageException {
        BenchOptions o = new BenchOptions();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "': options start with -- (see --help)");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            switch (name) {
                case "help":
                    o.help = true;
                    continue;
                case "sync":
                    o.sync = value == null || bool(name, value);
                    continue;
                case "strict":
                    o.strict = value == null || bool(name, value);
                    continue;
                case "in-process":
                    o.inProcess = value == null || bool(name, value);
                    continue;
                default:
                    break;
            }
            if (value == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
                    if (!known(name)) {
                        throw unknown(name);
                    }
                    throw new UsageException("option --" + name + " needs a value (see --help)");
                }
                value = args[++i];
            }
            switch (name) {
                case "op":
                    o.op = value.toLowerCase(Locale.ROOT);
                    if (!OPS.contains(o.op)) {
                        throw new UsageException("--op must be one of " + String.join("|", OPS) + ", got '" + value + "'");
                    }
                    break;
                case "nodes":
                    o.nodes = positive(name, value);
                    if (o.nodes != 1 && o.nodes != 3) {
                        throw new UsageException("--nodes must be 1 or 3, got " + value);
                    }
                    o.nodesGiven = true;
                    break;
                case "servers":
                    o.servers = new ArrayList<>();
                    for (String s : value.split(",")) {
                        String t = s.trim();
                        String problem = io.poyang.net.HostPort.problem(ServerProbe.hostPortOf(t), false);
                        int idEnd = t.indexOf('=');
                        if (problem == null && idEnd >= 0) {
                            String id = t.substring(0, idEnd).trim();
                            if (!id.matches("[0-9]{1,9}") || Integer.parseInt(id) == 0) {
                                problem = "a node id is a positive number, got '" + id + "' in '" + t + "'";
                            }
                        }
                        if (problem != null) {
                            throw new UsageException("--servers takes [id=]host:port,[id=]host:port...: " + problem);
                        }
                        o.servers.add(t);
                    }
                    break;
                case "value-size":
                    o.valueSize = nonNegative(name, value);
                    o.valueSizeGiven = true;
                    break;
                case "keys":
                    o.keys = positive(name, value);
                    o.keysGiven = true;
                    break;
                case "max-pending":
                    o.maxPending = positive(name, value);
                    break;
                case "clients":
                    o.clients = between(1, MAX_CLIENTS, name, value);
                    break;
                case "batch-size":
                    o.batchSize = positive(name, value);
                    break;
                case "duration":
                    o.durationSeconds = TimeArgument.seconds(name, value);
                    if (o.durationSeconds <= 0) {
                        throw new UsageException("--duration must be positive, got " + value);
                    }
                    break;
                case "warmup":
                    o.warmupSeconds = TimeArgument.seconds(name, value);
                    break;
                case "threads":
                    o.threads = between(1, MAX_THREADS, name, value);
                    break;
                case "fsync":
                    o.fsync = bool(name, value);
                    break;
                case "groups":
                    o.groups = between(1, MAX_GROUPS, name, value);
                    break;
                case "log-journal":
                    o.logJournal = bool(name, value);
                    o.logJournalGiven = true;
                    break;
                case "batch-appends":
                    o.batchAppends = bool(name, value);
                    o.batchAppendsGiven = true;
                    break;
                case "leaders":
                    o.leadersOn = nonNegative(name, value);
                    o.leadersGiven = true;
                    break;
                case "read-kind":
                    o.readKind = value.toLowerCase(Locale.ROOT);
                    if (!o.readKind.equals("lease") && !o.readKind.equals("read-index") && !o.readKind.equals("follower")) {
                        throw new UsageException("--read-kind must be lease, read-index or follower, got '" + value + "'");
                    }
                    break;
                case "output":
                    o.output = value.toLowerCase(Locale.ROOT);
                    if (!o.output.equals("table") && !o.output.equals("json")) {
                        throw new UsageException("--output must be table or json, got '" + value + "'");
                    }
                    break;
                default:
                    throw unknown(name);
            }
        }
        o.checkCombinations();
        o.applyMultiGroupDefaults();
        return o;
    }

    /** Options fine one by one that cannot go together: told now, not as a run whose every operation fails. */
    private void checkCombinations() throws UsageException {
        if ((long) clients * maxPending > MAX_IN_FLIGHT) {
            throw new UsageException("--clients " + clients + " with --max-pending " + maxPending + " keep "
                    + (long) clients * maxPending + " operations in flight; at most " + MAX_IN_FLIGHT + " are allowed");
        }
        if (!servers.isEmpty() && !(op.equals("put") || op.equals("get") || op.equals("mixed") || op.equals("rpc"))) {
            // (rpc says why itself) these start their own nodes in this process and would report the
            // addresses' count as the nodes measured
            throw new UsageException("--servers is for the DtKV ops (put, get, mixed); --op " + op
                    + " starts its own nodes in this process");
        }
        if (nodesGiven && !servers.isEmpty() && nodes != servers.size()) {
            throw new UsageException("--nodes " + nodes + " but --servers lists " + servers.size() + " address(es): with"
                    + " --servers the cluster is the one listed; leave --nodes out");
        }
        checkNodeSetup("--log-journal", logJournalGiven);
        checkNodeSetup("--batch-appends", batchAppendsGiven);
        checkNodeSetup("--leaders", leadersGiven);
        if (leadersOn > nodes) {
            throw new UsageException("--leaders " + leadersOn + " names no node: the bench starts " + nodes
                    + " node(s) (--nodes " + nodes + "), ids 1 to " + nodes);
        }
    }

    /**
     * The nodes the bench starts with several groups are set up as a DtKV node with several groups
     * is by default (logJournal and batchAppends auto), and every leader goes to node 1, unless the
     * options (or, for the journal and batching, the old system properties) say otherwise.
     */
    private void applyMultiGroupDefaults() {
        if (!servers.isEmpty() || !OPS_WITH_RAFT_NODES.contains(op)) {
            return;
        }
        boolean severalGroups = groups > 1;
        if (!logJournalGiven && System.getProperty(LOG_JOURNAL_PROPERTY) == null) {
            logJournal = severalGroups && fsync;   // without fsyncs there is nothing to share
        }
        if (!batchAppendsGiven && System.getProperty(BATCH_APPENDS_PROPERTY) == null) {
            batchAppends = logJournal;
        }
        if (!leadersGiven && nodes > 1 && severalGroups) {
            leadersOn = 1;
        }
    }

    /** An option that sets up the raft nodes the bench starts: refused where it starts none. */
    private void checkNodeSetup(String option, boolean given) throws UsageException {
        if (!given) {
            return;
        }
        if (!servers.isEmpty()) {
            // the bench neither configures an existing cluster nor knows its nodes' replication (admin) ports
            throw new UsageException(option + " sets up the nodes the bench starts; with --servers the cluster is"
                    + " running already: set it up there (config.properties, ./poyang admin transfer-leader)");
        }
        if (!OPS_WITH_RAFT_NODES.contains(op)) {
            throw new UsageException(option + " sets up raft nodes, which --op " + op + " does not start; it is for --op "
                    + String.join(", ", OPS_WITH_RAFT_NODES));
        }
    }

    /** The nodes of the cluster measured: the --servers listed, else the local ones. */
    public int clusterNodes() {
        return servers.isEmpty() ? nodes : servers.size();
    }

    private static boolean known(String name) {
        return usage().contains("--" + name + " ");
    }

    private static UsageException unknown(String name) {
        return new UsageException("unknown option --" + name + " (see --help)");
    }

    private static boolean bool(String name, String v) throws UsageException {
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new UsageException("--" + name + " takes true or false, got '" + v + "'");
    }

    private static int nonNegative(String name, String v) throws UsageException {
        return atLeast(0, name, v);
    }

    private static int positive(String name, String v) throws UsageException {
        return atLeast(1, name, v);
    }

    private static int between(int min, int max, String name, String v) throws UsageException {
        int n = atLeast(min, name, v);
        if (n > max) {
            throw new UsageException("--" + name + " must be at most " + max + ", got " + v);
        }
        return n;
    }

    private static int atLeast(int min, String name, String v) throws UsageException {
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " takes a whole number, got '" + v + "'");
        }
        if (n < min) {
            throw new UsageException("--" + name + " must be at least " + min + ", got " + v);
        }
        if (n > Integer.MAX_VALUE) {
            throw new UsageException("--" + name + " must be at most " + Integer.MAX_VALUE + ", got " + v);
        }
        return (int) n;
    }

    public boolean json() {
        return output.equals("json");
    }
}
