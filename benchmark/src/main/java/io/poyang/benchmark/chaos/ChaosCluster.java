package io.poyang.benchmark.chaos;

import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvNode;
import io.poyang.dtkv.KvReadKind;
import io.poyang.dtkv.KvReq;
import io.poyang.dtkv.KvResp;
import io.poyang.net.LoopbackPorts;
import io.poyang.net.NioClient;
import io.poyang.raft.client.AdminClient;
import io.poyang.raft.client.AdminClientConfig;
import io.poyang.raft.client.GroupStatus;
import io.poyang.net.NioClientConfig;
import io.poyang.net.Peer;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.client.RaftStatusRequest;
import io.poyang.raft.client.RaftStatusResponse;
import io.poyang.raft.server.TestingFaultsRequest;
import io.poyang.raft.server.TestingFaultsService;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The node processes of a chaos run on loopback — each one {@code ./poyang server --conf DIR --testing-faults}
 * with a config directory the runner writes: their ports (picked free once, kept across
 * restarts), fresh data directories under the run directory, and what the runner asks of them
 * beyond signals: where each group stands (RAFT_STATUS), and partitions (TESTING_FAULTS, which the
 * nodes accept because they are started with the testing flag). Owned by one thread at a time.
 */
final class ChaosCluster implements AutoCloseable {

    static final long READY_TIMEOUT_MILLIS = 60_000;
    /** The DtKV group the clients use; every node of 1..N is a voter of it at the start. */
    static final int GROUP = 1;
    /** The main class of {@code ./poyang server}. */
    private static final String SERVER_MAIN = "io.poyang.server.ServerCommand";
    private static final long CONTROL_TIMEOUT_MILLIS = 3_000;
    /** Leader transfer and each step of a membership change (catching the spare up included). */
    static final long ADMIN_TIMEOUT_MILLIS = 30_000;

    private final Path runDir;
    private final long electionTimeoutMillis;
    private final Map<Integer, ChaosNode> nodes = new TreeMap<>();
    private final NioClient control;
    private final Map<Integer, Peer> controlPeers = new TreeMap<>();
    /** node id → the node ids it is told to block (what is in force, to re-send after a restart). */
    private final Map<Integer, int[]> blocked = new TreeMap<>();
    private final int memberCount;
    private final int spareId;
    private final AdminClient admin;
    private final Thread exitHook = new Thread(() -> nodes.values().forEach(ChaosNode::destroyNow), "chaos-kill-nodes");

