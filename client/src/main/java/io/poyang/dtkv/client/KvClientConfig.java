package io.poyang.dtkv.client;

import io.poyang.dtkv.KvReadKind;
import io.poyang.raft.client.ClientHeartbeatInterval;
import io.poyang.raft.client.RaftClientConfig;

import java.util.concurrent.Executor;

/** Settings of a {@link KvClient}. Plain fields and chainable setters: set them before creating the client. */
public final class KvClientConfig {

    /** The raft client underneath: the nodes (id → service "host:port") and network settings. */
    public final RaftClientConfig raft = new RaftClientConfig();
    /** The DtKV group operations go to (a client can address others with {@link KvClient#forGroup}). */
    public int groupId = 1;
    /** Deadline of an operation unless given per call. */
    public long timeoutMillis = 5_000;
    /**
     * How long one attempt of a write waits for its answer before the write is sent again — the same
     * session and seq, so the group applies it once — to whoever leads then, within its deadline. A
     * leader that still answers the client's pings but no longer answers writes (its group stuck, a
     * disk that hangs the sync, a leader that lost its group but not its process) then holds a write
     * for one attempt, not its whole deadline. 0, the default: {@link
     * RaftClientConfig#DEFAULT_EXACTLY_ONCE_ATTEMPT_MILLIS} (3 s), or {@link #timeoutMillis} when that
     * is shorter (one attempt then takes the whole deadline). Else between {@value
     * #MIN_ATTEMPT_MILLIS} ms and {@link #timeoutMillis} (checked when the client is made).
     * Shorter finds a new leader sooner, but a write that a healthy, busy leader takes longer to
     * commit is then sent again too: a second log entry, applied as a repeat.
     */
    public long writeAttemptMillis;
    /**
     * How long one attempt of a read that goes to the leader ({@link KvReadKind#LEASE_READ},
     * {@link KvReadKind#READ_INDEX}) or of a watch registration waits for its answer before it is
     * sent again to the leader found by asking every node, within its deadline ({@link #timeoutMillis}).
     * Both change nothing when sent twice. (A single watch add or remove is not sent twice: a copy
     * sent after a later add or remove of its key would undo it. It gets this long to be answered;
     * an add that is not makes the client register the group's watches again whole.) A leader that
     * still answers the client's pings but no
     * longer serves its group (stuck, a hung disk sync, or cut off from its peers so it cannot
     * confirm a read) then holds a read or a registration for one attempt, not the whole deadline.
     * 0, the default: {@link RaftClientConfig#DEFAULT_EXACTLY_ONCE_ATTEMPT_MILLIS} (3 s), or
     * {@link #timeoutMillis} when that is shorter. Else between {@value #MIN_ATTEMPT_MILLIS} ms
     * and {@link #timeoutMillis} (checked when the client is made). Shorter finds a new leader sooner,
     * but a read a healthy, busy leader takes longer to serve is then served twice. A follower read
     * ({@link KvReadKind#FOLLOWER_READ}) has the same limit on each node it is sent to: one the node
     * does not answer in time goes to the next node.
     */
    public long readAttemptMillis;
    /**
     * Where callbacks, futures, watch listeners and lock listeners run. Null: ForkJoinPool.commonPool().
     * A task it rejects (a bounded pool that is full, or one shut down before the client) runs on a
     * thread of the client's own ({@code <name>-kv-overflow-N}, logged as a warning at most once a
     * minute): never on the network thread, and events still run one at a time and in order. It must
     * not run tasks on the calling thread (a caller-runs policy, {@code Runnable::run}): for answers
     * and pushes that is the network thread, which must never block.
     */
    public Executor callbackExecutor;
    /**
     * Run operation callbacks and futures on the network I/O thread: fastest, but a callback must be
     * quick and never block (benchmarks, asynchronous pipelines). Watch and lock listeners still run
     * on the callback executor.
     */
    public boolean callbackOnIoThread;
    /**
     * How reads (get, batchGet, list) are made linearizable unless a view says otherwise
     * ({@link KvClient#withReadKind}): {@link KvReadKind#LEASE_READ} (the default) and
     * {@link KvReadKind#READ_INDEX} go to the leader, {@link KvReadKind#FOLLOWER_READ} to any node.
     */
    public KvReadKind readKind = KvReadKind.LEASE_READ;
    /**
     * Follower reads go to this node while it is connected (a node near the client, say); 0, the
     * default, sends them to the connected nodes in turn.
     */
    public int readNodeId;

