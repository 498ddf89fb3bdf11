package io.poyang.dtkv.server;

import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.FaultInjector;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.RaftServerConfig;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * DtKV nodes in this JVM on loopback: for the demos, the benchmark and tests. Each node is a
 * {@link RaftServer} with a {@link DtKvService} and the DtKV groups {@code 1..groups}, all nodes
 * members of every group; ports are picked by the OS (and kept across a node's restart), data
 * directories live under {@code baseDir}. Production nodes are started from config files
 * ({@code ./poyang server}); this class is the in-process equivalent.
 */
public final class LocalKvCluster implements AutoCloseable {

    private final Path baseDir;
    private final int nodeCount;
    private final int groups;
    private final RaftConfig raftConfig;
    private final int dispatchersPerNode;
    private final FaultInjector faults;
    private final KvConfig kvConfig;
    private final RaftServer[] servers;
    private final DtKvService[] services;
    private final int[] replicationPorts;
    private final int[] servicePorts;
    private boolean deleteOnClose;
    private boolean logJournal;
    private boolean batchAppends;

    /**
     * @param raftConfig the nodes' raft settings (election timeout, syncForce …); each node gets it
     * @param faults     shared by the nodes (tests), or null
     */
    public LocalKvCluster(Path baseDir, int nodeCount, int groups, RaftConfig raftConfig, int dispatchersPerNode,
                          FaultInjector faults, KvConfig kvConfig) {
        if (nodeCount < 1 || groups < 1) {
            throw new IllegalArgumentException("a cluster needs at least one node and one group");
        }
        this.baseDir = baseDir;
        this.nodeCount = nodeCount;
        this.groups = groups;
        this.raftConfig = raftConfig;
        this.dispatchersPerNode = dispatchersPerNode;
        this.faults = faults;
        this.kvConfig = kvConfig == null ? new KvConfig() : kvConfig;
        this.servers = new RaftServer[nodeCount + 1];
        this.services = new DtKvService[nodeCount + 1];
        this.replicationPorts = new int[nodeCount + 1];
        this.servicePorts = new int[nodeCount + 1];
    }

    /** One node, one group, fsync on, in a fresh temp directory removed at {@link #close()}. */
    public static LocalKvCluster singleNode() throws IOException {
        LocalKvCluster c = new LocalKvCluster(Files.createTempDirectory("poyang-dtkv-"), 1, 1, new RaftConfig(),
                1, null, null);
        c.deleteOnClose = true;
        return c;
    }

    /** Deletes the data directories at {@link #close()}. */
    public LocalKvCluster deleteOnClose(boolean delete) {
        this.deleteOnClose = delete;
        return this;
    }

    /**
     * The nodes write their groups' logs through one log journal
     * ({@link RaftServerConfig.Builder#logJournal}; default off). Takes effect for nodes started after.
     */
    public LocalKvCluster logJournal(boolean on) {
        this.logJournal = on;
        return this;
    }

    /**
     * A dispatcher round's AppendEntries to one node leave as one frame
     * ({@link RaftServerConfig.Builder#batchAppends}; default off). Takes effect for nodes started after.
     */
    public LocalKvCluster batchAppends(boolean on) {
        this.batchAppends = on;
        return this;
    }

    public LocalKvCluster start() {
        for (int i = 1; i <= nodeCount; i++) {
            startNode(i);
        }
        return this;
    }

    public void startNode(int id) {
        DtKvService kv = new DtKvService();
        RaftServerConfig.Builder b = RaftServer.builder()
                .nodeId(id)
                .servicePort("127.0.0.1", servicePorts[id])
                .dataDir(baseDir.resolve("node-" + id))
                .dispatchers(dispatchersPerNode)
                .logJournal(logJournal)
                .batchAppends(batchAppends)
                .raftConfig(raftConfig)
                .serviceExtension(kv);
        if (faults != null) {
            b.faultInjector(faults);
        }
        for (int n = 1; n <= nodeCount; n++) {
            b.node(n, "127.0.0.1:" + replicationPorts[n]);
        }
        int[] members = new int[nodeCount];
        for (int n = 0; n < nodeCount; n++) {
            members[n] = n + 1;
        }
        for (int g = 1; g <= groups; g++) {
            b.group(g, kv.stateMachine(g, kvConfig), members);
        }
        RaftServer s = b.build();
        s.start();
        servers[id] = s;
        services[id] = kv;
        replicationPorts[id] = s.replicationPort();
        servicePorts[id] = s.servicePort();
        for (int n = 1; n <= nodeCount; n++) {
            if (n != id && servers[n] != null && servers[n].isRunning()) {
                servers[n].setNodeAddress(id, "127.0.0.1:" + replicationPorts[id]);
                s.setNodeAddress(n, "127.0.0.1:" + replicationPorts[n]);
            }
        }
    }

    public void stopNode(int id) {
        RaftServer s = servers[id];
        servers[id] = null;
        services[id] = null;
        if (s != null) {
            s.stop();
        }
    }

    public boolean isRunning(int id) {
        return servers[id] != null;
    }

    public int nodeCount() {
        return nodeCount;
    }

    public int groupCount() {
        return groups;
    }

    public RaftServer server(int id) {
        return servers[id];
    }

    public RaftGroup group(int node, int groupId) {
        return servers[node] == null ? null : servers[node].group(groupId);
    }

    /** The DtKV service of a running node (to add DtKV groups at runtime: {@code service(n).stateMachine(g)}), or null. */
    public DtKvService service(int node) {
        return services[node];
    }

    /** The DtKV state machine of a group on a node. */
    public DtKvStateMachine machine(int node, int groupId) {
        return (DtKvStateMachine) group(node, groupId).stateMachine();
    }

    /** "127.0.0.1:port,..." of the service ports, node 1 first (for KvClientConfig.servers). */
    public String serviceAddresses() {
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= nodeCount; i++) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append("127.0.0.1:").append(servicePorts[i]);
        }
        return sb.toString();
    }

    public int servicePort(int id) {
        return servicePorts[id];
    }

    /** The running node leading {@code groupId}, waiting up to {@code timeoutMillis} for one; 0 if none. */
    public int waitForLeader(int groupId, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            int leader = 0;
            int term = -1;
            for (int n = 1; n <= nodeCount; n++) {
                RaftGroup g = group(n, groupId);
                if (g != null && g.isLeader() && g.term() > term) {
                    leader = n;
                    term = g.term();
                }
            }
            if (leader != 0 || System.nanoTime() - deadline > 0) {
                return leader;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
    }

    /** The running nodes. */
    public List<Integer> runningNodes() {
        List<Integer> r = new ArrayList<>();
        for (int i = 1; i <= nodeCount; i++) {
            if (servers[i] != null) {
                r.add(i);
            }
        }
        return r;
    }

    @Override
    public void close() {
        for (int i = 1; i <= nodeCount; i++) {
            stopNode(i);
        }
        if (deleteOnClose) {
            try {
                deleteTree(baseDir);
            } catch (IOException e) {
                // best effort: a temp directory
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