    /**
     * @param nodeCount the group's voters, nodes 1..nodeCount
     * @param withSpare also node nodeCount + 1, hosting no group until a membership change brings it in
     */
    ChaosCluster(Path runDir, int nodeCount, boolean withSpare, long electionTimeoutMillis, long snapshotEvery)
            throws IOException {
        this.runDir = runDir;
        this.electionTimeoutMillis = electionTimeoutMillis;
        this.memberCount = nodeCount;
        this.spareId = withSpare ? nodeCount + 1 : 0;
        int processes = withSpare ? nodeCount + 1 : nodeCount;
        Files.createDirectories(runDir);
        int[] servicePorts = new int[processes + 1];
        int[] replicationPorts = new int[processes + 1];
        // outside the ephemeral range: a killed node restarts on its port, which an outgoing connection could take
        int[] picked = LoopbackPorts.pick(2 * processes);
        for (int i = 1; i <= processes; i++) {
            servicePorts[i] = picked[2 * i - 2];
            replicationPorts[i] = picked[2 * i - 1];
        }
        // servers.properties, the same for every node: every node's replication address; the group's voters are
        // 1..N (the spare is listed as a node, so every node can reach it, and is in no group).
        StringBuilder servers = new StringBuilder("# written by ./poyang chaos\n");
        for (int i = 1; i <= processes; i++) {
            servers.append("node.").append(i).append(" = 127.0.0.1:").append(replicationPorts[i]).append('\n');
        }
        servers.append("group.").append(GROUP).append(".members = ");
        for (int i = 1; i <= nodeCount; i++) {
            servers.append(i == 1 ? "" : ",").append(i);
        }
        servers.append('\n');
        List<String> java = javaCommand(runDir.resolve("lib"));
        for (int i = 1; i <= processes; i++) {
            Path conf = runDir.resolve("node-" + i + "-conf");
            Path data = runDir.resolve("node-" + i + "-data");
            Files.createDirectories(conf);
            String config = "# written by ./poyang chaos\n"
                    + "nodeId = " + i + "\n"
                    + "host = 127.0.0.1\n"
                    + "replicationPort = " + replicationPorts[i] + "\n"
                    + "servicePort = " + servicePorts[i] + "\n"
                    + "metricsPort = -1\n"
                    + "dataDir = " + data + "\n"
                    + "electionTimeoutMillis = " + electionTimeoutMillis + "\n"
                    + "syncForce = true\n"
                    + "snapshotEveryEntries = " + snapshotEvery + "\n"
                    + "snapshotIntervalMillis = 0\n"
                    + "snapshotOnStop = false\n"
                    // the nodes' log journal, for a run that kills nodes writing through it (benchmark/README)
                    + "logJournal = " + Boolean.getBoolean("poyang.chaos.logJournal") + "\n";
            Files.write(conf.resolve("config.properties"), config.getBytes(StandardCharsets.UTF_8));
            Files.write(conf.resolve("servers.properties"), servers.toString().getBytes(StandardCharsets.UTF_8));
            // What ./poyang server --conf DIR --testing-faults runs (the launcher execs this very command line).
            List<String> cmd = new ArrayList<>(java);
            Collections.addAll(cmd, SERVER_MAIN, "--conf", conf.toString(), "--testing-faults");
            nodes.put(i, new ChaosNode(i, servicePorts[i], replicationPorts[i], cmd, runDir.resolve("node-" + i + ".log"),
                    "poyang node " + i + " ready:"));
        }
        NioClientConfig cc = new NioClientConfig();
        cc.name = "chaos-control";
        cc.reconnectMaxBackoffMillis = 200;
        control = new NioClient(cc);
        control.start();
        AdminClientConfig ac = new AdminClientConfig();
        ac.net.name = "chaos-admin";
        for (ChaosNode n : nodes.values()) {
            controlPeers.put(n.id(), control.addPeer("127.0.0.1:" + n.servicePort()));
            ac.node(n.id(), "127.0.0.1:" + n.replicationPort());
        }
        admin = new AdminClient(ac);
        admin.start();
        // A run interrupted (Ctrl-C) must not leave node processes behind.
        Runtime.getRuntime().addShutdownHook(exitHook);
    }

    /**
     * This JVM's java binary and class path, and a heap fit for five nodes on one small machine. The
     * class path's jars are copied into {@code lib} first: a node restarted late in a long run must load
     * the same code as at the start, even if the jars were rebuilt meanwhile (a running JVM loading
     * classes lazily from a jar replaced under it fails with NoClassDefFoundError).
     */
    private static List<String> javaCommand(Path lib) throws IOException {
        String javaBin = ProcessHandle.current().info().command()
                .orElse(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        Files.createDirectories(lib);
        List<String> entries = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            Path p = Paths.get(entry);
            if (Files.isRegularFile(p) && p.getFileName().toString().endsWith(".jar")) {
                Path copy = lib.resolve((n++) + "-" + p.getFileName());
                Files.copy(p, copy);
                entries.add(copy.toString());
            } else {
                entries.add(entry);
            }
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBin);
        cmd.add("-Xms64m");
        cmd.add("-Xmx512m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-cp");
        cmd.add(String.join(File.pathSeparator, entries));
        return cmd;
    }

    Path runDir() {
        return runDir;
    }

    long electionTimeoutMillis() {
        return electionTimeoutMillis;
    }

    /** The group's first voters, 1..N: the nodes faults are injected into and final states are read from. */
    List<Integer> ids() {
        List<Integer> r = new ArrayList<>();
        for (int i = 1; i <= memberCount; i++) {
            r.add(i);
        }
        return r;
    }

    /** The spare node brought in by membership changes; 0 when there is none. */
    int spareId() {
        return spareId;
    }

    AdminClient admin() {
        return admin;
    }

    ChaosNode node(int id) {
        return nodes.get(id);
    }

    /** "127.0.0.1:port" of each node's service port, by id. */
    Map<Integer, String> serviceAddresses() {
        Map<Integer, String> m = new LinkedHashMap<>();
        for (ChaosNode n : nodes.values()) {
            m.put(n.id(), "127.0.0.1:" + n.servicePort());
        }
        return m;
    }

    void startAll() throws IOException, InterruptedException {
        for (ChaosNode n : nodes.values()) {
            n.start();
        }
        for (ChaosNode n : nodes.values()) {
            n.awaitReady(READY_TIMEOUT_MILLIS);
        }
    }

