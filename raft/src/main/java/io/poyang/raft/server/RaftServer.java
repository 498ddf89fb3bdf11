package io.poyang.raft.server;

import io.poyang.common.LifeCycle;
import io.poyang.common.PoyangException;
import io.poyang.common.StoppedException;
import io.poyang.fiber.Dispatcher;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.NioClient;
import io.poyang.net.NioClientConfig;
import io.poyang.net.NioServer;
import io.poyang.net.NioServerConfig;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.store.FsyncGate;
import io.poyang.raft.store.LogJournal;
import io.poyang.raft.store.LogJournalStats;
import io.poyang.raft.sm.StateMachine;
import io.poyang.raft.store.LogStoreConfig;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A raft node: hosts any number of raft groups over one replication port (servers and admin) and
 * one service port (clients).
 *
 * <p>Threads: the service {@link NioServer} and the replication {@link NioServer}, each with its
 * I/O workers (one by default), one replication {@link NioClient} with one connection per peer
 * node shared by all groups, a fixed pool of {@link Dispatcher}s (default: one per core) over
 * which the groups are spread — each group's state lives on one of them and is touched by no other
 * thread — and an I/O executor for the log and snapshot files of all groups.
 *
 * <pre>{@code
 * RaftServer server = RaftServer.builder()
 *         .nodeId(1)
 *         .node(1, "127.0.0.1:9431").node(2, "127.0.0.1:9441").node(3, "127.0.0.1:9451")
 *         .servicePort(9432)
 *         .dataDir(Paths.get("data/node1"))
 *         .group(1, CounterStateMachine::new, 1, 2, 3)
 *         .build();
 * server.start();
 * }</pre>
 */
