package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.log.ImpossibleStates;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftConfig;
import io.poyang.raft.core.RaftGroup;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * N raft servers in this JVM on loopback (ports picked by the OS, kept across restarts), each with
 * its own data directory under the test's temp dir, short timeouts, one shared
 * {@link FaultInjector}, and a {@link TestStateMachine} per group and node. Tests drive it from
 * the test thread and wait for conditions with deadlines, never with sleeps.
 */
final class RaftCluster implements AutoCloseable {

    static final long WAIT_SECONDS = 30;

    final Path baseDir;
    final int nodeCount;
    final int[] groupIds;
    final FaultInjector faults = new FaultInjector();
    private final RaftServer[] servers;
    private final int[] replicationPorts;
    private final int[] servicePorts;
    private final Map<Long, TestStateMachine> machines = new HashMap<>();
    private final Consumer<RaftConfig> tweak;
    private final Set<String> threadsBefore;
    /** Per group, the members; default: every node. */
    private final Map<Integer, int[]> members = new HashMap<>();
    int dispatchers = 2;
    /** Where the servers complete embedders' futures; null: the default (the common pool). */
    java.util.concurrent.Executor callbackExecutor;
    /** Servers get a state machine factory, so admin commands can add groups at runtime. */
    boolean runtimeGroups = true;
    /** Applied to each node's raft config after the cluster-wide tweak, with the node's id; or null. */
    java.util.function.BiConsumer<Integer, RaftConfig> nodeTweak;
    /** Applied to each node's builder last (service extensions and the like), or null. */
    Consumer<RaftServerConfig.Builder> serverTweak;
    /** Applied to each node's builder after {@link #serverTweak}, with the node's id; or null. */
    java.util.function.BiConsumer<Integer, RaftServerConfig.Builder> nodeServerTweak;

    RaftCluster(Path baseDir, int nodeCount, int[] groupIds, Consumer<RaftConfig> tweak) {
        this.baseDir = baseDir;
        this.nodeCount = nodeCount;
        this.groupIds = groupIds;
        this.servers = new RaftServer[nodeCount + 1];
        this.replicationPorts = new int[nodeCount + 1];
        this.servicePorts = new int[nodeCount + 1];
        this.tweak = tweak;
        this.threadsBefore = threadNames();
        ImpossibleStates.reset();
    }

    RaftCluster(Path baseDir, int nodeCount, int... groupIds) {
        this(baseDir, nodeCount, groupIds, null);
    }

    /** The election timeout of {@link #testConfig}. */
    static final long ELECTION_TIMEOUT_MILLIS = 500;

    static RaftConfig testConfig() {
        return new RaftConfig().electionTimeoutMillis(ELECTION_TIMEOUT_MILLIS).heartbeatIntervalMillis(50)
                .replicationTimeoutMillis(2000).segmentBytes(1 << 20).snapshotEvery(0, 0);
    }

    RaftCluster start() {
        for (int i = 1; i <= nodeCount; i++) {
            startNode(i);
        }
        return this;
    }

    int[] allNodes() {
        int[] all = new int[nodeCount];
        for (int i = 0; i < nodeCount; i++) {
            all[i] = i + 1;
        }
        return all;
    }

    void startNode(int id) {
        RaftConfig rc = testConfig();
        if (tweak != null) {
            tweak.accept(rc);
        }
        if (nodeTweak != null) {
            nodeTweak.accept(id, rc);
        }
        RaftServerConfig.Builder b = RaftServer.builder()
                .nodeId(id)
                .servicePort("127.0.0.1", servicePorts[id])
                .dataDir(baseDir.resolve("node-" + id))
                .dispatchers(dispatchers)
                .logIoThreads(3)
                .raftConfig(rc)
                .faultInjector(faults);
        if (callbackExecutor != null) {
            b.callbackExecutor(callbackExecutor);
        }
        if (runtimeGroups) {
            b.stateMachineFactory(g -> newMachine(id, g));
        }
        for (int n = 1; n <= nodeCount; n++) {
            b.node(n, "127.0.0.1:" + replicationPorts[n]);
        }
        for (int g : groupIds) {
            int[] m = members.getOrDefault(g, allNodes());
            boolean member = false;
            for (int x : m) {
                member |= x == id;
            }
            if (member) {
                b.group(g, () -> newMachine(id, g), m);
            }
        }
        if (serverTweak != null) {
            serverTweak.accept(b);
        }
        if (nodeServerTweak != null) {
            nodeServerTweak.accept(id, b);
        }
        RaftServer s = b.build();
        s.start();
        servers[id] = s;
        replicationPorts[id] = s.replicationPort();
        servicePorts[id] = s.servicePort();
        for (int n = 1; n <= nodeCount; n++) {
            if (n != id && servers[n] != null && servers[n].isRunning()) {
                servers[n].setNodeAddress(id, "127.0.0.1:" + replicationPorts[id]);
                s.setNodeAddress(n, "127.0.0.1:" + replicationPorts[n]);
            }
        }
    }

