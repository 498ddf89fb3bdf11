package io.poyang.server.metrics;

import io.poyang.common.DurationHistogram;
import io.poyang.fiber.Dispatcher;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.NetTraffic;
import io.poyang.raft.client.GroupStatus;
import io.poyang.raft.client.RaftRole;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.store.LogJournalStats;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What {@code GET /metrics} shows. Nothing here is kept up to date on a hot path: every figure is a
 * counter or a published field its owning thread keeps anyway — plain fields read racily
 * ({@link DurationHistogram}s, write outcomes, net traffic, dispatcher counters) or volatile ones —
 * and the few figures that only a group's dispatcher can see (persisted index, per-follower lag,
 * queue lengths) are asked for once per scrape with a task on that dispatcher. One sampler thread
 * turns the write counters into ops/s once a second.
 *
 * <p>All names start with {@code poyang_}; every sample carries {@code node}, group figures also
 * {@code group}. docs/operations.md lists them with their meaning.
 */
public final class NodeMetrics {

    /** How long a scrape waits for a group's dispatcher to answer. */
    private static final long GROUP_ANSWER_MILLIS = 2_000;
    private static final String[] QUEUES = {"writes", "reads", "appends", "votes"};

    private static final PoyangLog log = PoyangLogs.get(NodeMetrics.class);

    private final String node;
    private final RaftServer server;
    /** group id → write ops/s over the last sampling second. */
    private final Map<Integer, Double> writeRates = new ConcurrentHashMap<>();
    /** group id → the last sample of its write count; a restarted group is a new object with new counters. */
    private final Map<Integer, WriteSample> lastSample = new ConcurrentHashMap<>();
    private ScheduledExecutorService sampler;

    public NodeMetrics(int nodeId, RaftServer server) {
        this.node = String.valueOf(nodeId);
        this.server = server;
    }

    /** Starts the once-a-second sampler of write rates. */
    public void start() {
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "poyang-" + node + "-metrics-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(this::sampleRatesQuietly, 1, 1, TimeUnit.SECONDS);
    }

    public void stop() {
        if (sampler != null) {
            sampler.shutdownNow();
        }
    }

    /** A task of a scheduled executor that throws is never run again: the gauge would freeze. */
    private void sampleRatesQuietly() {
        try {
            sampleRates();
        } catch (RuntimeException e) {
            log.warn("node {}: sampling the write rates failed; trying again in a second", node, e);
        }
    }

    private void sampleRates() {
        long now = System.nanoTime();
        List<Integer> present = new ArrayList<>();
        for (RaftGroup g : server.groups()) {
            present.add(g.groupId());
            long total = writes(g);
            WriteSample prev = lastSample.put(g.groupId(), new WriteSample(g, now, total));
            if (prev != null && prev.group == g && now > prev.atNanos) {
                writeRates.put(g.groupId(), (total - prev.writes) * 1e9 / (now - prev.atNanos));
            } else if (prev != null) {
                // restart-group replaced the group: its counters began again at 0, and the difference
                // with the old group's would be a negative rate; the next second has a true one
                writeRates.remove(g.groupId());
            }
        }
        writeRates.keySet().retainAll(present);
        lastSample.keySet().retainAll(present);
    }

    private static final class WriteSample {
        final RaftGroup group;
        final long atNanos;
        final long writes;

        WriteSample(RaftGroup group, long atNanos, long writes) {
            this.group = group;
            this.atNanos = atNanos;
            this.writes = writes;
        }
    }

    private static long writes(RaftGroup g) {
        long[] o = g.writeOutcomes();
        return o[0] + o[1] + o[2];
    }

    /** Writes every metric family into {@code out}. */
    public void write(PrometheusText out) {
        List<RaftGroup> groups = server.groups();
        Map<RaftGroup, GroupStatus> details = new LinkedHashMap<>();
        Map<RaftGroup, int[]> queues = new LinkedHashMap<>();
        Map<RaftGroup, Double> delays = new LinkedHashMap<>();
        askDispatchers(groups, details, queues, delays);
        writeGroups(out, groups, details);
        writeJournal(out);
        writeWrites(out, groups);
        writeFollowers(out, details);
        writeFibers(out, queues, delays);
        writeNet(out);
        writeJvm(out);
    }

