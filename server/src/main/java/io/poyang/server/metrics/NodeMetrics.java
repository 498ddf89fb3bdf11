package io.poyang.server.metrics;

import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.util.List;

/**
 * What {@code GET /metrics} shows, read when it is asked for: every figure is a counter or a
 * published field the owning thread keeps anyway (plain or volatile fields read racily), so serving
 * metrics costs the hot paths nothing. All names start with {@code poyang_}; every sample carries
 * {@code node}, group figures also {@code group}.
 */
public final class NodeMetrics {

    private final String node;
    private final RaftServer server;

    public NodeMetrics(int nodeId, RaftServer server) {
        this.node = String.valueOf(nodeId);
        this.server = server;
    }

    public void write(PrometheusText out) {
        writeGroups(out, server.groups());
        writeJvm(out);
    }

    private void writeGroups(PrometheusText out, List<RaftGroup> groups) {
        out.family("poyang_raft_role", "gauge", "1 for the role the group has on this node (LEADER, FOLLOWER,"
                + " CANDIDATE; NONE while it starts or stops), 0 for the others.");
        for (RaftGroup g : groups) {
            RaftRole role = g.role();
            for (RaftRole r : RaftRole.values()) {
                out.sample(r == role ? 1 : 0, "node", node, "group", id(g), "role", r.name());
            }
        }
        gauge(out, groups, "poyang_raft_term", "The group's current term on this node.", g -> g.term());
        gauge(out, groups, "poyang_raft_leader_id", "The leader this node knows of (0: none).", g -> g.leaderId());
        gauge(out, groups, "poyang_raft_commit_index", "The highest index known committed.", g -> g.commitIndex());
        gauge(out, groups, "poyang_raft_applied_index", "The highest index applied to the state machine.",
                g -> g.lastApplied());
        gauge(out, groups, "poyang_raft_last_log_index", "The last index in this node's log.", g -> g.lastLogIndex());
        gauge(out, groups, "poyang_raft_first_log_index", "The first index still in this node's log.",
                g -> g.firstLogIndex());
        gauge(out, groups, "poyang_raft_pending_writes", "Writes taken and not yet answered (flow control).",
                g -> g.pendingWrites());
        gauge(out, groups, "poyang_raft_pending_write_bytes", "Body bytes of the pending writes.",
                g -> g.pendingWriteBytes());
        gauge(out, groups, "poyang_raft_failed", "1 when the group failed on this node and needs a restart.",
                g -> g.failure() == null ? 0 : 1);
        counter(out, groups, "poyang_raft_election_rounds_total", "Elections (pre-vote rounds) this node started.",
                g -> g.electionRounds());
        counter(out, groups, "poyang_log_fsyncs_total", "fsyncs of the group's log.", g -> g.logFsyncCount());
        counter(out, groups, "poyang_log_writes_total", "Positional writes to the group's log.",
                g -> g.logWriteCount());
    }

    interface GroupFigure {
        double of(RaftGroup g);
    }

    private void gauge(PrometheusText out, List<RaftGroup> groups, String name, String help, GroupFigure f) {
        out.family(name, "gauge", help);
        for (RaftGroup g : groups) {
            out.sample(f.of(g), "node", node, "group", id(g));
        }
    }

    private void counter(PrometheusText out, List<RaftGroup> groups, String name, String help, GroupFigure f) {
        out.family(name, "counter", help);
        for (RaftGroup g : groups) {
            out.sample(f.of(g), "node", node, "group", id(g));
        }
    }

    private static String id(RaftGroup g) {
        return String.valueOf(g.groupId());
    }

    private void writeJvm(PrometheusText out) {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        MemoryUsage heap = mem.getHeapMemoryUsage();
        MemoryUsage nonHeap = mem.getNonHeapMemoryUsage();
        out.family("poyang_jvm_memory_used_bytes", "gauge", "JVM memory in use.");
        out.sample(heap.getUsed(), "node", node, "area", "heap");
        out.sample(nonHeap.getUsed(), "node", node, "area", "nonheap");
        out.family("poyang_jvm_memory_committed_bytes", "gauge", "JVM memory committed by the OS.");
        out.sample(heap.getCommitted(), "node", node, "area", "heap");
        out.sample(nonHeap.getCommitted(), "node", node, "area", "nonheap");
        out.family("poyang_jvm_memory_max_bytes", "gauge", "The most JVM memory may grow to (-1: no limit).");
        out.sample(heap.getMax(), "node", node, "area", "heap");
        out.sample(nonHeap.getMax(), "node", node, "area", "nonheap");
        List<GarbageCollectorMXBean> gcs = ManagementFactory.getGarbageCollectorMXBeans();
        out.family("poyang_jvm_gc_collections_total", "counter", "Garbage collections by collector.");
        for (GarbageCollectorMXBean gc : gcs) {
            out.sample(Math.max(0, gc.getCollectionCount()), "node", node, "collector", gc.getName());
        }
        out.family("poyang_jvm_gc_seconds_total", "counter", "Time spent in garbage collection by collector.");
        for (GarbageCollectorMXBean gc : gcs) {
            out.sample(Math.max(0, gc.getCollectionTime()) / 1000.0, "node", node, "collector", gc.getName());
        }
        out.family("poyang_jvm_threads", "gauge", "Live JVM threads.");
        out.sample(ManagementFactory.getThreadMXBean().getThreadCount(), "node", node);
        out.family("poyang_process_uptime_seconds", "gauge", "Seconds since the JVM started.");
        out.sample(ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0, "node", node);
    }
}