    /** Adds group {@code groupId} to running node {@code node} at runtime, starting from {@code members}. */
    RaftGroup addGroup(int node, int groupId, io.poyang.raft.core.Members members) {
        return join(servers[node].addGroup(groupId, () -> newMachine(node, groupId), members));
    }

    /** The thread the last state machine supplier ran on. */
    volatile Thread lastMachineMadeOn;
    /** Set: making a state machine throws this (a supplier that cannot open its resources). */
    volatile RuntimeException supplierFailure;
    /** The state machines made from now on ask for raft's own entries (StateMachine.appliesRaftEntries). */
    volatile boolean machinesApplyRaftEntries;
    /** Set: the state machines made from now on fail to give a body decoder with this. */
    volatile RuntimeException decoderFailure;

    /** A state machine for group {@code groupId} on {@code node}, remembered for {@link #machine}. */
    private TestStateMachine newMachine(int node, int groupId) {
        lastMachineMadeOn = Thread.currentThread();
        RuntimeException fail = supplierFailure;
        if (fail != null) {
            throw fail;
        }
        TestStateMachine sm = new TestStateMachine();
        sm.failBodyDecoder = decoderFailure;
        sm.wantsRaftEntries = machinesApplyRaftEntries;
        synchronized (machines) {
            machines.put(key(node, groupId), sm);
        }
        return sm;
    }

    /** The replication (admin) address of a node. */
    String adminAddress(int node) {
        return "127.0.0.1:" + replicationPorts[node];
    }

    /** Removes group {@code groupId} from running node {@code node}, deleting its data. */
    void removeGroup(int node, int groupId) {
        join(servers[node].removeGroup(groupId, true));
    }