    /** One round of questions to the groups' dispatchers; a group that does not answer in time is left out. */
    private void askDispatchers(List<RaftGroup> groups, Map<RaftGroup, GroupStatus> details,
                                Map<RaftGroup, int[]> queues, Map<RaftGroup, Double> delays) {
        Map<RaftGroup, CompletableFuture<GroupStatus>> d = new LinkedHashMap<>();
        Map<RaftGroup, CompletableFuture<int[]>> q = new LinkedHashMap<>();
        Map<RaftGroup, CompletableFuture<Long>> lat = new LinkedHashMap<>();
        for (RaftGroup g : groups) {
            long asked = System.nanoTime();
            lat.put(g, g.callInGroup(() -> System.nanoTime() - asked));
            d.put(g, g.detailedStatus());
            q.put(g, g.queueLengths());
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GROUP_ANSWER_MILLIS);
        for (RaftGroup g : groups) {
            GroupStatus s = await(d.get(g), deadline);
            if (s != null) {
                details.put(g, s);
            }
            int[] lengths = await(q.get(g), deadline);
            if (lengths != null) {
                queues.put(g, lengths);
            }
            Long delay = await(lat.get(g), deadline);
            if (delay != null) {
                delays.put(g, delay / 1e9);
            }
        }
    }

    private static <T> T await(CompletableFuture<T> f, long deadlineNanos) {
        try {
            return f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception e) {
            return null;   // stopping, failed, or too slow: left out of this scrape
        }
    }

    private void writeGroups(PrometheusText out, List<RaftGroup> groups, Map<RaftGroup, GroupStatus> details) {
        out.family("poyang_raft_role", "gauge", "1 for the role the group has on this node (LEADER, FOLLOWER,"
                + " CANDIDATE; NONE while it starts or stops), 0 for the others.");
        for (RaftGroup g : groups) {
            RaftRole role = g.role();
            for (RaftRole r : RaftRole.values()) {
                out.sample(r == role ? 1 : 0, "node", node, "group", id(g), "role", r.name());
            }
        }
        out.family("poyang_raft_observer", "gauge", "1 when this node is a non-voting observer of the group.");
        for (RaftGroup g : groups) {
            io.poyang.raft.core.Members m = g.members();
            out.sample(m != null && m.isObserver(server.nodeId()) ? 1 : 0, "node", node, "group", id(g));
        }
        gauge(out, groups, "poyang_raft_term", "The group's current term on this node.", g -> g.term());
        gauge(out, groups, "poyang_raft_leader_id", "The leader this node knows of (0: none).", g -> g.leaderId());
        gauge(out, groups, "poyang_raft_commit_index", "The highest index known committed.", g -> g.commitIndex());
        gauge(out, groups, "poyang_raft_applied_index", "The highest index applied to the state machine.",
                g -> g.lastApplied());
        out.family("poyang_raft_persisted_index", "gauge", "The highest index fsynced to this node's log.");
        for (Map.Entry<RaftGroup, GroupStatus> e : details.entrySet()) {
            out.sample(e.getValue().persistedIndex(), "node", node, "group", id(e.getKey()));
        }
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
        counter(out, groups, "poyang_log_fsyncs_total", "fsyncs of the group's log. With logJournal on they leave out"
                + " the appends, which the node's journal makes durable (poyang_log_journal_fsyncs_total).",
                g -> g.logFsyncCount());
        counter(out, groups, "poyang_log_writes_total", "Positional writes to the group's log.",
                g -> g.logWriteCount());
        counter(out, groups, "poyang_log_written_bytes_total", "Bytes written to the group's log (items and"
                + " segment markers): with the other groups', what the node asks of its disk.", g -> g.logWrittenBytes());
        histogram(out, "poyang_log_fsync_latency_seconds", "How long the group's log fsyncs took. With logJournal on"
                + " they leave out the appends, which the node's journal makes durable.", groups,
                RaftGroup::logFsyncLatency);
    }

