package io.poyang.server.node;

import io.poyang.common.StoppedException;
import io.poyang.dtkv.server.DtKvService;
import io.poyang.dtkv.server.KvConfig;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.RaftServerConfig;
import io.poyang.raft.server.TestingFaultsService;
import io.poyang.raft.store.LogCorruptedException;
import io.poyang.server.config.ConfigException;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.ServersConfig;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A DtKV node as {@code ./poyang server} runs it: the data directory (PID lock, owner check), a
 * {@link RaftServer} with a {@link DtKvService} and the DtKV groups {@code servers.properties} gives
 * this node, and the HTTP endpoint for {@code /metrics} and {@code /health}.
 *
 * <p>{@link #start()} fails fast with a {@link NodeStartException} (or a {@link ConfigException})
 * whose message names the cause and what to do; nothing is left running or locked after a failed
 * start. {@link #stop()} is graceful: new writes are refused, writes already taken are answered (up
 * to {@code drainTimeoutMillis}), a snapshot is taken when {@code snapshotOnStop} is set, then the
 * groups stop (their logs get a last fsync and close) and the data directory is released.
 */
public final class PoyangNode {

    private static final PoyangLog log = PoyangLogs.get(PoyangNode.class);
    /** How long start waits for the groups to recover their logs and snapshots. */

    private final NodeConfig config;
    private final ServersConfig servers;
    private final Path serversFile;
    private DataDir dataDir;
    private DtKvService kv;
    private RaftServer raft;
    private NodeHttpEndpoint http;
    /** Null until the groups of the file have started (their start needs no rewrite), and without a file. */
    private volatile ServersFileSync serversSync;
    private volatile boolean stopped;
    private boolean testingFaults;
    /**
     * Where a start() stands, for a stop() on another thread. A start() holds this object's lock, so
     * a stop cannot wait for it there: it moves a {@code RUNNING} start to {@code CUT} and the start
     * gives up at its next step. The start ends by moving {@code RUNNING} to {@code DONE}: whichever
     * of the two moves comes first wins, so a start either fails as stopped or has finished before
     * the stop begins (the stop then stops a started node, gracefully).
     */
    private final AtomicReference<StartPhase> startPhase = new AtomicReference<>(StartPhase.IDLE);
    /** Runs after the start's last step, before it is complete; tests hold a start there. */
    volatile Runnable beforeStartCompletes = () -> { };

    private enum StartPhase { IDLE, RUNNING, CUT, DONE }
    /** The start reached its groups (they may write to the data directory); set by start(), read by abortStart. */
    private boolean groupsBegun;
    /** The raft server of the start in progress, for a stop that comes meanwhile; else null. */
    private volatile RaftServer startingRaft;

    /**
     * @param serversFile where {@code servers} came from (the node writes membership and group
     *                    changes back into it), or null when it came from no file
     */
    public PoyangNode(NodeConfig config, ServersConfig servers, Path serversFile) {
        this.config = config;
        this.servers = servers;
        this.serversFile = serversFile;
    }

    public NodeConfig config() {
        return config;
    }

    /** Checks that the two files agree about this node: it is listed, at the port it listens on. */
    static void checkLayout(NodeConfig config, ServersConfig servers, Path serversFile) {
        String where = serversFile == null ? "the cluster layout" : serversFile.toString();
        String self = servers.nodes().get(config.nodeId);
        if (self == null) {
            throw new ConfigException(serversFile, "node." + config.nodeId, where + " has no node." + config.nodeId
                    + " line; list this node (nodeId " + config.nodeId + ") with its replication address, e.g. node."
                    + config.nodeId + " = " + config.host + ":" + config.replicationPort);
        }
        int i = self.lastIndexOf(':');
        String host = self.substring(0, i);
        int port = Integer.parseInt(self.substring(i + 1));
        boolean wildcard = isWildcard(config.host);
        // servers.properties must write an IPv6 address in brackets ([::1]:9431), config.properties'
        // host may or may not (::1 or [::1]): the same address either way
        if ((config.replicationPort != 0 && port != config.replicationPort)
                || (!wildcard && !unbracketed(host).equals(unbracketed(config.host)))) {
            throw new ConfigException(serversFile, "node." + config.nodeId, where + ": node." + config.nodeId + " = "
                    + self + ", but config.properties says this node listens on " + addressOf(config.host,
                    config.replicationPort) + " (host, replicationPort); make them agree");
        }
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    /**
     * The host others reach this node at: {@code host}, or with a wildcard {@code host} (it listens on
     * every interface) the host of its servers.properties address.
     */
    private String reachableHost() {
        if (!isWildcard(config.host)) {
            return config.host;
        }
        String self = raft.selfAddress();
        return self.substring(0, self.lastIndexOf(':'));
    }

    private static String unbracketed(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** "host:port", with an IPv6 host in brackets so the port stays apart ([::1]:9432). */
    static String addressOf(String host, int port) {
        String h = unbracketed(host);
        return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + port;
    }

    /**
     * Starts the node; returns once it serves (ports open, every group recovered). A leader may not be
     * elected yet (a three-node group needs two of its nodes up). A start that fails leaves nothing
     * running or locked and may be retried on this object (once the port is free, say); a node that
     * has started cannot start again, even after {@link #stop()}: create a new {@code PoyangNode}.
     */
    public synchronized void start() {
        if (raft != null) {
            throw new IllegalStateException("node " + config.nodeId + (stopped ? " was started and stopped" : " is"
                    + " running") + "; a PoyangNode starts once: create a new one to start the node again");
        }
        groupsBegun = false;
        startPhase.set(StartPhase.RUNNING);
        try {
            start0();
        } finally {
            // a failed start may be retried; a finished one stays DONE
            startPhase.compareAndSet(StartPhase.RUNNING, StartPhase.IDLE);
            startPhase.compareAndSet(StartPhase.CUT, StartPhase.IDLE);
            startingRaft = null;
        }
        log.info("{}", readyLine());
    }

    private void start0() {
        checkLayout(config, servers, serversFile);
        dataDir = DataDir.open(config.dataDir, config.nodeId, config.clusterName);
        try {
            checkPortFree("replicationPort", config.replicationPort);
            checkPortFree("servicePort", config.servicePort);
            if (config.metricsPort > 0) {
                checkPortFree("metricsPort", config.metricsPort);
            }
            startRaft();
            startGroups();
            if (serversFile != null) {
                serversSync = new ServersFileSync(config.nodeId, raft, serversFile, servers);
                serversSync.start();
            }
            if (config.metricsPort != NodeConfig.METRICS_OFF) {
                http = new NodeHttpEndpoint(this, config.host, config.metricsPort);
                http.start();
            }
            beforeStartCompletes.run();
            if (!startPhase.compareAndSet(StartPhase.RUNNING, StartPhase.DONE)) {
                throw new StoppedException("node " + config.nodeId + " was stopped while it started");
            }
        } catch (RuntimeException | Error e) {
            abortStart(e);
            if (startPhase.get() == StartPhase.CUT && e instanceof RuntimeException && !(e instanceof StoppedException)) {
                throw new StoppedException("node " + config.nodeId + " was stopped while it started (" + e.getMessage()
                        + ")", e);
            }
            throw e;
        }
    }

    /** Throws once a stop() came during the start (the start then undoes itself). */
    private void checkNotStopping() {
        if (startPhase.get() == StartPhase.CUT) {
            throw new StoppedException("node " + config.nodeId + " was stopped while it started");
        }
    }

    private void checkPortFree(String key, int port) {
        if (port == 0) {
            return;
        }
        try (ServerSocketChannel ch = ServerSocketChannel.open()) {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(new InetSocketAddress(config.host, port));
        } catch (BindException e) {
            throw bindFailed(key, port, e);
        } catch (java.nio.channels.UnresolvedAddressException e) {
            throw new NodeStartException("host '" + config.host + "' (the host key" + (config.file != null ? " in "
                    + config.file : "") + ") does not resolve to an address; use an IP address or a name this"
                    + " machine can resolve", e);
        } catch (IOException e) {
            throw new NodeStartException("cannot listen on " + config.host + ":" + port + " (" + key + "): " + e, e);
        }
    }

    /**
     * Java reports every failed bind as a BindException: a port in use, but also a host that is not
     * an address of this machine (a config copied from another one) or a port below 1024 without the
     * right to it. Only the first is "in use".
     */
    private NodeStartException bindFailed(String key, int port, BindException e) {
        String why = String.valueOf(e.getMessage());
        if (why.contains("in use")) {
            return portInUse(key, port, e);
        }
        if (why.contains("assign")) {
            return new NodeStartException("cannot listen on " + config.host + ":" + port + " (" + key + "): "
                    + config.host + " is not an address of this machine (" + why + "). Set host"
                    + (config.file != null ? " in " + config.file : "") + " to one of its addresses", e);
        }
        return new NodeStartException("cannot listen on " + config.host + ":" + port + " (" + key + "): " + why
                + (port < 1024 ? ". Ports below 1024 need privileges; choose a port of 1024 or more" : ""), e);
    }

    private NodeStartException portInUse(String key, int port, Throwable cause) {
        return new NodeStartException("port " + port + " on " + config.host + " is already in use (" + key
                + (config.file != null ? " in " + config.file : ", the default") + "): " + cause.getMessage()
                + ". Stop the process listening there (another node?) or choose another " + key, cause);
    }

    /** This node's host as servers.properties gives it (checkLayout made it agree with config's host unless that is a wildcard). */
    private String advertisedHost() {
        String self = servers.nodes().get(config.nodeId);
        return self.substring(0, self.lastIndexOf(':'));
    }

    private void startRaft() {
        kv = new DtKvService();
        int hostedGroups = servers.groupsOf(config.nodeId).size();
        // auto is decided here, once per start: say what it became, so that an operator who added
        // groups at runtime sees at the next start why the node now journals (or still does not)
        log.info("node {}: log journal {}, batched appends {} (logJournal = {}, batchAppends = {}; {} group(s) at start,"
                + " syncForce {})", config.nodeId, config.logJournal(hostedGroups) ? "on" : "off",
                config.batchAppends(hostedGroups) ? "on" : "off", config.logJournal, config.batchAppends, hostedGroups,
                config.raft.syncForce());
        RaftServerConfig.Builder b = RaftServer.builder()
                .nodeId(config.nodeId)
                .clusterName(config.clusterName)
                // known to the others by its servers.properties address, listening on config's host
                // (with host = 0.0.0.0, that address, not 0.0.0.0, is what it reports as its own)
                .node(config.nodeId, advertisedHost() + ":" + config.replicationPort)
                .replicationBindHost(config.host)
                .servicePort(config.host, config.servicePort)
                .dataDir(dataDir.path())
                .dispatchers(config.dispatchers)
                .logIoThreads(config.logIoThreads)
                .ioThreads(config.serviceIoThreads, config.replicationIoThreads)
                .fsyncPermits(config.fsyncPermits)
                // auto: on for a node that starts with several groups (one fsync and one frame per
                // round for all of them); a group added later does not turn it on before a restart
                .logJournal(config.logJournal(hostedGroups))
                .logJournalFiles(config.logJournalFiles, (long) config.logJournalFileMiB << 20)
                .batchAppends(config.batchAppends(hostedGroups))
                .raftConfig(config.raft)
                .serviceExtension(kv)
                // groups added at runtime (AdminClient.addGroup, e.g. a node joining a group) are DtKV groups too
                .stateMachineFactory(g -> kv.stateMachine(g, kvConfig()).get())
                // a group added or removed at runtime is in servers.properties before the command is
                // answered: a crash right after it must not lose it (the timer alone is a second late)
                .layoutListener(() -> {
                    ServersFileSync sync = serversSync;
                    if (sync != null) {
                        sync.sync();
                    }
                });
        if (testingFaults) {
            TestingFaultsService.enable(b);
        }
        servers.nodes().forEach((id, addr) -> {
            if (id != config.nodeId) {
                b.node(id, addr);
            }
        });
        raft = b.build();
        // published before the flag is read, as stop() sets the flag before it reads this: either
        // the stop finds the raft server and stops it, or the start sees the stop
        startingRaft = raft;
        checkNotStopping();
        try {
            raft.start();
        } catch (RuntimeException e) {
            BindException bind = causeOf(e, BindException.class);
            if (bind != null) {
                String msg = String.valueOf(e.getMessage());
                boolean service = msg.contains("service");
                throw portInUse(service ? "servicePort" : "replicationPort", service ? config.servicePort
                        : config.replicationPort, bind);
            }
            throw new NodeStartException("the raft server of node " + config.nodeId + " failed to start: " + e, e);
        }
    }

    /**
     * Says which {@code group-<id>} directories of the data directory this start leaves alone: data
     * kept by {@code remove-group} without {@code --delete-data}, or a servers.properties edited by
     * hand. Not started: the file decides what a node runs.
     */
    private void noteDataOfOtherGroups(List<ServersConfig.Group> mine) {
        java.util.Set<String> running = new java.util.HashSet<>();
        for (ServersConfig.Group g : mine) {
            running.add("group-" + g.id);
        }
        try (java.util.stream.Stream<java.nio.file.Path> dirs = java.nio.file.Files.list(dataDir.path())) {
            dirs.filter(d -> d.getFileName().toString().matches("group-[1-9][0-9]*")
                    && java.nio.file.Files.isDirectory(d) && !running.contains(d.getFileName().toString()))
                    .sorted()
                    .forEach(d -> log.warn("node {}: {} holds the data of a group servers.properties does not give"
                            + " this node; it is not started (kept by remove-group? add-group runs it again;"
                            + " delete the directory if it is not needed)", config.nodeId, d));
        } catch (java.io.IOException e) {
            log.warn("node {}: listing {} failed: {}", config.nodeId, dataDir.path(), e.toString());
        }
    }

    private static final String RAISE_START_TIMEOUT = "; raise groupStartTimeoutSeconds in config.properties to give"
            + " it longer, and keep snapshots on so the log after the last one stays short";

    /** The DtKV settings of this node's groups (the group id is set per group). */
    private KvConfig kvConfig() {
        KvConfig c = new KvConfig();
        c.maxWatchesPerConnection = config.maxWatchesPerConnection;
        return c;
    }

    private void startGroups() {
        groupsBegun = true;
        List<ServersConfig.Group> mine = servers.groupsOf(config.nodeId);
        noteDataOfOtherGroups(mine);
        List<CompletableFuture<RaftGroup>> starts = new ArrayList<>();
        for (ServersConfig.Group g : mine) {
            starts.add(raft.addGroup(g.id, kv.stateMachine(g.id, kvConfig()), new Members(g.members, g.observers),
                    g.preferredLeader));
        }
        for (int i = 0; i < starts.size(); i++) {
            int groupId = mine.get(i).id;
            try {
                starts.get(i).get(config.groupStartTimeoutSeconds, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                LogCorruptedException corrupt = causeOf(c, LogCorruptedException.class);
                if (corrupt != null) {
                    throw new NodeStartException("group " + groupId + " cannot start: its log is corrupted: "
                            + corrupt.getMessage(), corrupt);
                }
                throw new NodeStartException("group " + groupId + " cannot start: " + c + " (data in "
                        + dataDir.path().resolve("group-" + groupId) + ")", c);
            } catch (TimeoutException e) {
                throw new NodeStartException("group " + groupId + " did not finish recovering its log within "
                        + config.groupStartTimeoutSeconds + " s" + RAISE_START_TIMEOUT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NodeStartException("interrupted while group " + groupId + " was starting");
            }
        }
        for (ServersConfig.Group g : mine) {
            awaitReplay(raft.group(g.id));
        }
    }

    /**
     * Waits until the group has applied what its log holds as committed at start (the snapshot is
     * loaded and the log after it replayed), so a node is ready only with its state in memory, and a
     * log damaged in its trusted part (checked by CRC as it is read back) fails the start here rather
     * than leaving a failed group behind a "ready" line.
     */
    private void awaitReplay(RaftGroup g) {
        long target = g.commitIndex();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(config.groupStartTimeoutSeconds);
        while (g.failure() == null && g.lastApplied() < target) {
            checkNotStopping();
            if (System.nanoTime() - deadline > 0) {
                throw new NodeStartException("group " + g.groupId() + " did not replay its log up to index " + target
                        + " within " + config.groupStartTimeoutSeconds + " s (applied " + g.lastApplied() + ")"
                        + RAISE_START_TIMEOUT);
            }
            sleepMillis(2);
        }
        Throwable f = g.failure();
        if (f != null) {
            LogCorruptedException corrupt = causeOf(f, LogCorruptedException.class);
            if (corrupt != null) {
                throw new NodeStartException("group " + g.groupId() + " cannot start: its log is corrupted below its"
                        + " commit index (found while replaying it): " + corrupt.getMessage(), corrupt);
            }
            throw new NodeStartException("group " + g.groupId() + " failed while replaying its log: " + f, f);
        }
    }

    /**
     * Undoes a start that failed after the data directory was taken: stops what was started (the
     * servers-file sync, the HTTP endpoint, the raft server with its threads and ports) and releases
     * the directory. Each step runs even when one before it throws — a directory left locked would
     * make every later start in this JVM fail with "in use" — and the node is left as before
     * {@link #start()}, so the start can be retried. What a step threw is added to {@code failure}.
     */
    private void abortStart(Throwable failure) {
        // a directory nothing ran in is not kept marked as this node's (its nodeId may be a typo):
        // the raft server itself writes nothing there, the groups do
        boolean nothingRan = !groupsBegun;
        DataDir claimed = dataDir;
        undoQuietly(failure, "the servers.properties sync", serversSync == null ? null : serversSync::stop);
        undoQuietly(failure, "the HTTP endpoint", http == null ? null : http::stop);
        undoQuietly(failure, "the raft server", raft == null ? null : raft::stop);
        undoQuietly(failure, "the data directory", () -> {
            if (nothingRan) {
                claimed.unclaim();
            }
            claimed.close();
        });
        serversSync = null;
        http = null;
        raft = null;
        kv = null;
        dataDir = null;
    }

    private void undoQuietly(Throwable failure, String what, Runnable step) {
        if (step == null) {
            return;
        }
        try {
            step.run();
        } catch (RuntimeException | Error e) {
            failure.addSuppressed(e);
            log.warn("node {}: stopping {} after a failed start failed", config.nodeId, what, e);
        }
    }

    static <T extends Throwable> T causeOf(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /**
     * What the node prints on stdout once it serves, on one line, for people and for tools that wait
     * for it: {@code poyang node 1 ready: service 127.0.0.1:9432, replication 127.0.0.1:9431, metrics
     * 127.0.0.1:9433, groups 1, data /abs/data, pid 4242} ("metrics off" when the endpoint is off,
     * "groups none" when it hosts none). Ports are the ones listened on (chosen ones for 0).
     */
    /**
     * FOR TESTING ONLY ({@code ./poyang server --testing-faults}): installs
     * {@link TestingFaultsService}, which lets anyone reaching the service port cut this node's replication
     * traffic with chosen nodes (the chaos runner's partitions). Call before {@link #start()}.
     */
    public PoyangNode enableTestingFaults() {
        this.testingFaults = true;
        return this;
    }

    public String readyLine() {
        StringBuilder groups = new StringBuilder();
        for (RaftGroup g : raft.groups()) {
            if (groups.length() > 0) {
                groups.append(',');
            }
            groups.append(g.groupId());
        }
        String host = reachableHost();
        return "poyang node " + config.nodeId + " ready: service " + addressOf(host, raft.servicePort())
                + ", replication " + raft.selfAddress()
                + ", metrics " + (http == null ? "off" : addressOf(host, http.port()))
                + ", groups " + (groups.length() == 0 ? "none" : groups)
                + ", data " + dataDir.path() + ", pid " + ProcessHandle.current().pid();
    }

    public RaftServer raftServer() {
        return raft;
    }

    public DtKvService kvService() {
        return kv;
    }

    public Path dataDir() {
        return dataDir.path();
    }

    public int servicePort() {
        return raft.servicePort();
    }

    public int replicationPort() {
        return raft.replicationPort();
    }

    /** The HTTP port (metrics, health), or -1 when off. */
    public int metricsPort() {
        return http == null ? -1 : http.port();
    }

    public boolean isStopped() {
        return stopped;
    }

    /**
     * Stops the node gracefully (idempotent; waits for a stop already running): new writes are refused
     * with STOPPING (clients retry another node), writes already taken are answered — up to
     * {@code drainTimeoutMillis}, after which the rest end as outcome-unknown — a snapshot of every
     * group is taken when {@code snapshotOnStop} is set, the groups stop (last fsync, files closed),
     * the ports close and the data directory is released. The caller bounds the whole with
     * {@code shutdownTimeoutMillis} (see ServerCommand). Before {@link #start()} it does nothing.
     * During {@link #start()} it cuts the start short — the groups give up their log recovery at its
     * next safe point, the start undoes itself and throws {@link StoppedException} — and returns once
     * the start has ended (the node may then be started again, as after any failed start).
     */
    public void stop() {
        if (startPhase.compareAndSet(StartPhase.RUNNING, StartPhase.CUT)) {
            cutStartShort();
        }
        stopAfterStart();
    }

    /**
     * Tells the start in progress to give up: its raft server stops (from the thread calling stop(),
     * as the start holds this object's lock), which fails the groups' starts the start waits for.
     */
    private void cutStartShort() {
        RaftServer r = startingRaft;
        if (r != null) {
            log.info("node {}: stopped while starting; the groups give up their recovery", config.nodeId);
            r.stop();
        }
    }

    private synchronized void stopAfterStart() {
        if (stopped || raft == null) {
            return;   // stopped already, or never started: nothing runs
        }
        stopped = true;
        List<RaftGroup> groups = raft.groups();
        handOverLeadership(groups);
        log.info("node {}: stopping: new writes refused, draining the writes in flight", config.nodeId);
        for (RaftGroup g : groups) {
            g.refuseNewWrites();
        }
        long drainDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.drainTimeoutMillis);
        while (pendingWrites(groups) > 0 && System.nanoTime() - drainDeadline < 0) {
            sleepMillis(5);
        }
        int left = pendingWrites(groups);
        if (left > 0) {
            log.warn("node {}: {} writes still unanswered after {} ms; they end as outcome-unknown", config.nodeId,
                    left, config.drainTimeoutMillis);
        }
        if (config.snapshotOnStop) {
            snapshotAll(groups);
        }
        if (http != null) {
            http.stop();
        }
        if (serversSync != null) {
            serversSync.stop();
        }
        raft.stop();
        dataDir.close();
        log.info("node {} stopped", config.nodeId);
    }

    /**
     * Before it stops, a leader hands each group it leads to the node that should lead next (leader
     * transfer: its writes in flight are finished or answered NOT_LEADER, which clients follow), so
     * the group has a new leader within a round trip instead of after an election timeout: the
     * group's preferred leader when it is a caught-up voter (one hand-over, not one to any node and a
     * second to the preferred one), else the most up-to-date other voter; a hand-over already under
     * way (the preferred-leader keeper's) is waited for rather than refused (the rule:
     * {@link RaftGroup#transferLeadershipToSuccessor}). Bounded by
     * {@code min(drainTimeoutMillis, 2 x electionTimeoutMillis)} for all groups together; a group
     * whose hand-over fails (no voter reachable) just goes on to the drain.
     */
    private void handOverLeadership(List<RaftGroup> groups) {
        long budgetMillis = Math.min(config.drainTimeoutMillis, 2 * config.raft.electionTimeoutMillis());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMillis);
        List<CompletableFuture<Integer>> transfers = new ArrayList<>();
        List<RaftGroup> handing = new ArrayList<>();
        for (RaftGroup g : groups) {
            if (!g.isLeader() || g.failure() != null) {
                continue;
            }
            transfers.add(g.transferLeadershipToSuccessor(budgetMillis));
            handing.add(g);
        }
        for (int i = 0; i < transfers.size(); i++) {
            int groupId = handing.get(i).groupId();
            try {
                int target = transfers.get(i).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (target != 0) {
                    log.info("node {}: handed the leadership of group {} to node {}", config.nodeId, groupId, target);
                }
            } catch (ExecutionException | TimeoutException e) {
                log.warn("node {}: could not hand over the leadership of group {} ({}); the group elects a new leader"
                        + " after this node stops", config.nodeId, groupId, e instanceof ExecutionException
                        ? String.valueOf(e.getCause()) : "timed out");   // a string: the reason, not a stack trace
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static int pendingWrites(List<RaftGroup> groups) {
        int n = 0;
        for (RaftGroup g : groups) {
            n += g.pendingWrites();
        }
        return n;
    }

    private void snapshotAll(List<RaftGroup> groups) {
        List<CompletableFuture<?>> snaps = new ArrayList<>();
        for (RaftGroup g : groups) {
            if (g.failure() == null) {
                snaps.add(g.takeSnapshot());
            }
        }
        for (int i = 0; i < snaps.size(); i++) {
            try {
                Object meta = snaps.get(i).get(config.shutdownTimeoutMillis, TimeUnit.MILLISECONDS);
                log.info("node {}: snapshot at stop: {}", config.nodeId, meta == null ? "nothing applied yet" : meta);
            } catch (ExecutionException e) {
                log.warn("node {}: the snapshot at stop failed; the log still holds everything", config.nodeId,
                        e.getCause());
            } catch (TimeoutException e) {
                log.warn("node {}: the snapshot at stop did not finish in time", config.nodeId);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