    /** Starts a stopped node and, once it is ready, tells it the partition in force (a new process forgot it). */
    void restart(int id) throws IOException, InterruptedException {
        ChaosNode n = nodes.get(id);
        n.start();
        n.awaitReady(READY_TIMEOUT_MILLIS);
        int[] b = blocked.get(id);
        if (b != null && b.length > 0) {
            sendBlocked(id, b);
        }
    }

    /** Where group {@code groupId} stands on each live, unpaused node that answers in time. */
    Map<Integer, RaftStatusResponse> status(int groupId) {
        Map<Integer, CompletableFuture<RaftStatusResponse>> asks = new TreeMap<>();
        for (ChaosNode n : nodes.values()) {
            if (n.isAlive() && !n.isPaused()) {
                asks.put(n.id(), control.sendRequest(controlPeers.get(n.id()),
                        WritePacket.request(RaftCommands.RAFT_STATUS, new RaftStatusRequest(groupId)),
                        RaftStatusResponse.DECODER, CONTROL_TIMEOUT_MILLIS));
            }
        }
        Map<Integer, RaftStatusResponse> r = new TreeMap<>();
        for (Map.Entry<Integer, CompletableFuture<RaftStatusResponse>> e : asks.entrySet()) {
            try {
                r.put(e.getKey(), e.getValue().get(CONTROL_TIMEOUT_MILLIS + 1000, TimeUnit.MILLISECONDS));
            } catch (Exception ignored) {
                // not answering now (starting, partitioned from us it is not, but busy): left out
            }
        }
        return r;
    }

    /** The node that leads {@code groupId} in the highest term among the answers, or 0. */
    int leader(int groupId) {
        int leader = 0;
        int term = -1;
        for (RaftStatusResponse s : status(groupId).values()) {
            if (s.role() == RaftRole.LEADER && s.term() > term) {
                leader = s.nodeId();
                term = s.term();
            }
        }
        return leader;
    }