    /** The node's log journal, when it has one; no family at all without it (a 0 would read as a stalled journal). */
    private void writeJournal(PrometheusText out) {
        LogJournalStats j = server.logJournalStats();
        if (j == null) {
            return;
        }
        out.family("poyang_log_journal_fsyncs_total", "counter", "fdatasyncs of the node's log journal (logJournal):"
                + " one per round for the appends of all its groups.");
        out.sample(j.fsyncCount(), "node", node);
        out.family("poyang_log_journal_records_total", "counter", "Records the log journal made durable: the groups'"
                + " log writes (and truncations' zeros); over fsyncs, how many writes each fsync carried.");
        out.sample(j.recordCount(), "node", node);
        out.family("poyang_log_journal_checkpoints_total", "counter", "Log journal checkpoints saved: each fsynced the"
                + " groups' log files written before its position.");
        out.sample(j.checkpointCount(), "node", node);
        out.family("poyang_log_journal_failed", "gauge", "1 when the log journal failed (a failed write, fsync or"
                + " checkpoint): every group's log on the node fails with it; fix the disk, then restart the node.");
        out.sample(j.failed() ? 1 : 0, "node", node);
    }

    private void writeWrites(PrometheusText out, List<RaftGroup> groups) {
        out.family("poyang_raft_writes_total", "counter", "Client writes this node answered as the group's leader, by"
                + " outcome: applied, rejected (refused by the state machine, e.g. CAS_MISMATCH), failed (not applied"
                + " or outcome unknown).");
        String[] outcomes = {"applied", "rejected", "failed"};
        for (RaftGroup g : groups) {
            long[] o = g.writeOutcomes();
            for (int i = 0; i < outcomes.length; i++) {
                out.sample(o[i], "node", node, "group", id(g), "outcome", outcomes[i]);
            }
        }
        out.family("poyang_raft_write_ops_per_second", "gauge", "Client writes answered per second as leader, over"
                + " the last second.");
        for (RaftGroup g : groups) {
            Double r = writeRates.get(g.groupId());
            out.sample(r == null ? 0 : r, "node", node, "group", id(g));
        }
        histogram(out, "poyang_raft_write_latency_seconds", "Leader-side latency of client writes: from the leader"
                + " writer taking a write to its answer (log append, replication, commit, apply).", groups,
                RaftGroup::writeLatency);
    }

    private void writeFollowers(PrometheusText out, Map<RaftGroup, GroupStatus> details) {
        out.family("poyang_raft_follower_match_index", "gauge", "On the leader: the highest index each follower has"
                + " persisted.");
        for (Map.Entry<RaftGroup, GroupStatus> e : details.entrySet()) {
            for (GroupStatus.Follower f : e.getValue().followers()) {
                out.sample(f.matchIndex(), "node", node, "group", id(e.getKey()), "follower",
                        String.valueOf(f.nodeId()), "observer", String.valueOf(f.isObserver()));
            }
        }
        out.family("poyang_raft_follower_lag_entries", "gauge", "On the leader: entries each follower is behind the"
                + " leader's last index.");
        for (Map.Entry<RaftGroup, GroupStatus> e : details.entrySet()) {
            for (GroupStatus.Follower f : e.getValue().followers()) {
                out.sample(f.lag(), "node", node, "group", id(e.getKey()), "follower", String.valueOf(f.nodeId()),
                        "observer", String.valueOf(f.isObserver()));
            }
        }
    }

    private void writeFibers(PrometheusText out, Map<RaftGroup, int[]> queues, Map<RaftGroup, Double> delays) {
        out.family("poyang_fiber_queue_length", "gauge", "Items waiting in a group's fiber channels, read on its"
                + " dispatcher: writes (for the leader writer), reads, appends (AppendEntries and snapshot chunks for"
                + " the follower appender), votes.");
        for (Map.Entry<RaftGroup, int[]> e : queues.entrySet()) {
            for (int i = 0; i < QUEUES.length && i < e.getValue().length; i++) {
                out.sample(e.getValue()[i], "node", node, "group", id(e.getKey()), "queue", QUEUES[i]);
            }
        }
        out.family("poyang_fiber_dispatch_delay_seconds", "gauge", "How long a task posted to the group's dispatcher"
                + " waited before it ran (measured at this scrape): how busy the dispatcher is.");
        for (Map.Entry<RaftGroup, Double> e : delays.entrySet()) {
            out.sample(e.getValue(), "node", node, "group", id(e.getKey()));
        }
        List<Dispatcher> ds = server.dispatchers();
        out.family("poyang_fiber_dispatcher_rounds_total", "counter", "Rounds of a dispatcher thread.");
        for (Dispatcher d : ds) {
            out.sample(d.roundCount(), "node", node, "dispatcher", d.getName());
        }
        out.family("poyang_fiber_dispatcher_steps_total", "counter", "Fiber frame steps a dispatcher ran.");
        for (Dispatcher d : ds) {
            out.sample(d.stepCount(), "node", node, "dispatcher", d.getName());
        }
        out.family("poyang_fiber_dispatcher_parks_total", "counter", "Times a dispatcher parked for lack of work.");
        for (Dispatcher d : ds) {
            out.sample(d.parkCount(), "node", node, "dispatcher", d.getName());
        }
        out.family("poyang_fiber_dispatcher_unparks_total", "counter", "Times another thread woke a dispatcher.");
        for (Dispatcher d : ds) {
            out.sample(d.unparkCount(), "node", node, "dispatcher", d.getName());
        }
    }