public final class RaftServer extends LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(RaftServer.class);
    private static final long START_TIMEOUT_SECONDS = 120;
    /**
     * How long a removed or restarted group's last file operations may take to end after its fibers
     * stopped (a write or fsync on a hung disk) before the removal or restart gives up.
     */
    static final long FILES_RELEASE_TIMEOUT_SECONDS = 30;

    private final RaftServerConfig config;
    private final GroupRegistry registry = new GroupRegistry();
    private Dispatcher[] dispatchers;
    private ExecutorService logIo;
    private NioServer replicationServer;
    private NioServer serviceServer;
    private NioClient replicationClient;
    private ReplicationTransport transport;
    private FsyncGate fsyncGate;
    /** The node's log journal, when on ({@link RaftServerConfig.Builder#logJournal}); null otherwise. */
    private volatile LogJournal journal;
    private int nextDispatcher;
    /** How each hosted group was started (its state machine supplier and first configuration). Guarded by this. */
    private final Map<Integer, GroupStart> startedWith = new java.util.HashMap<>();
    /** Restarts in progress, by group id. Guarded by this. */
    private final Map<Integer, CompletableFuture<RaftGroup>> restarts = new java.util.HashMap<>();
    /**
     * Groups taken off the registry by {@link #removeGroup} whose file operations may still run, by
     * id (guarded by this): no group starts on their directory, and a repeated removal waits for
     * their files again before it deletes anything.
     */
    private final Map<Integer, RaftGroup> removing = new java.util.HashMap<>();
    /** Each group's removal under way ({@link #removeGroup}), until it ends; under this object's lock. */
    private final Map<Integer, CompletableFuture<Void>> removals = new java.util.HashMap<>();
    /** A stop came while doStart ran: no further group is started; guarded by this. */
    private boolean startCutShort;
    /** Serializes address changes, so that two ids cannot take one address at once. */
    private final Object addressLock = new Object();

    /** What a group is started with, and started with again by {@link #restartGroup}. */
    private static final class GroupStart {
        final Supplier<? extends StateMachine> stateMachine;
        final Members members;

        GroupStart(Supplier<? extends StateMachine> stateMachine, Members members) {
            this.stateMachine = stateMachine;
            this.members = members;
        }
    }

    public RaftServer(RaftServerConfig config) {
        this.config = config;
    }

    public static RaftServerConfig.Builder builder() {
        return new RaftServerConfig.Builder();
    }

    public int nodeId() {
        return config.nodeId;
    }

    public RaftServerConfig config() {
        return config;
    }

    @Override
    protected String describe() {
        return "raft node " + config.nodeId;
    }

    @Override
    protected void doStart() throws Exception {
        int id = config.nodeId;
        Files.createDirectories(config.dataDir);
        dispatchers = new Dispatcher[config.dispatchers];
        for (int i = 0; i < dispatchers.length; i++) {
            dispatchers[i] = new Dispatcher("raft-" + id + "-dispatcher-" + i, config.timeSource);
            dispatchers[i].start();
        }
        logIo = LogStoreConfig.newIoExecutor("raft-" + id + "-log-io", config.logIoThreads);
        fsyncGate = config.fsyncPermits > 0 ? new FsyncGate(config.fsyncPermits) : null;
        // before any group opens its log: the journal's records may hold writes their files lack
        if (config.logJournal && config.raft.syncForce()) {
            journal = LogJournal.open("raft-" + id, config.dataDir, config.raft.logFileIo(), config.logJournalFiles,
                    config.logJournalFileBytes);
        } else {
            if (config.logJournal) {
                // the journal exists to make fsyncs fewer; with fsyncs off there is nothing to share
                log.warn("raft node {}: logJournal is on but syncForce is off (no fsyncs): no journal is kept;"
                        + " turn syncForce on for durable writes through the journal", id);
            }
            LogJournal.replayAndRemoveLeftover(config.dataDir, config.raft.logFileIo());
        }
        deleteLeftoverRemovals();

        NioClientConfig cc = new NioClientConfig();
        cc.name = "raft-" + id + "-replication-client";
        cc.nodeId = id;
        cc.clusterName = config.clusterName;
        cc.ioThreads = config.replicationIoThreads;
        cc.reconnectMinBackoffMillis = 20;
        cc.reconnectMaxBackoffMillis = Math.max(20, Math.min(1000, config.raft.electionTimeoutMillis()));
        cc.connectTimeoutMillis = Math.max(100, Math.min(3000, config.raft.electionTimeoutMillis()));
        cc.maxPendingRequests = 1_000_000;
        cc.maxPendingBytes = 1L << 30;
        replicationClient = new NioClient(cc);
        replicationClient.start();
        transport = new ReplicationTransport(id, replicationClient, config.faultInjector, config.batchAppends);

        // The two ports share the process's descriptors: each taking the whole default budget, a
        // flood on both could leave none for the log's next segment. Peers and admin tools need few
        // connections, clients many.
        int budget = NioServer.connectionBudget();
        InetSocketAddress self = parse(config.nodes.get(id));
        NioServerConfig rc = new NioServerConfig();
        if (budget > 0) {
            rc.maxConnections = Math.max(16, budget / 4);
        }
        rc.name = "raft-" + id + "-replication";
        // refuses a peer (or admin client) whose address for some other node reaches this one
        rc.nodeId = id;
        rc.clusterName = config.clusterName;
        rc.host = config.replicationBindHost != null ? config.replicationBindHost : self.getHostString();
        rc.port = self.getPort();
        rc.ioThreads = config.replicationIoThreads;
        replicationServer = new NioServer(rc);
        replicationServer.register(RaftCommands.VOTE, new ReplicationProcessors.Vote(registry, id));
        replicationServer.register(RaftCommands.APPEND_ENTRIES, new ReplicationProcessors.Append(registry, id));
        if (config.takeBatchedAppends) {
            replicationServer.register(RaftCommands.APPEND_ENTRIES_BATCH, new ReplicationProcessors.AppendBatch(registry, id));
        }
        replicationServer.register(RaftCommands.INSTALL_SNAPSHOT, new ReplicationProcessors.InstallSnapshot(registry, id));
        replicationServer.register(RaftCommands.READ_INDEX, new ReplicationProcessors.ReadIndex(registry, id));
        replicationServer.register(RaftCommands.TIMEOUT_NOW, new ReplicationProcessors.TimeoutNow(registry, id));
        replicationServer.register(RaftCommands.RAFT_STATUS, new ReplicationProcessors.Status(registry, id));
        new AdminProcessors(this, config).registerOn(replicationServer);
        replicationServer.start();

        NioServerConfig sc = new NioServerConfig();
        sc.name = "raft-" + id + "-service";
        sc.nodeId = id;
        sc.clusterName = config.clusterName;
        sc.host = config.serviceHost;
        sc.port = config.servicePort;
        sc.ioThreads = config.serviceIoThreads;
        if (budget > 0) {
            sc.maxConnections = Math.max(16, budget - rc.maxConnections);
        }
        serviceServer = new NioServer(sc);
        serviceServer.register(RaftCommands.RAFT_WRITE, new WriteProcessor(registry, id));
        serviceServer.register(RaftCommands.RAFT_STATUS, new ReplicationProcessors.Status(registry, id));
        for (ServiceExtension ext : config.serviceExtensions) {
            ext.install(this, serviceServer);
        }
        serviceServer.start();

        for (Map.Entry<Integer, String> e : config.nodes.entrySet()) {
            if (e.getKey() != id && parse(e.getValue()).getPort() != 0) {
                transport.setAddress(e.getKey(), e.getValue());
            }
        }

        List<CompletableFuture<Void>> starts = new ArrayList<>();
        for (RaftServerConfig.GroupSpec spec : config.groups) {
            starts.add(addGroup0(spec));
        }
        for (int i = 0; i < starts.size(); i++) {
            await(starts.get(i), "raft group " + config.groups.get(i).groupId + " to start on node " + id);
        }
        log.info("raft node {} started: replication port {}, service port {}, {} groups on {} dispatchers", id,
                replicationServer.port(), serviceServer.port(), starts.size(), dispatchers.length);
    }

    /**
     * A stop during the start: the groups recovering their logs give the recovery up at their next
     * safe point (their starts fail, and so does doStart's wait for them), and no group after them is
     * started, so the stop does not wait for every group's whole recovery (minutes on large logs).
     */
    @Override
    protected void stopRequestedWhileStarting() {
        List<RaftGroup> starting;
        synchronized (this) {
            startCutShort = true;
            starting = registry.all();
        }
        log.info("raft node {}: stopped while starting; {} groups give up their recovery", config.nodeId,
                starting.size());
        for (RaftGroup g : starting) {
            g.stop();
        }
    }

    private CompletableFuture<Void> addGroup0(RaftServerConfig.GroupSpec spec) {
        return startGroup(spec.groupId, spec.stateMachine, new Members(spec.members), spec.preferredLeaderId);
    }

    private synchronized CompletableFuture<Void> startGroup(int groupId, Supplier<? extends StateMachine> sm,
                                                            Members members, int preferredLeaderId) {
        if (startCutShort) {
            throw new StoppedException("raft node " + config.nodeId + " was stopped while starting;"
                    + " group " + groupId + " is not started");
        }
        RaftGroup g = newGroup(groupId, sm, members);
        g.setPreferredLeader(preferredLeaderId);
        registry.add(g);
        return g.start();
    }

    /** A group on the next dispatcher in turn; remembered for {@link #restartGroup}. */
    private synchronized RaftGroup newGroup(int groupId, Supplier<? extends StateMachine> sm, Members members) {
        Dispatcher d = dispatchers[nextDispatcher];
        nextDispatcher = (nextDispatcher + 1) % dispatchers.length;
        RaftGroup g = new RaftGroup(groupId, config.nodeId, members, sm.get(), config.raft, groupDir(groupId), d, logIo,
                callbackExecutor(), transport, fsyncGate, journal);
        startedWith.put(groupId, new GroupStart(sm, members));
        return g;
    }

    /** Where the embedding's futures complete, and a restart makes its new state machine. */
    private Executor callbackExecutor() {
        return config.callbackExecutor != null ? config.callbackExecutor : ForkJoinPool.commonPool();
    }

    private java.nio.file.Path groupDir(int groupId) {
        return config.dataDir.resolve("group-" + groupId);
    }

    /**
     * Adds a group to this running node, or finds it when it is already here (idempotent): its
     * data directory is reused if it exists (the group recovers its log and snapshots), else
     * created. {@code members} is the configuration to start from; a node joining an existing group
     * passes the group's current voters (it learns later changes from the leader's log). Completes
     * when the group runs. Any thread.
     */
    public CompletableFuture<RaftGroup> addGroup(int groupId, Supplier<? extends StateMachine> stateMachine,
                                                 Members members) {
        return addGroup(groupId, stateMachine, members, 0);
    }

    /**
     * {@link #addGroup(int, Supplier, Members)} with the group's preferred leader
     * ({@link RaftGroup#setPreferredLeader}; 0: none), set before the group starts. A group found
     * here already keeps its own setting.
     */
    public CompletableFuture<RaftGroup> addGroup(int groupId, Supplier<? extends StateMachine> stateMachine,
                                                 Members members, int preferredLeaderId) {
        if (preferredLeaderId < 0) {
            throw new IllegalArgumentException("a preferred leader is a node id, or 0 for none: " + preferredLeaderId);
        }
        synchronized (this) {
            // under the lock stop() takes to set STOPPING: a group added here is in the list doStop
            // stops, or the node is seen stopping and nothing is added (a group started after the
            // stop took its list would run on stopped dispatchers, its files never closed)
            checkRunning();
            CompletableFuture<RaftGroup> restart = restarts.get(groupId);
            if (restart != null) {
                return restart;
            }
            RaftGroup existing = registry.get(groupId);
            if (existing != null) {
                return existing.startedFuture().thenApply(v -> existing);
            }
            if (removing.containsKey(groupId) || removals.containsKey(groupId)) {
                // its predecessor may still write to the directory, or a removal is deleting it:
                // two stores on one log, or a store on files being deleted
                CompletableFuture<RaftGroup> refused = new CompletableFuture<>();
                refused.completeExceptionally(new IllegalStateException("raft group " + groupId + " on node "
                        + config.nodeId + " is still being removed (its files are in use: a slow or hung disk?), or"
                        + " its removal failed (the node's log says why and what to do); add it again once a"
                        + " removal has completed"));
                return refused;
            }
            RaftGroup[] added = new RaftGroup[1];
            CompletableFuture<Void> begun = startGroup(groupId, stateMachine, members, preferredLeaderId);
            added[0] = registry.get(groupId);
            RaftGroup g = added[0];
            // A group whose start failed is not left listed (it would swallow every request sent to it,
            // and an addGroup made once the cause is fixed would get the old failure): the caller hears
            // of the failure once the group is unlisted and its files are released.
            CompletableFuture<Void> started = new CompletableFuture<>();
            begun.whenComplete((v, e) -> {
                if (e == null) {
                    started.complete(null);
                } else {
                    forgetFailedStart(groupId, g).whenComplete((x, y) -> started.completeExceptionally(e));
                }
            });
            log.info("raft node {}: added group {} with configuration {}", config.nodeId, groupId, members);
            if (config.layoutListener == null) {
                return started.thenApply(v -> added[0]);
            }
            return started.thenApplyAsync(v -> {
                layoutChanged("adding", groupId);
                return added[0];
            }, logIo);
        }
    }

    /** Unlists a group added at runtime whose start failed, and completes once its files are released. */
    private CompletableFuture<Void> forgetFailedStart(int groupId, RaftGroup g) {
        synchronized (this) {
            if (registry.get(groupId) != g) {
                return CompletableFuture.completedFuture(null);   // removed or replaced meanwhile
            }
            registry.remove(groupId);
            startedWith.remove(groupId);
            removing.put(groupId, g);
        }
        log.warn("raft node {}: group {} failed to start and is not added; fix the cause and add it again",
                config.nodeId, groupId);
        return filesReleased(g, "unlisting the failed start of").thenRun(() -> {
            synchronized (this) {
                removing.remove(groupId, g);
            }
        });
    }

    /**
     * Runs the layout listener on a log I/O thread for a change made by an admin command (a preferred
     * leader): the command is answered once the change is recorded, as an added group is.
     */
    CompletableFuture<Void> recordLayout(String what, int groupId) {
        if (config.layoutListener == null) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> layoutChanged(what, groupId), logIo);
    }

    private void layoutChanged(String what, int groupId) {
        try {
            config.layoutListener.run();
        } catch (RuntimeException e) {
            log.warn("raft node {}: recording the layout after {} group {} failed", config.nodeId, what, groupId, e);
        }
    }

    /**
     * Removes a group from this running node (idempotent: a group not here is removed already). Its
     * fibers stop as in {@link RaftGroup#stop()}; with {@code deleteData} its directory (log,
     * snapshots, status) is deleted afterwards. Removing a group from one node does not change the
     * group's configuration: take the node out with a membership change first. Any thread.
     */
    public CompletableFuture<Void> removeGroup(int groupId, boolean deleteData) {
        checkRunning();
        RaftGroup g;
        CompletableFuture<RaftGroup> restart;
        boolean first;
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            g = registry.remove(groupId);
            startedWith.remove(groupId);
            restart = restarts.remove(groupId);
            first = g != null;
            if (g != null) {
                removing.put(groupId, g);
            } else {
                CompletableFuture<Void> earlier = removals.get(groupId);
                if (earlier != null) {
                    // one removal of a group at a time: two would delete its directory at once, and
                    // the first to end would unmark it while the other still deletes. This one goes
                    // on once the earlier has ended, however it ended (and then finds the group removed)
                    return earlier.handle((v, e) -> null).thenCompose(v -> removeGroup(groupId, deleteData));
                }
                // removed already, but perhaps not done (a failed journal checkpoint, an unlisted
                // failed start): wait for its files again
                g = removing.get(groupId);
            }
            removals.put(groupId, done);
        }
        if (restart != null) {
            // the removal wins; failed now, so an addGroup made next starts the group anew instead
            // of joining a restart that can only fail
            restart.completeExceptionally(new IllegalStateException("raft group " + groupId + " on node "
                    + config.nodeId + " was removed while it restarted; not started again"));
        }
        // Done when the group's last file operation ended, not only its fibers: the caller may add
        // the group again on the same directory next, or the directory is deleted below. The group
        // stays marked as being removed until then, and with deleteData until its directory is
        // moved aside and the journal checkpointed past it: an addGroup in between is refused, where
        // it would otherwise start on files about to be deleted (or rewritten by a replay).
        RaftGroup old = g;
        Runnable unmark = () -> {
            if (old != null) {
                synchronized (this) {
                    removing.remove(groupId, old);
                }
            }
        };
        CompletableFuture<Void> stopped = g == null ? CompletableFuture.completedFuture(null)
                : filesReleased(g, "removing");
        if (first && config.layoutListener != null) {
            stopped = stopped.thenRunAsync(() -> layoutChanged("removing", groupId), logIo);
        }
        CompletableFuture<Void> removed;
        if (!deleteData && journal == null) {
            removed = stopped.thenRun(unmark);
        } else if (!deleteData) {
            // a checkpoint here too: this removal may follow one whose checkpoint failed (the group
            // then stays marked), and unmarking without one would let a group added again get the
            // old group's records at the next start's replay
            removed = stopped.thenRunAsync(() -> {
                checkpointJournalAfterRemoving(groupId);
                unmark.run();
            }, logIo);
        } else {
            java.nio.file.Path dir = groupDir(groupId);
            removed = stopped.thenRunAsync(() -> {
                java.io.IOException deletion = null;
                try {
                    deleteGroupDirectory(groupId, dir);
                } catch (java.io.IOException e) {
                    deletion = e;
                }
                try {
                    checkpointJournalAfterRemoving(groupId);
                } catch (RuntimeException e) {
                    if (deletion != null) {
                        e.addSuppressed(deletion);
                    }
                    throw e;   // the mark stays: the error says to restart the node first
                }
                // Whatever the deletion did, group-<id> is gone or whole: the rename that starts it
                // is atomic. A group added next starts empty, or on the intact old files.
                unmark.run();
                if (deletion != null && Files.exists(dir)) {
                    throw new java.io.UncheckedIOException("raft group " + groupId + " was removed from node "
                            + config.nodeId + ", but moving its data aside to delete it failed (" + deletion + "): "
                            + dir + " is kept whole, and adding the group again starts on it; delete it by hand"
                            + " (with the group not added) if it is not wanted", deletion);
                }
                if (deletion != null) {
                    throw new java.io.UncheckedIOException("raft group " + groupId + " was removed from node "
                            + config.nodeId + ", but deleting its data failed (" + deletion + "); delete "
                            + removedDir(groupId) + " by hand, or let the node's next start delete it", deletion);
                }
            }, logIo);
        }
        // unlisted before it completes: a removal chained on this one (above) must not find it again
        removed.whenComplete((v, e) -> {
            synchronized (this) {
                removals.remove(groupId, done);
            }
            if (e == null) {
                done.complete(null);
            } else {
                done.completeExceptionally(e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                        ? e.getCause() : e);
            }
        });
        return done;
    }

    /**
     * Stops group {@code groupId} on this node and starts it again from its directory (log,
     * snapshots, status), with a state machine made anew by the supplier the group was first
     * started with: what a group that failed ({@link RaftGroup#failure()}, e.g. its disk filled)
     * needs once the cause is fixed, without stopping the node's other groups. The new group
     * recovers what is really on disk and catches up from the leader like a restarted node.
     *
     * <p>The stopping group stays listed (requests meanwhile are answered STOPPING, and the node's
     * layout keeps it) until the new one replaces it. Completes with the new group once it runs;
     * a second call while one is in progress returns the same future. Fails when the group is not
     * hosted here ({@link IllegalArgumentException}), when it is removed meanwhile, or when its old
     * file operations do not end within {@value #FILES_RELEASE_TIMEOUT_SECONDS} s (a hung disk: the
     * group is then left stopped and listed; ask again once the disk answers). The supplier runs on
     * the node's callback executor ({@link RaftServerConfig.Builder#callbackExecutor}, default the
     * common pool), never on a raft dispatcher or log I/O thread. Any thread.
     */
    public CompletableFuture<RaftGroup> restartGroup(int groupId) {
        checkRunning();
        RaftGroup old;
        GroupStart how;
        CompletableFuture<RaftGroup> restarted;
        synchronized (this) {
            CompletableFuture<RaftGroup> inProgress = restarts.get(groupId);
            if (inProgress != null) {
                return inProgress;
            }
            old = registry.get(groupId);
            how = startedWith.get(groupId);
            if (old == null || how == null) {
                throw new IllegalArgumentException("node " + config.nodeId + " does not host raft group " + groupId);
            }
            restarted = new CompletableFuture<>();
            restarts.put(groupId, restarted);
        }
        Throwable failure = old.failure();
        log.info("raft node {}: restarting group {}{}", config.nodeId, groupId,
                failure == null ? "" : " (it had failed: " + failure + ")");
        // Async on the executor the embedding's futures complete on: the old group's files are
        // released on its dispatcher thread (or a log I/O thread), and the supplier below is the
        // embedding's code, which must not block a raft thread or find another group's per-thread
        // state there. addGroup runs it on its caller's thread, which has long returned here.
        filesReleased(old, "restarting").whenCompleteAsync((v, e) -> {
            CompletableFuture<Void> started;
            RaftGroup fresh;
            synchronized (this) {
                if (e != null) {
                    restarts.remove(groupId, restarted);
                    restarted.completeExceptionally(e);
                    return;
                }
                if (registry.get(groupId) != old || !isRunning()) {
                    restarts.remove(groupId, restarted);
                    restarted.completeExceptionally(new IllegalStateException("raft group " + groupId + " on node "
                            + config.nodeId + " was removed, or the node stopped, while it restarted; not started again"));
                    return;
                }
                try {
                    fresh = newGroup(groupId, how.stateMachine, how.members);
                    fresh.setPreferredLeader(old.preferredLeader());   // set at start or since: it stays
                    registry.replace(old, fresh);
                    started = fresh.start();
                } catch (RuntimeException | Error t) {
                    // the supplier could not make a state machine, say: the old group stays listed,
                    // stopped, and the restart can be asked for again
                    restarts.remove(groupId, restarted);
                    log.error("raft node {}: group {} could not be started again: {}", config.nodeId, groupId,
                            t.toString(), t);
                    restarted.completeExceptionally(t);
                    return;
                }
            }
            started.whenComplete((x, startError) -> {
                // the entry stays until the new group runs, so a second call meanwhile joins this one
                synchronized (this) {
                    restarts.remove(groupId, restarted);
                }
                if (startError != null) {
                    log.error("raft node {}: group {} did not start again: {}", config.nodeId, groupId,
                            startError.toString());
                    restarted.completeExceptionally(startError);
                } else {
                    log.info("raft node {}: group {} restarted", config.nodeId, groupId);
                    restarted.complete(fresh);
                }
            });
        }, callbackExecutor());
        return restarted;
    }

    /** Stops {@code g} and completes when its last file operation ended, or fails after the timeout. */
    private CompletableFuture<Void> filesReleased(RaftGroup g, String doing) {
        g.stop();
        return g.whenFilesReleased().orTimeout(FILES_RELEASE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .exceptionally(e -> {
                    if (e instanceof TimeoutException) {
                        throw new java.util.concurrent.CompletionException(new PoyangException(doing + " raft group "
                                + g.groupId() + " on node " + config.nodeId + ": its file operations still run "
                                + FILES_RELEASE_TIMEOUT_SECONDS + " s after it stopped (a hung disk?); ask again once the disk answers,"
                                + " or restart the node"));
                    }
                    throw e instanceof java.util.concurrent.CompletionException
                            ? (java.util.concurrent.CompletionException) e
                            : new java.util.concurrent.CompletionException(e);
                });
    }

    /**
     * A group added again under this id makes files of the same names as the removed one's: the
     * journal's records of those must never be replayed into them, so the journal checkpoints past
     * them (also after a deletion that failed half way).
     */
    private void checkpointJournalAfterRemoving(int groupId) {
        LogJournal j = journal;
        if (j == null) {
            return;
        }
        try {
            j.checkpoint();
        } catch (java.io.IOException | RuntimeException e) {
            throw new java.io.UncheckedIOException("raft group " + groupId + " was removed, but the log journal's"
                    + " checkpoint after it failed (" + e + "); restart node " + config.nodeId + " before adding group "
                    + groupId + " to it again", e instanceof java.io.IOException ? (java.io.IOException) e
                    : new java.io.IOException(e));
        }
    }

    /** Where a removed group's directory is moved before it is deleted ({@link #deleteGroupDirectory}). */
    private java.nio.file.Path removedDir(int groupId) {
        return config.dataDir.resolve("group-" + groupId + REMOVED_SUFFIX);
    }

    private static final String REMOVED_SUFFIX = ".removed";

    /**
     * Moves a removed group's directory aside (one atomic rename, the data directory synced) and
     * deletes it there: a deletion cut short (an I/O error, a crash) leaves no half-deleted
     * {@code group-<id>} for a group added again (now or after a restart) to start on, only a
     * {@code group-<id>.removed} that the next start deletes ({@link #deleteLeftoverRemovals}).
     */
    private void deleteGroupDirectory(int groupId, java.nio.file.Path dir) throws java.io.IOException {
        java.nio.file.Path aside = removedDir(groupId);
        if (Files.exists(dir)) {
            deleteTree(aside);   // an earlier removal's leftover: the rename needs the name
            config.raft.logFileIo().atomicMove(dir, aside);
            config.raft.logFileIo().syncDirectory(config.dataDir);
        }
        deleteTree(aside);
        log.info("raft node {}: removed group {} and deleted {}", config.nodeId, groupId, dir);
    }

    /** Deletes what removals cut short left ({@code group-<id>.removed}); at start, before any group opens. */
    private void deleteLeftoverRemovals() {
        try (java.util.stream.Stream<java.nio.file.Path> dirs = Files.list(config.dataDir)) {
            java.util.List<java.nio.file.Path> leftovers = new ArrayList<>();
            dirs.filter(d -> d.getFileName().toString().matches("group-[0-9]+" + java.util.regex.Pattern.quote(REMOVED_SUFFIX)))
                    .forEach(leftovers::add);
            for (java.nio.file.Path d : leftovers) {
                try {
                    deleteTree(d);
                    log.info("raft node {}: deleted {}, left by a removal cut short", config.nodeId, d);
                } catch (java.io.IOException e) {
                    log.warn("raft node {}: deleting {} (left by a removal cut short) failed: {}; delete it by hand",
                            config.nodeId, d, e.toString());
                }
            }
        } catch (java.io.IOException e) {
            log.warn("raft node {}: listing {} failed: {}", config.nodeId, config.dataDir, e.toString());
        }
    }

    /** Deletes a removed group's directory, through the groups' {@code FileIo} like every other delete of their files. */
    private void deleteTree(java.nio.file.Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        java.util.List<java.nio.file.Path> all = new ArrayList<>();
        try (java.util.stream.Stream<java.nio.file.Path> paths = Files.walk(dir)) {
            paths.forEach(all::add);
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();   // a subdirectory the walk could not read: an I/O error like the others
        }
        java.util.Collections.reverse(all);   // children before their directories
        for (java.nio.file.Path p : all) {
            config.raft.logFileIo().delete(p);
        }
    }

    /** Forgets another node's address (it left the cluster); its connection closes. Any thread. */
    public void removeNodeAddress(int nodeId) {
        checkRunning();
        if (nodeId == config.nodeId) {
            throw new IllegalArgumentException("node " + nodeId + " is this node");
        }
        transport.removeAddress(nodeId);
    }

    /** The replication addresses of the other nodes this node knows, by node id. */
    public Map<Integer, String> nodeAddresses() {
        return transport.addresses();
    }

    /**
     * The other nodes whose replication address reaches another node (their handshake named another
     * id, or that node refused ours), with the reason, by node id; empty when none. Nothing is sent
     * to them until the address is corrected ({@link #setNodeAddress}), so their votes and
     * acknowledgements never count twice. For health checks and metrics.
     */
    public Map<Integer, String> misaddressedNodes() {
        ReplicationTransport t = transport;
        return t == null ? java.util.Collections.emptyMap() : t.misaddressed();
    }

    /** This node's replication address as others reach it: the configured host and the port listened on. */
    public String selfAddress() {
        String configured = config.nodes.get(config.nodeId);
        return configured.substring(0, configured.lastIndexOf(':')) + ":" + replicationServer.port();
    }

    @Override
    protected void doStop() throws Exception {
        if (serviceServer != null) {
            serviceServer.stop();
        }
        List<CompletableFuture<Void>> stops = new ArrayList<>();
        List<RaftGroup> all;
        synchronized (this) {
            // a restart that has not replaced its group yet sees the node stopping and gives up;
            // one that has, put its new group here before this list is taken
            all = registry.all();
        }
        for (RaftGroup g : all) {
            stops.add(g.stop());
        }
        for (int i = 0; i < stops.size(); i++) {
            int groupId = all.get(i).groupId();
            try {
                stops.get(i).get(30, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                log.warn("raft node {}: group {} did not stop within 30 s", config.nodeId, groupId);
            } catch (ExecutionException e) {
                log.warn("raft node {}: group {} failed to stop cleanly", config.nodeId, groupId, e.getCause());
            }
        }
        if (replicationServer != null) {
            replicationServer.stop();
        }
        if (replicationClient != null) {
            replicationClient.stop();
        }
        if (transport != null) {
            transport.close();
        }
        if (dispatchers != null) {
            for (Dispatcher d : dispatchers) {
                if (d != null) {
                    d.stop();
                }
            }
        }
        for (ServiceExtension ext : config.serviceExtensions) {
            try {
                ext.uninstall(this);
            } catch (Exception e) {
                log.warn("raft node {}: a service extension failed to uninstall", config.nodeId, e);
            }
        }
        if (journal != null) {
            try {
                journal.close();
            } catch (Exception e) {
                log.warn("raft node {}: closing the log journal failed; the next start replays it", config.nodeId, e);
            }
        }
        if (logIo != null) {
            // shutdown, not shutdownNow: interrupting a thread inside a FileChannel call closes the channel
            logIo.shutdown();
            if (!logIo.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("raft node {}: log I/O threads did not finish within 30 s", config.nodeId);
            }
        }
        log.info("raft node {} stopped", config.nodeId);
    }

    /** fsyncs of the node's log journal so far; 0 when it has none ({@link RaftServerConfig.Builder#logJournal}). */
    public long logJournalFsyncCount() {
        LogJournal j = journal;
        return j == null ? 0 : j.fsyncCount();
    }

    /**
     * What the node's log journal has done since the node started (fsyncs, records, checkpoints,
     * whether it failed), for metrics; null when the node has none ({@link RaftServerConfig.Builder#logJournal}
     * off, or not started).
     */
    public LogJournalStats logJournalStats() {
        LogJournal j = journal;
        return j == null ? null : LogJournalStats.of(j);
    }

    /** The group with this id on this node, or null. */
    public RaftGroup group(int groupId) {
        return registry.get(groupId);
    }

    /** The groups on this node. */
    public List<RaftGroup> groups() {
        return registry.all();
    }

    /** Traffic of the service (client) port since start, for metrics. */
    public io.poyang.net.NetTraffic serviceTraffic() {
        NioServer s = serviceServer;
        return s == null ? new io.poyang.net.NetTraffic(0, 0, 0, 0, 0, 0) : s.traffic();
    }

    /** Traffic of the replication port (peers' requests to this node, admin commands) since start. */
    public io.poyang.net.NetTraffic replicationTraffic() {
        NioServer s = replicationServer;
        return s == null ? new io.poyang.net.NetTraffic(0, 0, 0, 0, 0, 0) : s.traffic();
    }

    /** Traffic of this node's connections to its peers (its replication requests and their answers). */
    public io.poyang.net.NetTraffic replicationClientTraffic() {
        NioClient c = replicationClient;
        return c == null ? new io.poyang.net.NetTraffic(0, 0, 0, 0, 0, 0) : c.traffic();
    }

    /** Requests this node sent to its peers and not yet answered. */
    public int replicationRequestsPending() {
        NioClient c = replicationClient;
        return c == null ? 0 : c.pendingRequests();
    }

    /**
     * I/O threads that crashed (a bug, logged as an IMPOSSIBLE STATE; their connections were
     * closed), by port: {@code service}, {@code replication}, {@code replication_client}; on a
     * node with the log journal also its threads, {@code log_journal} (the writer) and
     * {@code log_journal_checkpoint}, whose crash (an Error, not a failed disk operation) failed the
     * journal and so every group's log. For metrics; see {@link #ioProblem()}.
     */
    public Map<String, Integer> crashedIoThreads() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        m.put("service", serviceServer == null ? 0 : serviceServer.crashedWorkers());
        m.put("replication", replicationServer == null ? 0 : replicationServer.crashedWorkers());
        m.put("replication_client", replicationClient == null ? 0 : replicationClient.crashedWorkers());
        LogJournal j = journal;
        if (j != null) {
            m.put("log_journal", j.crashedWriterThreads());
            m.put("log_journal_checkpoint", j.crashedCheckpointThreads());
        }
        return m;
    }

    /**
     * Why this node no longer serves as it should because an I/O thread crashed, or its log journal
     * failed, or null: for health checks. A crashed service thread closed its clients' connections
     * (with one thread, the port takes no new ones); a crashed replication thread cut this node off
     * from some peers; a failed journal ({@link RaftServerConfig.Builder#logJournal}: a failed write,
     * fsync or checkpoint, or a crash of its threads) fails every group's log on the node, and
     * restarting a group does not help. Restart the node (after a crash, report the IMPOSSIBLE STATE
     * from its log; after a journal failure, fix the disk first).
     */
    public String ioProblem() {
        StringBuilder b = new StringBuilder();
        String[] names = {"service", "replication", "replication_client"};
        io.poyang.net.NioNode[] nodes = {serviceServer, replicationServer, replicationClient};
        for (int i = 0; i < nodes.length; i++) {
            io.poyang.net.NioNode n = nodes[i];
            int crashed = n == null ? 0 : n.crashedWorkers();
            if (crashed > 0) {
                b.append(b.length() > 0 ? "; " : "").append(crashed).append(" of ").append(n.workerCount())
                        .append(" I/O thread").append(n.workerCount() == 1 ? "" : "s").append(" of the ")
                        .append(names[i].replace('_', ' ')).append(i == 2 ? "" : " port").append(" crashed");
            }
        }
        String threads = b.length() == 0 ? null : b + " (an IMPOSSIBLE STATE in the log: report it); their connections"
                + " were closed; restart the node";
        LogJournal j = journal;
        Throwable journalFailure = j == null ? null : j.failure();
        String journalProblem = journalFailure == null ? null : "the log journal failed (" + journalFailure + "), and"
                + " every group's log on this node fails with it; fix the disk (space, kernel log), then restart the node";
        if (threads == null) {
            return journalProblem;
        }
        return journalProblem == null ? threads : threads + "; " + journalProblem;
    }

    /** The dispatcher threads the groups run on (for their counters: rounds, steps, parks). */
    public List<Dispatcher> dispatchers() {
        Dispatcher[] d = dispatchers;
        return d == null ? java.util.Collections.emptyList() : java.util.Arrays.asList(d.clone());
    }

    /** The replication port listened on (the chosen one when configured with 0). */
    public int replicationPort() {
        return replicationServer.port();
    }

    /** The service (client) port listened on (the chosen one when configured with 0). */
    public int servicePort() {
        return serviceServer.port();
    }

    /** Most connections the replication and the service port take at once (0: no limit); they share the descriptors. */
    public int[] connectionLimits() {
        return new int[]{replicationServer.connectionLimit(), serviceServer.connectionLimit()};
    }

    /** Sets or changes the replication address of another node ("host:port"). Any thread. */
    public void setNodeAddress(int nodeId, String hostPort) {
        checkRunning();
        if (nodeId == config.nodeId) {
            throw new IllegalArgumentException("node " + nodeId + " is this node; its address is fixed at start");
        }
        if (nodeId <= 0) {
            throw new IllegalArgumentException("node ids are positive: " + nodeId);
        }
        String problem = io.poyang.net.HostPort.problem(hostPort, false);
        if (problem != null) {
            // checked before anything changes: the transport would drop the old peer first
            throw new IllegalArgumentException("the replication address of node " + nodeId + ": " + problem);
        }
        synchronized (addressLock) {
            // The mistake caught early, with the ids in the message. An address that reaches
            // another node under another spelling (a host name, a moved host) gets past this; the
            // handshake catches it: it names the node meant and the node there refuses.
            if (hostPort.equals(selfAddress()) || hostPort.equals(config.nodes.get(config.nodeId))) {
                throw new IllegalArgumentException(hostPort + " is the address of node " + config.nodeId
                        + ", the node asked; node " + nodeId + " needs an address of its own");
            }
            for (Map.Entry<Integer, String> e : transport.addresses().entrySet()) {
                if (e.getKey() != nodeId && e.getValue().equals(hostPort)) {
                    throw new IllegalArgumentException(hostPort + " is already the address of node " + e.getKey()
                            + "; one address cannot serve two nodes (remove node " + e.getKey() + " first if it moved)");
                }
            }
            transport.setAddress(nodeId, hostPort);
        }
    }

    private static InetSocketAddress parse(String hostPort) {
        int i = hostPort.lastIndexOf(':');
        if (i <= 0) {
            throw new IllegalArgumentException("expected host:port, got '" + hostPort + "'");
        }
        return InetSocketAddress.createUnresolved(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1)));
    }

    private static void await(CompletableFuture<?> f, String what) throws Exception {
        try {
            f.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception) {
                throw (Exception) c;
            }
            throw new PoyangException("failed waiting for " + what + ": " + c, c);
        } catch (TimeoutException e) {
            throw new PoyangException("timed out after " + START_TIMEOUT_SECONDS + " s waiting for " + what);
        }
    }

    /** The replication side (tests read its batch counters). */
    ReplicationTransport replicationTransport() {
        return transport;
    }
}