    /**
     * Runs a leader-only operation on the current leader of {@code groupId}, retrying on another
     * node while leadership moves (NOT_LEADER), as an operator's tool would.
     */
    <T> T onLeader(int groupId, java.util.function.Function<RaftGroup, CompletableFuture<T>> op) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            int leader = waitForLeader(groupId);
            try {
                return op.apply(group(leader, groupId)).get(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof NotLeaderException) || System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the operation on the leader of group " + groupId + " failed", e.getCause());
                }
            } catch (InterruptedException | TimeoutException e) {
                throw new AssertionError(e);
            }
        }
    }

    void setMembers(int groupId, int... nodes) {
        members.put(groupId, nodes);
    }

    void stopNode(int id) {
        RaftServer s = servers[id];
        servers[id] = null;
        if (s != null) {
            s.stop();
        }
    }

    void restartNode(int id) {
        stopNode(id);
        startNode(id);
    }

    boolean isRunning(int id) {
        return servers[id] != null;
    }

    RaftServer server(int id) {
        return servers[id];
    }

    RaftGroup group(int node, int groupId) {
        return servers[node].group(groupId);
    }

    TestStateMachine machine(int node, int groupId) {
        synchronized (machines) {
            return machines.get(key(node, groupId));
        }
    }

    private static long key(int node, int group) {
        return ((long) node << 32) | group;
    }

    List<Integer> runningNodes() {
        List<Integer> r = new ArrayList<>();
        for (int i = 1; i <= nodeCount; i++) {
            if (servers[i] != null && group(i, groupIds[0]) != null) {
                r.add(i);
            }
        }
        return r;
    }

    /**
     * The group on a running node that leads it now and has not failed, or null: what the load
     * generators of the tests submit to (a node stopping under them is skipped).
     */
    RaftGroup currentLeader(int groupId) {
        for (int n : runningMembers(groupId)) {
            try {
                RaftGroup g = group(n, groupId);
                if (g != null && g.isLeader() && g.failure() == null) {
                    return g;
                }
            } catch (RuntimeException e) {
                // a node stopping under us
            }
        }
        return null;
    }

    /**
     * One step of a test write generator: takes a slot of {@code window} (waiting at most 100 ms)
     * and the group's current leader. Returns the leader with the slot held, or null with no slot
     * held: none was free yet, or there is no leader (then it has backed off 5 ms).
     */
    RaftGroup slotAtLeader(java.util.concurrent.Semaphore window, int groupId) throws InterruptedException {
        if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            return null;
        }
        RaftGroup leader = currentLeader(groupId);
        if (leader == null) {
            window.release();
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
        }
        return leader;
    }

    List<Integer> runningMembers(int groupId) {
        List<Integer> r = new ArrayList<>();
        for (int i = 1; i <= nodeCount; i++) {
            if (servers[i] != null && servers[i].group(groupId) != null) {
                r.add(i);
            }
        }
        return r;
    }

    // ---------------------------------------------------------------- waiting

    static void waitFor(String what, BooleanSupplier condition) {
        waitFor(what, WAIT_SECONDS, condition);
    }

    static void waitFor(String what, long seconds, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
    }

    /** The node leading {@code groupId} among the running members, once exactly one leads the highest term. */
    int waitForLeader(int groupId) {
        int[] found = new int[1];
        waitFor("a leader of group " + groupId, () -> {
            int leader = 0;
            int term = -1;
            for (int n : runningMembers(groupId)) {
                RaftGroup g = group(n, groupId);
                if (g.role() == RaftRole.LEADER && g.term() > term) {
                    leader = n;
                    term = g.term();
                }
            }
            if (leader == 0) {
                return false;
            }
            found[0] = leader;
            return true;
        });
        return found[0];
    }

    /** Writes {@code value} through whichever node leads, retrying on NOT_LEADER; returns the log index. */
    long write(int groupId, long value) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            int leader = waitForLeader(groupId);
            try {
                Encodable r = group(leader, groupId).submit(0, TestStateMachine.body(value), 5_000).get(10, TimeUnit.SECONDS);
                return TestStateMachine.index(r);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof NotLeaderException) || System.nanoTime() - deadline > 0) {
                    throw new AssertionError("write of " + value + " failed", e.getCause());
                }
            } catch (Exception e) {
                throw new AssertionError("write of " + value + " failed", e);
            }
        }
    }

    <T> T call(int node, int groupId, java.util.concurrent.Callable<T> task) {
        return join(group(node, groupId).callInGroup(task));
    }

    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    long[] values(int node, int groupId) {
        TestStateMachine sm = machine(node, groupId);
        return call(node, groupId, sm::values);
    }

    /**
     * Waits until every running member applied everything the leader committed, then checks that
     * their state machines hold the same values in the same order, at the same indexes. Returns
     * the values.
     */
    long[] checkConsistent(int groupId) {
        int leader = waitForLeader(groupId);
        // a write in the leader's term makes every earlier entry commit everywhere
        long target = group(leader, groupId).commitIndex();
        List<Integer> nodes = runningMembers(groupId);
        waitFor("members " + nodes + " of group " + groupId + " to apply up to " + target, () -> {
            for (int n : nodes) {
                if (group(n, groupId).lastApplied() < target) {
                    return false;
                }
            }
            return true;
        });
        // now equal up to the smallest applied index; compare each node's prefix against the leader's
        long[] ref = call(leader, groupId, () -> machine(leader, groupId).values());
        long[] refIdx = call(leader, groupId, () -> machine(leader, groupId).indexes());
        for (int n : nodes) {
            long[] v = values(n, groupId);
            long[] ix = call(n, groupId, () -> machine(n, groupId).indexes());
            int common = Math.min(v.length, ref.length);
            assertArrayEquals(Arrays.copyOf(ref, common), Arrays.copyOf(v, common),
                    "node " + n + " applied other values than leader " + leader + " in group " + groupId);
            assertArrayEquals(Arrays.copyOf(refIdx, common), Arrays.copyOf(ix, common),
                    "node " + n + " applied values at other indexes than leader " + leader + " in group " + groupId);
        }
        return ref;
    }

    /** What a node's state machine holds, read in one step of its dispatcher (so nothing is applied in between). */
    private static final class Holding {
        final long applied;
        final long[] values;
        final long[] indexes;
        final int odd;

        Holding(long applied, long[] values, long[] indexes, int odd) {
            this.applied = applied;
            this.values = values;
            this.indexes = indexes;
            this.odd = odd;
        }
    }

    private Holding holding(int node, int groupId) {
        TestStateMachine sm = machine(node, groupId);
        RaftGroup g = group(node, groupId);
        return call(node, groupId, () -> new Holding(g.lastApplied(), sm.values(), sm.indexes(), sm.odd()));
    }

    /**
     * Waits until all running members applied the same entries — at least everything any of them
     * knows to be committed — then compares their state machines fully. Each node's applied index
     * and values are read in one dispatcher step, so a node applying meanwhile cannot make equal
     * states look different (or the reverse). Returns the values.
     */
    long[] checkIdentical(int groupId) {
        waitForLeader(groupId);
        List<Integer> nodes = runningMembers(groupId);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            long target = 0;
            for (int n : nodes) {
                target = Math.max(target, group(n, groupId).commitIndex());
            }
            Map<Integer, Holding> held = new HashMap<>();
            boolean same = true;
            long applied = -1;
            for (int n : nodes) {
                Holding h = holding(n, groupId);
                held.put(n, h);
                if (h.applied < target || (applied >= 0 && h.applied != applied)) {
                    same = false;
                }
                applied = h.applied;
            }
            if (same) {
                int ref = nodes.get(0);
                Holding r = held.get(ref);
                for (int n : nodes) {
                    Holding h = held.get(n);
                    if (!Arrays.equals(r.values, h.values) || !Arrays.equals(r.indexes, h.indexes)) {
                        int i = 0;
                        while (i < Math.min(h.values.length, r.values.length) && h.values[i] == r.values[i]
                                && h.indexes[i] == r.indexes[i]) {
                            i++;
                        }
                        throw new AssertionError("node " + n + " differs from node " + ref + " in group " + groupId
                                + " with both applied up to " + applied + ": " + h.values.length + " values vs "
                                + r.values.length + "; first difference at position " + i + ": node " + n + " has "
                                + (i < h.values.length ? h.values[i] + "@" + h.indexes[i] : "nothing") + ", node " + ref
                                + " has " + (i < r.values.length ? r.values[i] + "@" + r.indexes[i] : "nothing")
                                + "; entries that were no test value: " + h.odd + " vs " + r.odd);
                    }
                }
                return r.values;
            }
            if (System.nanoTime() - deadline > 0) {
                StringBuilder b = new StringBuilder();
                for (int n : nodes) {
                    b.append(" node ").append(n).append(" applied ").append(held.get(n).applied);
                }
                throw new AssertionError("timed out after " + WAIT_SECONDS + " s waiting for members " + nodes
                        + " of group " + groupId + " to apply the same entries up to " + target + ":" + b);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
    }

    // ---------------------------------------------------------------- end

    @Override
    public void close() {
        for (int i = 1; i <= nodeCount; i++) {
            stopNode(i);
        }
        waitFor("the cluster's threads to end", 30, () -> leftoverThreads().isEmpty());
        assertEquals(0, ImpossibleStates.count(), "impossible states were reported");
    }

    /** Threads a stopped cluster must not leave behind (dispatchers, I/O workers, log I/O). */
    List<String> leftoverThreads() {
        List<String> left = new ArrayList<>();
        for (String n : threadNames()) {
            if (!threadsBefore.contains(n) && n.startsWith("raft-") && !n.contains("fault-timer")) {
                left.add(n);
            }
        }
        return left;
    }

    private static Set<String> threadNames() {
        Set<String> names = new java.util.HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                names.add(t.getName());
            }
        }
        return names;
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