    public KvClientConfig() {
        raft.net.name = "KvClient";
    }

    /** Adds a node of the cluster and its service address ("host:port"). */
    public KvClientConfig node(int nodeId, String serviceHostPort) {
        raft.node(nodeId, serviceHostPort);
        return this;
    }

    /**
     * Adds the nodes from "id=host:port,id=host:port,..." or "host:port,host:port,...", the forms of
     * the command-line tools' {@code --servers}. Entries without an id are numbered 1, 2, 3 … in
     * order (after the nodes added before), which is right only while the cluster's ids are exactly
     * that; a node answering under another id fails the calls with
     * {@link io.poyang.raft.client.NodeIdMismatchException}.
     */
    public KvClientConfig servers(String hostPorts) {
        int next = raft.nodes.size() + 1;
        for (String s : hostPorts.split(",")) {
            String entry = s.trim();
            if (entry.isEmpty()) {
                continue;
            }
            int eq = entry.indexOf('=');
            if (eq < 0) {
                raft.node(next++, entry);
                continue;
            }
            int id;
            try {
                id = Integer.parseInt(entry.substring(0, eq).trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("a server is id=host:port or host:port, got '" + entry + "'");
            }
            if (id <= 0) {
                throw new IllegalArgumentException("a node id is positive, got '" + entry + "'");
            }
            raft.node(id, entry.substring(eq + 1).trim());
        }
        return this;
    }

    public KvClientConfig groupId(int groupId) {
        this.groupId = groupId;
        return this;
    }

    public KvClientConfig timeoutMillis(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
        return this;
    }

    public KvClientConfig callbackExecutor(Executor executor) {
        this.callbackExecutor = executor;
        return this;
    }

    public KvClientConfig callbackOnIoThread(boolean onIoThread) {
        this.callbackOnIoThread = onIoThread;
        return this;
    }

    public KvClientConfig readKind(KvReadKind kind) {
        if (kind == null) {
            throw new IllegalArgumentException("readKind must not be null (LEASE_READ is the default)");
        }
        this.readKind = kind;
        return this;
    }

    public KvClientConfig readNodeId(int nodeId) {
        this.readNodeId = nodeId;
        return this;
    }

    /**
     * The least attempt limit, for {@link #writeAttemptMillis} and {@link #readAttemptMillis} alike:
     * below it a write that a healthy leader commits in a round trip and a disk sync, or a read it
     * confirms with its peers, would be sent again and again.
     */
    public static final long MIN_ATTEMPT_MILLIS = 100;

    /** Sets {@link #writeAttemptMillis} (0: the default), at most {@link #timeoutMillis} by the time the client is made. */
    public KvClientConfig writeAttemptMillis(long millis) {
        if (millis != 0 && millis < MIN_ATTEMPT_MILLIS) {
            throw new IllegalArgumentException("writeAttemptMillis must be 0 (the default: 3 s, or timeoutMillis when"
                    + " shorter) or at least " + MIN_ATTEMPT_MILLIS + " ms (shorter would send writes a healthy"
                    + " leader is still committing again and again): " + millis);
        }
        this.writeAttemptMillis = millis;
        return this;
    }

    /** Sets {@link #readAttemptMillis} (0: the default), at most {@link #timeoutMillis} by the time the client is made. */
    public KvClientConfig readAttemptMillis(long millis) {
        if (millis != 0 && millis < MIN_ATTEMPT_MILLIS) {
            throw new IllegalArgumentException("readAttemptMillis must be 0 (the default: 3 s, or timeoutMillis when"
                    + " shorter) or at least " + MIN_ATTEMPT_MILLIS + " ms (shorter would send reads a healthy"
                    + " leader is still serving again and again): " + millis);
        }
        this.readAttemptMillis = millis;
        return this;
    }

    /**
     * The attempt limit writes use: {@link #writeAttemptMillis}, or its default when 0. Throws
     * IllegalArgumentException, saying what to set, when it is outside its bounds.
     */
    long effectiveWriteAttemptMillis() {
        return effectiveAttemptMillis("writeAttemptMillis", writeAttemptMillis, "write");
    }

    /**
     * The attempt limit reads to the leader and watch registrations use: {@link #readAttemptMillis},
     * or its default when 0. Throws IllegalArgumentException, saying what to set, when it is outside
     * its bounds.
     */
    long effectiveReadAttemptMillis() {
        return effectiveAttemptMillis("readAttemptMillis", readAttemptMillis, "read");
    }

    private long effectiveAttemptMillis(String field, long millis, String what) {
        if (millis == 0) {
            return Math.max(1, Math.min(RaftClientConfig.DEFAULT_EXACTLY_ONCE_ATTEMPT_MILLIS, timeoutMillis));
        }
        if (millis < MIN_ATTEMPT_MILLIS || millis > timeoutMillis) {
            throw new IllegalArgumentException("KvClientConfig." + field + " is " + millis
                    + " ms; it must be between " + MIN_ATTEMPT_MILLIS + " ms and timeoutMillis (" + timeoutMillis
                    + " ms): an attempt cannot outlast the " + what + "'s deadline. Lower it, raise timeoutMillis, or"
                    + " set 0 for the default (3 s, or timeoutMillis when shorter)");
        }
        return millis;
    }

    /** The least {@link #heartbeatIntervalMillis(long)}: {@link ClientHeartbeatInterval#MIN_MILLIS}, as for every client. */
    public static final long MIN_HEARTBEAT_INTERVAL_MILLIS = ClientHeartbeatInterval.MIN_MILLIS;
    /** The most {@link #heartbeatIntervalMillis(long)}: {@link ClientHeartbeatInterval#MAX_MILLIS}, as for every client. */
    public static final long MAX_HEARTBEAT_INTERVAL_MILLIS = ClientHeartbeatInterval.MAX_MILLIS;

    /**
     * How soon a server that stopped answering with its connection open (its process paused, or the
     * network to it black-holed) is noticed: a connection that read nothing for {@code millis} pings
     * the server and closes when nothing is read for {@code millis} more, so about twice this. Writes
     * pending on it are then sent to the new leader within their deadline (the same session and seq:
     * applied once), reads to wherever they can be served, and watches are registered again.
     * Default {@link RaftClientConfig#CLIENT_HEARTBEAT_INTERVAL_MILLIS} (1 s: noticed in about 2 s,
     * well within the default 5 s {@link #timeoutMillis}). An idle client pings each connected node
     * once per interval; the node answers on its I/O thread, so a busy node does not close the
     * connection, but one whose I/O thread stalls longer than the interval does. Between
     * {@value #MIN_HEARTBEAT_INTERVAL_MILLIS} and {@value #MAX_HEARTBEAT_INTERVAL_MILLIS} ms
     * ({@link ClientHeartbeatInterval}).
     */
    public KvClientConfig heartbeatIntervalMillis(long millis) {
        raft.net.heartbeatIntervalMillis = ClientHeartbeatInterval.checkSetting(millis);
        return this;
    }

    /**
     * The heartbeat interval the client is made with. {@code raft.net.heartbeatIntervalMillis} is a
     * public field of the network layer's config (where 0, no heartbeat, is allowed for node-to-node
     * connections), so a value set on it directly has not been through {@link #heartbeatIntervalMillis(long)}:
     * it is checked here, when the client is made (before the raft client underneath checks it again,
     * so the message names this config's field). Throws IllegalArgumentException naming the field,
     * the bounds and the value.
     */
    long checkedHeartbeatIntervalMillis() {
        return ClientHeartbeatInterval.checkConfigured("KvClientConfig", "raft.net", "KvClient",
                raft.net.heartbeatIntervalMillis);
    }

    /** Most requests sent and not answered (past it an operation fails at once with FlowControlException). */
    public KvClientConfig maxPendingRequests(int max) {
        raft.net.maxPendingRequests = max;
        return this;
    }
}