    /**
     * Waits until one node leads and every live node follows it at its term with everything applied
     * that the leader committed when first seen; returns the leader. Throws if that does not happen in time.
     */
    int awaitConverged(int groupId, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String last = "no answer";
        while (System.nanoTime() - deadline < 0) {
            Map<Integer, RaftStatusResponse> st = status(groupId);
            st.keySet().retainAll(ids());
            last = st.toString();
            int leader = 0;
            for (RaftStatusResponse s : st.values()) {
                if (s.role() == RaftRole.LEADER) {
                    leader = s.nodeId();
                }
            }
            long live = ids().stream().filter(id -> nodes.get(id).isAlive()).count();
            if (leader != 0 && st.size() == live) {
                RaftStatusResponse l = st.get(leader);
                boolean all = true;
                for (RaftStatusResponse s : st.values()) {
                    all &= s.term() == l.term() && s.leaderId() == leader && s.lastApplied() >= l.commitIndex();
                }
                if (all) {
                    return leader;
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("the cluster did not converge on one leader with every node caught up within "
                + timeoutMillis + " ms; last status: " + last);
    }

    /** Tells node {@code id} to block replication traffic with {@code others} (empty: heal it). */
    void block(int id, int... others) throws IOException {
        blocked.put(id, others.clone());
        sendBlocked(id, others);
    }

    private void sendBlocked(int id, int[] others) throws IOException {
        try {
            TestingFaultsRequest answer = control.sendRequest(controlPeers.get(id),
                    WritePacket.request(TestingFaultsService.TESTING_FAULTS, new TestingFaultsRequest(others)),
                    TestingFaultsRequest.Decoder::new, CONTROL_TIMEOUT_MILLIS).get(CONTROL_TIMEOUT_MILLIS + 2000,
                    TimeUnit.MILLISECONDS);
            if (answer.blockedNodeIds().length != others.length) {
                throw new IOException("node " + id + " answered TESTING_FAULTS with " + answer + ", not " + others.length
                        + " blocked nodes");
            }
        } catch (Exception e) {
            if (e instanceof IOException) {
                throw (IOException) e;
            }
            throw new IOException("cannot set the partition on node " + id + ": " + e, e);
        }
    }

    /** Heals every partition on every live node. */
    void healPartitions() throws IOException {
        for (ChaosNode n : nodes.values()) {
            if (blocked.containsKey(n.id())) {
                if (n.isAlive()) {
                    block(n.id());
                }
                blocked.remove(n.id());
            }
        }
    }

    /**
     * Every value under directory {@code dir} as node {@code id} holds it, read on that node with a
     * follower read (it fetches a read index from the leader and answers once it applied that far), so
     * each node's own state machine is read, not the leader's. Keys map to their values (directories
     * left out).
     */
    Map<String, String> readAll(int id, int groupId, String dir, long timeoutMillis) throws IOException {
        KvReq req = KvReq.list(dir).groupId(groupId).readKind(KvReadKind.FOLLOWER_READ);
        KvResp resp;
        try {
            resp = control.sendRequest(controlPeers.get(id), WritePacket.request(KvCommands.KV_READ, req),
                    KvResp.Decoder::new, timeoutMillis).get(timeoutMillis + 2000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IOException("cannot read directory " + dir + " on node " + id + ": " + e, e);
        }
        if (!resp.isSuccess()) {
            throw new IOException("reading directory " + dir + " on node " + id + " failed: " + resp.code() + " "
                    + resp.message());
        }
        Map<String, String> values = new TreeMap<>();
        for (KvNode n : resp.nodes()) {
            if (!n.isDir()) {
                values.put(n.key(), new String(n.value(), StandardCharsets.UTF_8));
            }
        }
        return values;
    }

    /** Hands the leadership of {@code groupId} to {@code target} (AdminClient; returns once it leads). */
    void transferLeader(int groupId, int target) {
        admin.transferLeader(groupId, target, ADMIN_TIMEOUT_MILLIS);
    }

    /**
     * Takes voter {@code out} out of {@code groupId} and brings the spare in its place: the spare hosts the
     * group (from the current voters), then a joint-consensus change to the new voters is prepared (it
     * returns once the spare caught up) and committed.
     */
    void replaceWithSpare(int groupId, int out) {
        if (spareId == 0) {
            throw new IllegalStateException("this cluster was started without a spare node");
        }
        GroupStatus s = admin.leaderStatus(groupId, ADMIN_TIMEOUT_MILLIS);
        int[] voters = s.voters();
        int[] target = new int[voters.length];
        for (int i = 0; i < voters.length; i++) {
            target[i] = voters[i] == out ? spareId : voters[i];
        }
        admin.addGroup(spareId, groupId, voters, new int[0]);
        admin.prepareMembers(groupId, target, new int[0], ADMIN_TIMEOUT_MILLIS);
        admin.commitMembers(groupId, target, new int[0], ADMIN_TIMEOUT_MILLIS);
    }

    /**
     * Puts the first voters (1..N) back, whatever state a change was left in (a prepared change is finished
     * when it leads there, aborted otherwise), then removes the group and its data from the spare so the next
     * change starts from nothing. Idempotent.
     */
    void restoreMembers(int groupId) {
        int[] original = ids().stream().mapToInt(Integer::intValue).toArray();
        GroupStatus s = admin.leaderStatus(groupId, ADMIN_TIMEOUT_MILLIS);
        if (s.isJoint()) {
            if (sameSet(s.newVoters(), original)) {
                admin.commitMembers(groupId, original, new int[0], ADMIN_TIMEOUT_MILLIS);
            } else {
                admin.abortMembers(groupId, ADMIN_TIMEOUT_MILLIS);
            }
            s = admin.leaderStatus(groupId, ADMIN_TIMEOUT_MILLIS);
        }
        if (!sameSet(s.voters(), original) || s.observers().length > 0) {
            admin.prepareMembers(groupId, original, new int[0], ADMIN_TIMEOUT_MILLIS);
            admin.commitMembers(groupId, original, new int[0], ADMIN_TIMEOUT_MILLIS);
        }
        if (spareId != 0 && nodes.get(spareId).isAlive()) {
            admin.removeGroup(spareId, groupId, true);
        }
    }

    private static boolean sameSet(int[] a, int[] b) {
        int[] x = a.clone();
        int[] y = b.clone();
        java.util.Arrays.sort(x);
        java.util.Arrays.sort(y);
        return java.util.Arrays.equals(x, y);
    }

    /** Stops every node (SIGTERM, then kill -9 after 10 s) and the control client. */
    @Override
    public void close() {
        for (ChaosNode n : nodes.values()) {
            try {
                n.stop(10_000);
            } catch (Exception e) {
                System.err.println("chaos: could not stop " + n.name() + ": " + e);
            }
        }
        admin.close();
        control.stop();
        try {
            Runtime.getRuntime().removeShutdownHook(exitHook);
        } catch (IllegalStateException e) {
            // the JVM is exiting: the hook runs anyway, and finds nothing alive
        }
    }
}
