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

    static RaftConfig testConfig() {
        return new RaftConfig().electionTimeoutMillis(500).heartbeatIntervalMillis(50)
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
        RaftServerConfig.Builder b = RaftServer.builder()
                .nodeId(id)
                .servicePort("127.0.0.1", servicePorts[id])
                .dataDir(baseDir.resolve("node-" + id))
                .dispatchers(dispatchers)
                .logIoThreads(3)
                .raftConfig(rc)
                .faultInjector(faults);
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
                b.group(g, () -> {
                    TestStateMachine sm = new TestStateMachine();
                    synchronized (machines) {
                        machines.put(key(id, g), sm);
                    }
                    return sm;
                }, m);
            }
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

    /** Waits until all running members applied the same number of values, then compares them fully. */
    long[] checkIdentical(int groupId) {
        int leader = waitForLeader(groupId);
        long target = group(leader, groupId).commitIndex();
        List<Integer> nodes = runningMembers(groupId);
        waitFor("members " + nodes + " of group " + groupId + " to apply the same entries", () -> {
            long applied = group(leader, groupId).lastApplied();
            if (applied < target) {
                return false;
            }
            for (int n : nodes) {
                if (group(n, groupId).lastApplied() != applied) {
                    return false;
                }
            }
            return true;
        });
        long[] ref = values(leader, groupId);
        long[] refIdx = call(leader, groupId, () -> machine(leader, groupId).indexes());
        for (int n : nodes) {
            long[] v = values(n, groupId);
            if (!Arrays.equals(ref, v)) {
                long[] ix = call(n, groupId, () -> machine(n, groupId).indexes());
                int i = 0;
                while (i < Math.min(v.length, ref.length) && v[i] == ref[i]) {
                    i++;
                }
                throw new AssertionError("node " + n + " differs from leader " + leader + " in group " + groupId
                        + ": " + v.length + " values vs " + ref.length + "; first difference at position " + i
                        + ": node has " + (i < v.length ? v[i] + "@" + ix[i] : "nothing") + ", leader has "
                        + (i < ref.length ? ref[i] + "@" + refIdx[i] : "nothing") + "; node applied "
                        + group(n, groupId).lastApplied() + ", leader " + group(leader, groupId).lastApplied()
                        + "; entries that were no test value: node " + call(n, groupId, () -> machine(n, groupId).odd())
                        + ", leader " + call(leader, groupId, () -> machine(leader, groupId).odd()));
            }
        }
        return ref;
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