    private void writeNet(PrometheusText out) {
        Map<String, NetTraffic> ports = new LinkedHashMap<>();
        ports.put("service", server.serviceTraffic());
        ports.put("replication", server.replicationTraffic());
        ports.put("replication_client", server.replicationClientTraffic());
        out.family("poyang_net_bytes_read_total", "counter", "Bytes read from the sockets, by port (service: clients;"
                + " replication: peers and admin to this node; replication_client: this node's connections to peers).");
        ports.forEach((p, t) -> out.sample(t.bytesRead(), "node", node, "port", p));
        out.family("poyang_net_bytes_written_total", "counter", "Bytes written to the sockets, by port.");
        ports.forEach((p, t) -> out.sample(t.bytesWritten(), "node", node, "port", p));
        out.family("poyang_net_requests_received_total", "counter", "Requests (and one-way messages) received.");
        ports.forEach((p, t) -> out.sample(t.requestsReceived(), "node", node, "port", p));
        out.family("poyang_net_responses_received_total", "counter", "Answers received to requests this node sent.");
        ports.forEach((p, t) -> out.sample(t.responsesReceived(), "node", node, "port", p));
        out.family("poyang_net_connections", "gauge", "Open connections.");
        ports.forEach((p, t) -> out.sample(t.connections(), "node", node, "port", p));
        out.family("poyang_net_pending_requests", "gauge", "Requests this node sent to its peers and not yet answered.");
        out.sample(server.replicationRequestsPending(), "node", node, "port", "replication_client");
        out.family("poyang_net_io_threads_crashed", "gauge", "I/O threads that crashed (a bug, logged as an IMPOSSIBLE"
                + " STATE; their connections were closed): restart the node. With logJournal, port log_journal and"
                + " log_journal_checkpoint are the log journal's threads, whose crash failed every group's log on the"
                + " node.");
        server.crashedIoThreads().forEach((p, n) -> out.sample(n, "node", node, "port", p));
        out.family("poyang_net_peer_misaddressed", "gauge", "1 when the replication address this node has for the peer"
                + " reaches another node (its handshake named another id): nothing is sent to that peer until"
                + " admin add-node gives it its right address.");
        Map<Integer, String> wrong = server.misaddressedNodes();
        for (Integer peer : server.nodeAddresses().keySet()) {
            out.sample(wrong.containsKey(peer) ? 1 : 0, "node", node, "peer", String.valueOf(peer));
        }
    }

    interface GroupFigure {
        double of(RaftGroup g);
    }

    interface GroupHistogram {
        DurationHistogram of(RaftGroup g);
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

    /** A histogram per group: cumulative buckets read once, so +Inf and _count agree. */
    private void histogram(PrometheusText out, String name, String help, List<RaftGroup> groups, GroupHistogram h) {
        out.family(name, "histogram", help);
        for (RaftGroup g : groups) {
            DurationHistogram d = h.of(g);
            long cumulative = 0;
            for (int i = 0; i < DurationHistogram.boundCount(); i++) {
                cumulative += d.bucketCount(i);
                out.sampleNamed(name + "_bucket", cumulative, "node", node, "group", id(g), "le",
                        java.math.BigDecimal.valueOf(DurationHistogram.boundSeconds(i)).toPlainString());
            }
            cumulative += d.bucketCount(DurationHistogram.boundCount());
            out.sampleNamed(name + "_bucket", cumulative, "node", node, "group", id(g), "le", "+Inf");
            out.sampleNamed(name + "_sum", d.sumNanos() / 1e9, "node", node, "group", id(g));
            out.sampleNamed(name + "_count", cumulative, "node", node, "group", id(g));
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
