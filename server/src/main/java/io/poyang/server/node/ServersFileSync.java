package io.poyang.server.node;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.server.config.ConfigException;
import io.poyang.server.config.ServersConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps this node's {@code servers.properties} equal to the layout the node runs with, so a restart
 * starts from it and an operator reading the file sees the cluster as it is. Once a second (and at
 * stop) it compares the file's layout with the running one and rewrites the file when they differ
 * ({@link ServersConfig#writeTo}: comments and order kept, temp file + fsync + rename):
 *
 * <ul>
 *   <li>nodes: this node's own line as configured, plus every other node the raft server knows
 *       (added or removed by {@code ./poyang admin add-node / remove-node});</li>
 *   <li>each group this node hosts: its voters and observers as raft last committed them here
 *       (membership changes, observers promoted; an appended configuration entry is written only
 *       once committed); a group in the middle of a change (joint) keeps its previous lines until
 *       the change ends. A node that runs a group outside its configuration (given it with
 *       {@code add-group --on} before the change that takes it in, or taken out before
 *       {@code remove-group}) lists itself in {@code group.<id>.nonMembers}, so it runs the group
 *       again after a restart. {@code group.<id>.preferredLeader} is the preference the group runs
 *       with, left out while that node is not one of the voters written;</li>
 *   <li>a group added here at runtime is added; a group this node stopped hosting (remove-group)
 *       is dropped from this node's file; groups of other nodes are left as they are.</li>
 * </ul>
 *
 * A layout the file could not hold (a group member with no known address) is not written; the
 * problem is logged once.
 */
final class ServersFileSync {

    private static final PoyangLog log = PoyangLogs.get(ServersFileSync.class);
    static final long INTERVAL_MILLIS = 1_000;

    private final int nodeId;
    private final RaftServer raft;
    private final Path file;
    private final String selfAddress;
    /** The groups hosted here at the last sync: one missing now was removed from this node. */
    private final Set<Integer> hosted = new HashSet<>();
    /** Groups removed from this node (and not added back): dropped from its file. */
    private final Set<Integer> removedHere = new HashSet<>();
    private ServersConfig written;
    private String lastProblem;
    private ScheduledExecutorService timer;

    ServersFileSync(int nodeId, RaftServer raft, Path file, ServersConfig loaded) {
        this.nodeId = nodeId;
        this.raft = raft;
        this.file = file;
        this.selfAddress = loaded.nodes().get(nodeId);
        this.written = loaded;
        for (ServersConfig.Group g : loaded.groupsOf(nodeId)) {
            hosted.add(g.id);
        }
    }

    void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "poyang-" + nodeId + "-servers-file");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::syncQuietly, 0, INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Stops the timer and makes a last sync (the layout at stop is what the next start reads). */
    void stop() {
        if (timer != null) {
            timer.shutdown();
            try {
                timer.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        syncQuietly();
    }

    private void syncQuietly() {
        try {
            sync();
        } catch (RuntimeException e) {
            log.warn("node {}: updating {} failed", nodeId, file, e);
        }
    }

    /** One comparison, and a rewrite when the running layout differs from the file's. */
    synchronized void sync() {
        ServersConfig now = running();
        if (now.equals(written)) {
            return;
        }
        try {
            now.checkWritable();
        } catch (ConfigException e) {
            if (!e.getMessage().equals(lastProblem)) {
                lastProblem = e.getMessage();
                log.warn("node {}: not writing {} yet: the running layout is incomplete ({})", nodeId, file,
                        e.getMessage());
            }
            return;
        }
        try {
            now.writeTo(file);
            log.info("node {}: wrote the cluster layout to {}: {}", nodeId, file, now);
            written = now;
            lastProblem = null;
        } catch (IOException e) {
            // tried again every second while the layout differs: say it once per distinct failure
            String problem = "write failed: " + e;
            if (!problem.equals(lastProblem)) {
                lastProblem = problem;
                log.warn("node {}: writing {} failed: {}; retrying every second, logged again only if the"
                        + " failure changes", nodeId, file, e.toString());
            }
        }
    }

    private ServersConfig running() {
        TreeMap<Integer, String> nodes = new TreeMap<>(raft.nodeAddresses());
        nodes.remove(nodeId);
        nodes.put(nodeId, selfAddress);
        TreeMap<Integer, ServersConfig.Group> groups = new TreeMap<>(written.groups());
        Set<Integer> now = new HashSet<>();
        for (RaftGroup g : raft.groups()) {
            now.add(g.groupId());
            // committed: a configuration entry cut later (a leader that lost it) must not be what the
            // next start reads
            Members m = g.committedMembers();
            ServersConfig.Group line = groups.get(g.groupId());
            if (m != null && (!m.isJoint() || line == null)) {
                // during a change (joint) the previous lines stay until it ends; a group first seen
                // in one is written with its old voters
                line = new ServersConfig.Group(g.groupId(), m.voters(), m.isJoint() ? m.oldObservers() : m.observers());
            }
            if (line == null) {
                continue;
            }
            // the preference the group runs with (servers.properties' at start, or set since); one
            // that is no voter of the line (a change took it out) is not written: the file would not load
            int preferred = g.preferredLeader();
            boolean votes = false;
            for (int v : line.members) {
                votes |= v == preferred;
            }
            line = line.withPreferredLeader(votes ? preferred : 0);
            if (!line.isMember(nodeId)) {
                // runs it outside its configuration (joining before the change, or taken out before
                // remove-group): listed so the next start runs it again
                line = line.withNonMember(nodeId);
            } else if (line.nonMembers.length > 0) {
                line = withoutNonMember(line, nodeId);
            }
            groups.put(g.groupId(), line);
        }
        for (Integer id : hosted) {
            if (!now.contains(id)) {
                removedHere.add(id);
            }
        }
        removedHere.removeAll(now);
        for (Integer id : removedHere) {
            groups.remove(id);
        }
        hosted.clear();
        hosted.addAll(now);
        return new ServersConfig(nodes, groups);
    }

    private static ServersConfig.Group withoutNonMember(ServersConfig.Group g, int nodeId) {
        int[] rest = java.util.Arrays.stream(g.nonMembers).filter(id -> id != nodeId).toArray();
        return rest.length == g.nonMembers.length ? g
                : new ServersConfig.Group(g.id, g.members, g.observers, rest, g.preferredLeader);
    }

    /** The layout as last written or loaded. */
    synchronized ServersConfig written() {
        return written;
    }

}
