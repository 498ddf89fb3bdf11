package io.poyang.raft.server;

import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.sm.StateMachine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Everything a {@link RaftServer} needs, built with {@link RaftServer#builder()}: this node's id,
 * the replication address of every node, the service port, the data directory, the groups it
 * hosts with their state machines, thread counts, and the raft timing ({@link RaftConfig}).
 */
public final class RaftServerConfig {

    final int nodeId;
    final String clusterName;
    final Map<Integer, String> nodes;
    final String serviceHost;
    /** The host the replication port listens on when it differs from this node's address (null: that address). */
    final String replicationBindHost;
    final int servicePort;
    final Path dataDir;
    final int dispatchers;
    final int logIoThreads;
    final int serviceIoThreads;
    final int replicationIoThreads;
    final int fsyncPermits;
    final RaftConfig raft;
    final List<GroupSpec> groups;
    final FaultInjector faultInjector;
    final boolean batchAppends;
    final boolean logJournal;
    /** The log journal's file count when {@link Builder#logJournalFiles} is not called. */
    public static final int DEFAULT_LOG_JOURNAL_FILES = 8;
    /** The size of a log journal file, in bytes, when {@link Builder#logJournalFiles} is not called. */
    public static final long DEFAULT_LOG_JOURNAL_FILE_BYTES = 16L << 20;
    final int logJournalFiles;
    final long logJournalFileBytes;
    /** False only in tests that play a node of a version without APPEND_ENTRIES_BATCH. */
    final boolean takeBatchedAppends;
    final io.poyang.common.TimeSource timeSource;
    final Runnable layoutListener;
    final Executor callbackExecutor;
    final IntFunction<? extends StateMachine> stateMachineFactory;
    final List<ServiceExtension> serviceExtensions;

    private RaftServerConfig(Builder b) {
        this.nodeId = b.nodeId;
        this.clusterName = b.clusterName;
        this.nodes = Collections.unmodifiableMap(new LinkedHashMap<>(b.nodes));
        this.serviceHost = b.serviceHost;
        this.replicationBindHost = b.replicationBindHost;
        this.servicePort = b.servicePort;
        this.dataDir = b.dataDir;
        this.dispatchers = b.dispatchers;
        this.logIoThreads = b.logIoThreads;
        this.serviceIoThreads = b.serviceIoThreads;
        this.replicationIoThreads = b.replicationIoThreads;
        this.fsyncPermits = b.fsyncPermits;
        this.raft = b.raft;
        this.groups = Collections.unmodifiableList(new ArrayList<>(b.groups));
        this.faultInjector = b.faultInjector;
        this.batchAppends = b.batchAppends;
        this.logJournal = b.logJournal;
        this.logJournalFiles = b.logJournalFiles;
        this.logJournalFileBytes = b.logJournalFileBytes;
        this.takeBatchedAppends = b.takeBatchedAppends;
        this.timeSource = b.timeSource;
        this.layoutListener = b.layoutListener;
        this.callbackExecutor = b.callbackExecutor;
        this.stateMachineFactory = b.stateMachineFactory;
        this.serviceExtensions = Collections.unmodifiableList(new ArrayList<>(b.serviceExtensions));
    }

    public int nodeId() {
        return nodeId;
    }

    /** The cluster's name, or null when none was given. */
    public String clusterName() {
        return clusterName;
    }

    public Map<Integer, String> nodes() {
        return nodes;
    }

    public Path dataDir() {
        return dataDir;
    }

    public RaftConfig raft() {
        return raft;
    }

    public List<GroupSpec> groups() {
        return groups;
    }

    /** Whether the node's groups write through one log journal ({@link Builder#logJournal}). */
    public boolean logJournal() {
        return logJournal;
    }

    /** How many files the log journal has ({@link Builder#logJournalFiles}). */
    public int logJournalFiles() {
        return logJournalFiles;
    }

    /** The size of each log journal file, in bytes ({@link Builder#logJournalFiles}). */
    public long logJournalFileBytes() {
        return logJournalFileBytes;
    }

    /** Whether a dispatcher round's AppendEntries to one node leave as one frame ({@link Builder#batchAppends}). */
    public boolean batchAppends() {
        return batchAppends;
    }

    /** A group to host: its id, its voting members, where its state machine comes from, its preferred leader. */
    public static final class GroupSpec {
        final int groupId;
        final int[] members;
        final Supplier<? extends StateMachine> stateMachine;
        /** See {@link Builder#preferredLeader}; 0: none. */
        int preferredLeaderId;

        GroupSpec(int groupId, int[] members, Supplier<? extends StateMachine> stateMachine) {
            this.groupId = groupId;
            this.members = members.clone();
            this.stateMachine = stateMachine;
        }

        public int groupId() {
            return groupId;
        }

        public int[] members() {
            return members.clone();
        }

        /** The node the group's leadership is kept on ({@link Builder#preferredLeader}); 0: none. */
        public int preferredLeaderId() {
            return preferredLeaderId;
        }
    }

    /** Builds a {@link RaftServer}; see the setters for defaults. */
    public static final class Builder {
        private int nodeId;
        private String clusterName;
        private final Map<Integer, String> nodes = new LinkedHashMap<>();
        private String serviceHost = null;
        private String replicationBindHost = null;
        private int servicePort = 9432;
        private Path dataDir;
        private int dispatchers = Runtime.getRuntime().availableProcessors();
        private int logIoThreads = 4;
        private int serviceIoThreads = 1;
        private int replicationIoThreads = 1;
        private int fsyncPermits = 0;
        private RaftConfig raft = new RaftConfig();
        private final List<GroupSpec> groups = new ArrayList<>();
        private final List<ServiceExtension> serviceExtensions = new ArrayList<>();
        private FaultInjector faultInjector;
        private boolean batchAppends;
        private boolean logJournal;
        private int logJournalFiles = DEFAULT_LOG_JOURNAL_FILES;
        private long logJournalFileBytes = DEFAULT_LOG_JOURNAL_FILE_BYTES;
        private boolean takeBatchedAppends = true;
        private io.poyang.common.TimeSource timeSource = io.poyang.common.TimeSource.SYSTEM;
        private Runnable layoutListener;
        private Executor callbackExecutor;
        private IntFunction<? extends StateMachine> stateMachineFactory;

        Builder() {
        }

        /** This node's id (positive, unique in the cluster). Required. */
        public Builder nodeId(int nodeId) {
            this.nodeId = nodeId;
            return this;
        }

        /**
         * The cluster's name, the same on every node of it (default: none). Every connection between
         * nodes names it, and a node refuses one from a node of another cluster: two clusters whose
         * node ids overlap then cannot take each other's nodes for their own through a wrong
         * address (the node id check alone would let node 2 of one cluster stand in for node 2 of
         * the other). At most 64 printable ASCII characters; null or empty names none.
         */
        public Builder clusterName(String name) {
            this.clusterName = name == null || name.isEmpty() ? null : name;
            return this;
        }

        /**
         * A node of the cluster and its replication address ("host:port"), this node included (its
         * port is where it listens; 0 picks a free one). Port 0 for another node means "not known
         * yet": set it later with {@link RaftServer#setNodeAddress}.
         */
        public Builder node(int nodeId, String replicationHostPort) {
            nodes.put(nodeId, replicationHostPort);
            return this;
        }

        /**
         * Listens for replication on {@code host} (such as 0.0.0.0, every interface) while this node's
         * address in {@link #node} stays the one other nodes reach it by, and what it tells them.
         * Default: the host of that address.
         */
        public Builder replicationBindHost(String host) {
            this.replicationBindHost = host;
            return this;
        }

        /** Where clients connect (default port 9432 on all interfaces; 0 picks a free one). */
        public Builder servicePort(String host, int port) {
            this.serviceHost = host;
            this.servicePort = port;
            return this;
        }

        public Builder servicePort(int port) {
            return servicePort(null, port);
        }

        /** The node's data directory; each group keeps its files in {@code group-<id>/} under it. Required. */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** Dispatcher threads the groups are spread over (default: the number of cores). */
        public Builder dispatchers(int count) {
            this.dispatchers = count;
            return this;
        }

        /** Threads doing the log and snapshot file I/O of all groups (default 4, at least 2). */
        public Builder logIoThreads(int count) {
            this.logIoThreads = count;
            return this;
        }

        /** I/O threads of the client (service) port and of the replication port and client (default 1 each). */
        public Builder ioThreads(int service, int replication) {
            this.serviceIoThreads = service;
            this.replicationIoThreads = replication;
            return this;
        }

        /**
         * fsyncs the node's groups may have in flight at once; 0 (the default) lets every group sync
         * on its own. A bound makes busy groups take turns on the disk, each fsync covering more;
         * measured on this project's machine it saved fsyncs but not CPU, so it is off by default.
         * See {@link io.poyang.raft.store.FsyncGate}.
         */
        public Builder fsyncPermits(int permits) {
            this.fsyncPermits = permits;
            return this;
        }

        /**
         * Writes the node's groups' appends through one log journal (default off): one write and one
         * fsync per round for all the groups of the node, instead of an fsync chain per group; the
         * groups' own log files are fsynced by the journal's checkpoints. The journal lives in
         * {@code <dataDir>/log-journal}; a node started with it off replays and removes a journal
         * left by an earlier run. Only with {@code syncForce}. See {@link io.poyang.raft.store.LogJournal}.
         */
        public Builder logJournal(boolean on) {
            this.logJournal = on;
            return this;
        }

        /**
         * The log journal's shape: {@code files} files (at least 3; default 8) of {@code fileBytes}
         * each (at least 4 MiB; default 16 MiB), made zero-filled when the journal is made. Each
         * file the writer enters starts a checkpoint, which fsyncs the groups' segments written
         * since the last one: smaller files make these flushes smaller and more frequent (with
         * 64 MiB files the p99 latency of raw raft with 4 groups on 3 nodes was about twice as long).
         */
        public Builder logJournalFiles(int files, long fileBytes) {
            this.logJournalFiles = files;
            this.logJournalFileBytes = fileBytes;
            return this;
        }

        /** Raft timing, bounds and caps shared by the groups (timeouts, syncForce, snapshots …). */
        public Builder raftConfig(RaftConfig raft) {
            this.raft = raft;
            return this;
        }

        /** Hosts group {@code groupId} with voting {@code members}; its state machine comes from {@code stateMachine}. */
        public Builder group(int groupId, Supplier<? extends StateMachine> stateMachine, int... members) {
            groups.add(new GroupSpec(groupId, members, stateMachine));
            return this;
        }

        /**
         * Keeps the leadership of group {@code groupId} (listed with {@link #group} before this call)
         * on voter {@code nodeId}: whichever node leads hands the leadership to it once it is caught
         * up, after every failover too ({@link RaftGroup#setPreferredLeader}, which changes it at
         * run time). Give the same on every node of the group. 0 (the default): none.
         */
        public Builder preferredLeader(int groupId, int nodeId) {
            for (GroupSpec g : groups) {
                if (g.groupId == groupId) {
                    check(nodeId >= 0, "preferredLeader of group " + groupId + ": a node id, or 0 for none: " + nodeId);
                    g.preferredLeaderId = nodeId;
                    return this;
                }
            }
            throw new IllegalArgumentException("preferredLeader(" + groupId + ", " + nodeId + "): group " + groupId
                    + " is not listed; add it with group(" + groupId + ", ...) first");
        }

        /**
         * Makes the state machine of a group added at runtime by an admin command (ADMIN_ADD_GROUP,
         * {@code AdminClient.addGroup}), given the group id. Without one (the default) such
         * commands are refused (UNSUPPORTED); {@link RaftServer#addGroup} in code takes its own.
         */
        public Builder stateMachineFactory(IntFunction<? extends StateMachine> factory) {
            this.stateMachineFactory = factory;
            return this;
        }

        /**
         * Whether the AppendEntries that one round of a dispatcher sends to one node, for the
         * several groups it runs (and a follower's pipelined appends), leave as one
         * APPEND_ENTRIES_BATCH frame answered once (default false). It spares a frame, an entry in
         * the pending-request map and an answer per group and round; a lone append leaves as
         * before, so one group runs as without it. Nothing waits on a timer: a batch leaves at the
         * end of the round that made it. But the follower answers the batch once every part is
         * persisted, and with a log per group each part waits for its own log's fsync: the batch's
         * answer waits for the slowest, which costs more than the frames save (DtKV, 3 nodes, 4
         * groups: no gain, docs/benchmarks.md). It is meant for a log shared by a node's groups,
         * whose parts are persisted by one fsync (docs/plans/shared-log.md). A node that does not
         * know the command (an older version) gets its appends one by one.
         */
        public Builder batchAppends(boolean on) {
            this.batchAppends = on;
            return this;
        }

        /** Tests: this node plays one of a version without APPEND_ENTRIES_BATCH (it answers COMMAND_NOT_FOUND). */
        Builder refuseBatchedAppendsForTests() {
            this.takeBatchedAppends = false;
            return this;
        }

        /** Faults on the replication path (tests). */
        public Builder faultInjector(FaultInjector faults) {
            this.faultInjector = faults;
            return this;
        }

        /**
         * The clocks the dispatchers read (default: the system's). Tests step the wall clock with it,
         * as NTP or an operator would, to check nothing counts time by it within a term.
         */
        public Builder timeSource(io.poyang.common.TimeSource time) {
            this.timeSource = java.util.Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * Run after a group was added to or removed from this running node ({@link RaftServer#addGroup},
         * {@link RaftServer#removeGroup}), or an admin command changed a group's preferred leader,
         * before the returned future (or the command's answer) completes, on a log I/O thread:
         * a node that records which groups it runs (its servers.properties) writes the record here, so
         * a change that was answered is still known after a crash. What it throws is logged.
         */
        public Builder layoutListener(Runnable listener) {
            this.layoutListener = listener;
            return this;
        }

        /** Where the futures of embedded writes ({@code RaftGroup.submit}) complete (default: the common pool). */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = executor;
            return this;
        }

        /** Adds application services (processors) to the service port; see {@link ServiceExtension}. */
        public Builder serviceExtension(ServiceExtension extension) {
            serviceExtensions.add(java.util.Objects.requireNonNull(extension, "extension"));
            return this;
        }

        public RaftServerConfig buildConfig() {
            check(nodeId > 0, "nodeId must be positive: " + nodeId);
            String badName = io.poyang.net.Handshake.checkClusterName(clusterName);
            check(badName == null, "clusterName: " + badName);
            check(nodes.containsKey(nodeId), "the nodes must include this node (" + nodeId + ") and its replication"
                    + " address: node(" + nodeId + ", \"host:port\")");
            check(dataDir != null, "a data directory is required: dataDir(path)");
            check(dispatchers >= 1, "dispatchers must be at least 1: " + dispatchers);
            check(logIoThreads >= 2, "logIoThreads must be at least 2 (writes go on while an fsync blocks): "
                    + logIoThreads);
            check(serviceIoThreads >= 1 && replicationIoThreads >= 1, "I/O thread counts must be at least 1");
            check(fsyncPermits >= 0, "fsyncPermits must not be negative: " + fsyncPermits);
            check(logJournalFiles >= 3, "logJournalFiles: the log journal needs at least 3 files: " + logJournalFiles);
            check(logJournalFileBytes >= io.poyang.raft.store.LogJournal.MIN_FILE_BYTES,
                    "logJournalFiles: a log journal file must hold at least "
                            + io.poyang.raft.store.LogJournal.MIN_FILE_BYTES + " bytes: " + logJournalFileBytes);
            check(servicePort >= 0 && servicePort <= 65535, "servicePort out of range: " + servicePort);
            for (Map.Entry<Integer, String> n : nodes.entrySet()) {
                check(n.getKey() > 0, "node ids are positive: node(" + n.getKey() + ", \"" + n.getValue() + "\")");
                // port 0: an address not known yet (a node started on a free port tells the others later)
                String problem = io.poyang.net.HostPort.problem(n.getValue(), true);
                check(problem == null, "the replication address of node " + n.getKey() + ": " + problem);
            }
            raft.validate();
            List<Integer> seen = new ArrayList<>();
            for (GroupSpec g : groups) {
                check(g.groupId > 0, "group ids are positive: " + g.groupId);
                check(!seen.contains(g.groupId), "group " + g.groupId + " is listed twice");
                seen.add(g.groupId);
                check(g.members.length > 0, "group " + g.groupId + " needs members");
                for (int m : g.members) {
                    check(nodes.containsKey(m), "group " + g.groupId + " has member " + m
                            + " but no node(" + m + ", address) was given");
                }
                boolean votes = g.preferredLeaderId == 0;
                for (int m : g.members) {
                    votes |= m == g.preferredLeaderId;
                }
                check(votes, "the preferred leader of group " + g.groupId + ", node " + g.preferredLeaderId
                        + ", is not one of its members " + java.util.Arrays.toString(g.members)
                        + "; only a voting member can lead");
            }
            return new RaftServerConfig(this);
        }

        public RaftServer build() {
            return new RaftServer(buildConfig());
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
