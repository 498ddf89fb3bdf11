package io.poyang.server.node;

import io.poyang.dtkv.client.KvClientConfig;
import io.poyang.net.LoopbackPorts;
import io.poyang.server.Await;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Three (or more) DtKV nodes in the test's JVM, one group 1 on all of them, each started from its
 * own {@code <dir>/conf-<id>/config.properties} and {@code servers.properties} as {@code ./poyang
 * server --conf} would (admin commands that change the nodes rewrite that servers file), data in
 * {@code <dir>/data-<id>}: for tests that look inside a node ({@link PoyangNode#raftServer()}, its
 * HTTP endpoint) rather than at a process.
 */
public final class InProcessNodes implements AutoCloseable {

    private final List<PoyangNode> nodes = new ArrayList<>();

    /**
     * Starts {@code count} nodes with config files and data under {@code dir}; {@code settings}
     * are added to (or override) each node's config.properties (one dispatcher each, metrics off).
     */
    public InProcessNodes(Path dir, int count, Map<String, String> settings) throws Exception {
        this(dir, count, settings, 0);
    }

    /** {@link #InProcessNodes(Path, int, Map)} with {@code group.1.preferredLeader} (0: none). */
    public InProcessNodes(Path dir, int count, Map<String, String> settings, int preferredLeader) throws Exception {
        int[] p = LoopbackPorts.pick(2 * count);
        TreeMap<Integer, String> addrs = new TreeMap<>();
        int[] members = new int[count];
        for (int i = 1; i <= count; i++) {
            addrs.put(i, "127.0.0.1:" + p[2 * i - 2]);
            members[i - 1] = i;
        }
        TreeMap<Integer, ServersConfig.Group> groups = new TreeMap<>();
        groups.put(1, new ServersConfig.Group(1, members, new int[0], new int[0], preferredLeader));
        ServersConfig servers = new ServersConfig(addrs, groups);
        try {
            for (int i = 1; i <= count; i++) {
                Path conf = Files.createDirectories(dir.resolve("conf-" + i));
                Path serversFile = conf.resolve("servers.properties");
                servers.writeTo(serversFile);
                PropertiesFile f = PropertiesFile.empty(conf.resolve("config.properties"));
                f.set("nodeId", String.valueOf(i));
                f.set("replicationPort", String.valueOf(p[2 * i - 2]));
                f.set("servicePort", String.valueOf(p[2 * i - 1]));
                f.set("metricsPort", "-1");
                f.set("dataDir", dir.resolve("data-" + i).toString());
                f.set("dispatchers", "1");
                for (Map.Entry<String, String> s : settings.entrySet()) {
                    f.set(s.getKey(), s.getValue());
                }
                f.writeAtomically();
                PoyangNode n = new PoyangNode(NodeConfig.load(f.path()), ServersConfig.load(serversFile), serversFile);
                n.start();
                nodes.add(n);
            }
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /**
     * One node (id 1, ports picked at start, metrics off), not started, configured by
     * {@code confFile} with its data in {@code dataDir}; {@code settings} are added to its config.
     */
    static PoyangNode singleNode(Path confFile, Path dataDir, Map<String, String> settings) throws Exception {
        PropertiesFile p = PropertiesFile.empty(confFile);
        p.set("nodeId", "1");
        p.set("replicationPort", "0");
        p.set("servicePort", "0");
        p.set("metricsPort", "-1");
        p.set("dataDir", dataDir.toString());
        for (Map.Entry<String, String> s : settings.entrySet()) {
            p.set(s.getKey(), s.getValue());
        }
        p.writeAtomically();
        return new PoyangNode(NodeConfig.load(confFile), ServersConfig.singleNode(1, "127.0.0.1:0"), null);
    }

    /** Starts a single node (again), waits until it leads group 1, stops it. */
    static void runAndStop(PoyangNode node) throws Exception {
        node.start();
        try {
            Await.until("node 1 to lead group 1", 30_000, () -> node.raftServer().group(1).isLeader());
        } finally {
            node.stop();
        }
        if (!node.isStopped()) {
            throw new AssertionError("node 1 did not stop");
        }
    }

    /** The nodes in id order (node i at index i - 1). */
    public List<PoyangNode> nodes() {
        return Collections.unmodifiableList(nodes);
    }

    /** The running node other than {@code not} (may be null) that leads group 1, once there is one. */
    public PoyangNode awaitLeader(PoyangNode not, long timeoutMillis) throws Exception {
        return Await.value("a leader of group 1" + (not == null ? "" : " other than node " + not.config().nodeId),
                timeoutMillis, () -> {
                    for (PoyangNode n : nodes) {
                        if (n != not && !n.isStopped() && n.raftServer().group(1).isLeader()) {
                            return n;
                        }
                    }
                    return null;
                });
    }

    /** Every node's admin (replication) address, as {@code --servers} takes it: {@code 1=127.0.0.1:P,...}. */
    public String adminServers() {
        return serversList(true);
    }

    /** Every node's service address, as the kv command's {@code --servers} takes it. */
    public String kvServers() {
        return serversList(false);
    }

    private String serversList(boolean replication) {
        StringBuilder b = new StringBuilder();
        for (PoyangNode n : nodes) {
            b.append(b.length() > 0 ? "," : "").append(n.config().nodeId).append("=127.0.0.1:")
                    .append(replication ? n.replicationPort() : n.servicePort());
        }
        return b.toString();
    }

    /** A client config naming every node's service port. */
    public KvClientConfig clientConfig() {
        KvClientConfig cfg = new KvClientConfig();
        for (int i = 0; i < nodes.size(); i++) {
            cfg.node(i + 1, "127.0.0.1:" + nodes.get(i).servicePort());
        }
        return cfg;
    }

    @Override
    public void close() {
        for (PoyangNode n : nodes) {
            n.stop();
        }
    }
}
