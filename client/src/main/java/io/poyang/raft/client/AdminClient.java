package io.poyang.raft.client;

import io.poyang.common.DaemonTimer;
import io.poyang.common.Futures;
import io.poyang.common.LifeCycle;
import io.poyang.common.PoyangException;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.net.CallOptions;
import io.poyang.net.DecoderFactory;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetNotSentException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.NioClient;
import io.poyang.net.Peer;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Administers a raft cluster through the nodes' replication (admin) ports: where nodes and groups
 * stand, leader transfer, membership changes, and the groups and nodes each node knows.
 *
 * <ul>
 * <li><b>Node commands</b> go to the node named: {@link #nodeStatus}, {@link #groupStatus(int, int)},
 * {@link #addGroup}, {@link #removeGroup}, {@link #addNode}, {@link #removeNode},
 * {@link #listNodes}, {@link #setPreferredLeader}.</li>
 * <li><b>Group commands</b> go to the group's leader, found by asking the nodes (RAFT_STATUS) and
 * followed when a node answers NOT_LEADER: {@link #leaderStatus}, {@link #transferLeader},
 * {@link #prepareMembers}, {@link #commitMembers}, {@link #abortMembers}. They are all safe to
 * retry, so the client retries them on a new leader until their timeout.</li>
 * </ul>
 *
 * <p>Every command has a blocking form, which throws the typed exception itself, and an
 * {@code ...Async} form whose future fails with it: {@link RaftAdminException} (the node refused;
 * {@link RaftAdminException#error()} says why and the message what to do), {@link NotLeaderException}
 * (no leader took a group command before its timeout), {@link PoyangTimeoutException} (no answer in
 * time; the command may have taken effect — look at the status, then retry),
 * {@link NetConnectionException} (the node cannot be reached), {@link RaftOutcomeUnknownException}
 * (the connection was lost after a {@link #restartGroup} was sent: it may have been done; it is not
 * sent again, since a second copy would restart the group again), {@link StoppedException}, and
 * {@link IllegalArgumentException} for a node id this client has no address for.
 *
 * <p>Node commands are sent again while the node cannot be reached. Status queries, adding and
 * removing a group or a node, setting a preferred leader change nothing the second time (the node answers success when it is
 * done already), so they are also sent again when the connection was lost after they went out;
 * {@link #restartGroup} is sent again only when it certainly never left.
 *
 * <p>A membership change is two commands: {@link #prepareMembers} with the target configuration
 * (the group runs on the old and new voters together once it returns), then {@link #commitMembers}
 * with the same target, or {@link #abortMembers}. New members must host the group first
 * ({@link #addGroup} on each, with the current voters) and be known to the leader
 * ({@link #addNode} on every node).
 *
 * <pre>{@code
 * AdminClient admin = new AdminClient(new AdminClientConfig().node(1, "h1:9431").node(2, "h2:9431").node(3, "h3:9431"));
 * admin.start();
 * GroupStatus s = admin.leaderStatus(1, 5_000);       // role, term, indexes, per-follower lag
 * admin.transferLeader(1, 2, 10_000);
 * }</pre>
 */
public final class AdminClient extends LifeCycle implements AutoCloseable {

    private final AdminClientConfig config;
    private final NioClient net;
    private final Map<Integer, String> addresses = new ConcurrentHashMap<>();
    private final Map<Integer, Peer> peers = new ConcurrentHashMap<>();
    /** group id → its leader as last learned. */
    private final Map<Integer, Integer> leaders = new ConcurrentHashMap<>();
    private final Executor callbackExecutor;
    private ScheduledExecutorService timer;

    public AdminClient(AdminClientConfig config) {
        if (config.nodes.isEmpty()) {
            throw new IllegalArgumentException("an admin client needs at least one node: config.node(id, \"host:port\")"
                    + " with the node's replication (admin) port");
        }
        // net.heartbeatIntervalMillis is a public field the setter's bounds cannot guard
        ClientHeartbeatInterval.checkConfigured("AdminClientConfig", "net", "AdminClient", config.net.heartbeatIntervalMillis);
        this.config = config;
        config.net.servers.clear();
        this.net = new NioClient(config.net);
        this.callbackExecutor = config.callbackExecutor != null ? config.callbackExecutor : ForkJoinPool.commonPool();
    }

    @Override
    protected String describe() {
        return "admin client";
    }

    @Override
    protected void doStart() {
        net.start();
        for (Map.Entry<Integer, String> e : config.nodes.entrySet()) {
            setAddress(e.getKey(), e.getValue());
        }
        timer = DaemonTimer.create(config.net.name + "-timer");
    }

    @Override
    protected void doStop() {
        List<Runnable> dropped = timer != null ? timer.shutdownNow() : Collections.<Runnable>emptyList();
        net.stop();
        DaemonTimer.runDropped(dropped);
    }

    /** {@link #stop()}, for try-with-resources. */
    @Override
    public void close() {
        stop();
    }

    /** Sets or changes the admin (replication) address of a node, e.g. one just added to the cluster. Any thread. */
    public void setNodeAddress(int nodeId, String replicationHostPort) {
        checkRunning();
        setAddress(nodeId, replicationHostPort);
    }

    private synchronized void setAddress(int nodeId, String hostPort) {
        if (nodeId <= 0) {
            throw new IllegalArgumentException("node ids are positive: " + nodeId);
        }
        String old = addresses.put(nodeId, hostPort);
        if (hostPort.equals(old)) {
            return;
        }
        Peer p = peers.remove(nodeId);
        if (p != null) {
            net.removePeer(p);
        }
        peers.put(nodeId, net.addPeer(hostPort));
    }

    /** The nodes this client knows, node id → admin address. */
    public Map<Integer, String> knownNodes() {
        return new TreeMap<>(addresses);
    }

    // ================================================================ node commands

    /** The groups node {@code nodeId} hosts and the nodes it knows. */
    public NodeStatus nodeStatus(int nodeId) {
        return join(nodeStatusAsync(nodeId));
    }

    /**
     * Fails with {@link NodeIdMismatchException} when the node at {@code nodeId}'s address says it is
     * another node (commands that change a node ask for its status first, so they never go to the
     * wrong machine).
     */
    public CompletableFuture<NodeStatus> nodeStatusAsync(int nodeId) {
        return toNode(nodeId, RaftCommands.ADMIN_NODE_STATUS, AdminMessages.NODE_STATUS_REQUEST.builder().build(),
                NodeStatus.DECODER, "node status").thenApply(ns -> {
                    if (ns.nodeId() != nodeId) {
                        throw new NodeIdMismatchException(nodeId, ns.nodeId(), addresses.get(nodeId));
                    }
                    return ns;
                });
    }

    /** Where group {@code groupId} stands on node {@code nodeId} (per-follower lag only when that node leads). */
    public GroupStatus groupStatus(int nodeId, int groupId) {
        return join(groupStatusAsync(nodeId, groupId));
    }

    public CompletableFuture<GroupStatus> groupStatusAsync(int nodeId, int groupId) {
        return toNode(nodeId, RaftCommands.ADMIN_GROUP_STATUS, AdminMessages.GROUP_STATUS_REQUEST.builder()
                .set(1, groupId).build(), GroupStatus.DECODER, "status of raft group " + groupId);
    }

    /**
     * Makes node {@code nodeId} host group {@code groupId}, starting from the configuration
     * {@code voters} / {@code observers} (a node joining an existing group passes its current
     * configuration and learns later changes from the leader). Idempotent: a group already there is
     * left as it is. The node needs a state machine factory (UNSUPPORTED otherwise) and the
     * addresses of the members (UNKNOWN_NODE otherwise).
     */
    public void addGroup(int nodeId, int groupId, int[] voters, int[] observers) {
        join(addGroupAsync(nodeId, groupId, voters, observers));
    }

    public CompletableFuture<Void> addGroupAsync(int nodeId, int groupId, int[] voters, int[] observers) {
        return addGroupAsync(nodeId, groupId, voters, observers, config.requestTimeoutMillis);
    }

    /**
     * As {@link #addGroupAsync(int, int, int[], int[])}, waiting up to {@code timeoutMillis} instead of
     * {@code requestTimeoutMillis}: the node answers once the group runs, after it has replayed its
     * log, which for a large log takes longer than a request usually may.
     */
    public CompletableFuture<Void> addGroupAsync(int nodeId, int groupId, int[] voters, int[] observers,
                                                 long timeoutMillis) {
        return toNode(nodeId, RaftCommands.ADMIN_ADD_GROUP, AdminMessages.ADD_GROUP_REQUEST.builder().set(1, groupId)
                .set(2, voters).set(3, observers).build(), AdminMessages.ACK, "adding raft group " + groupId,
                timeoutMillis).thenApply(m -> null);
    }

    /**
     * Makes node {@code nodeId} stop hosting group {@code groupId} (its fibers stop; with
     * {@code deleteData} its log and snapshots are deleted). Idempotent. This does not change the
     * group's configuration: take the node out with a membership change first.
     */
    public void removeGroup(int nodeId, int groupId, boolean deleteData) {
        join(removeGroupAsync(nodeId, groupId, deleteData));
    }

    public CompletableFuture<Void> removeGroupAsync(int nodeId, int groupId, boolean deleteData) {
        return toNode(nodeId, RaftCommands.ADMIN_REMOVE_GROUP, AdminMessages.REMOVE_GROUP_REQUEST.builder()
                .set(1, groupId).set(2, deleteData).build(), AdminMessages.ACK, "removing raft group " + groupId)
                .thenApply(m -> null);
    }

    /**
     * Makes node {@code nodeId} stop group {@code groupId} and start it again from its files (log,
     * snapshots, status) with a new state machine: how a group that failed on that node (its
     * {@link GroupStatus#failure()} is set, e.g. its disk filled) comes back once the cause is
     * fixed, without restarting the node. Returns when the new group runs (it then catches up
     * from the leader). NO_SUCH_GROUP when the node does not host the group.
     *
     * <p>Not idempotent (a second copy that arrives after the first restart ended restarts the group
     * again), so it is sent again only when it certainly never left: when the connection is lost
     * after it was sent, it fails with {@link RaftOutcomeUnknownException} — look at the group's
     * status on the node ({@link #groupStatus}) before asking again.
     */
    public void restartGroup(int nodeId, int groupId) {
        join(restartGroupAsync(nodeId, groupId));
    }

    public CompletableFuture<Void> restartGroupAsync(int nodeId, int groupId) {
        return restartGroupAsync(nodeId, groupId, config.requestTimeoutMillis);
    }

    /**
     * As {@link #restartGroupAsync(int, int)}, waiting up to {@code timeoutMillis} instead of
     * {@code requestTimeoutMillis}: the old group's stop (up to 30 s for its file operations) and the
     * new one's replay can take longer than a request usually may.
     */
    public CompletableFuture<Void> restartGroupAsync(int nodeId, int groupId, long timeoutMillis) {
        return toNode(nodeId, RaftCommands.ADMIN_RESTART_GROUP, AdminMessages.RESTART_GROUP_REQUEST.builder()
                .set(1, groupId).build(), AdminMessages.ACK, "restart of raft group " + groupId, timeoutMillis,
                groupId).thenApply(m -> null);
    }

    /**
     * Sets node {@code onNodeId}'s preferred leader of group {@code groupId} to voter
     * {@code preferredNodeId} (0: none): whichever node leads the group hands the leadership to that
     * node once it is caught up, and again after every failover. The setting is each node's own and
     * not replicated, and the leader acts on its own: set it on every node of the group (a node that
     * later leads acts on its setting). It lasts until the node restarts, unless the node writes it
     * to its configuration (a DtKV node does, to servers.properties). Idempotent. Returns the group's
     * status on that node after the setting ({@link GroupStatus#preferredLeader()}).
     *
     * <p>Refused with {@link RaftAdminException}: BAD_ARGUMENT when {@code preferredNodeId} is not a
     * voter of the group's configuration on that node (add it with a membership change first),
     * NO_SUCH_GROUP when the node does not host the group, UNSUPPORTED from a node too old to know
     * the command.
     */
    public GroupStatus setPreferredLeader(int onNodeId, int groupId, int preferredNodeId) {
        return join(setPreferredLeaderAsync(onNodeId, groupId, preferredNodeId));
    }

    public CompletableFuture<GroupStatus> setPreferredLeaderAsync(int onNodeId, int groupId, int preferredNodeId) {
        if (preferredNodeId < 0) {
            CompletableFuture<GroupStatus> f = new CompletableFuture<>();
            f.completeExceptionally(new IllegalArgumentException("a preferred leader is a node id, or 0 for none: "
                    + preferredNodeId));
            return f;
        }
        return toNode(onNodeId, RaftCommands.ADMIN_SET_PREFERRED_LEADER, AdminMessages.SET_PREFERRED_LEADER_REQUEST
                .builder().set(1, groupId).set(2, preferredNodeId).build(), GroupStatus.DECODER,
                "preferred-leader setting of raft group " + groupId);
    }

    /**
     * Tells node {@code onNodeId} where node {@code nodeId}'s replication port is
     * ({@code "host:port"}); it connects to it. Idempotent. Do it on every node before the new node
     * joins a group.
     */
    public void addNode(int onNodeId, int nodeId, String replicationHostPort) {
        join(addNodeAsync(onNodeId, nodeId, replicationHostPort));
    }

    public CompletableFuture<Void> addNodeAsync(int onNodeId, int nodeId, String replicationHostPort) {
        return toNode(onNodeId, RaftCommands.ADMIN_ADD_NODE, AdminMessages.ADD_NODE_REQUEST.builder().set(1, nodeId)
                .set(2, replicationHostPort).build(), AdminMessages.ACK, "adding node " + nodeId)
                .thenApply(m -> null);
    }

    /**
     * Makes node {@code onNodeId} forget node {@code nodeId}. Refused (NODE_IN_USE) while the node
     * is in the configuration of a group hosted there. Idempotent.
     */
    public void removeNode(int onNodeId, int nodeId) {
        join(removeNodeAsync(onNodeId, nodeId));
    }

    public CompletableFuture<Void> removeNodeAsync(int onNodeId, int nodeId) {
        return toNode(onNodeId, RaftCommands.ADMIN_REMOVE_NODE, AdminMessages.REMOVE_NODE_REQUEST.builder()
                .set(1, nodeId).build(), AdminMessages.ACK, "removing node " + nodeId).thenApply(m -> null);
    }

    /** The nodes node {@code nodeId} knows (itself included), node id → replication address. */
    public Map<Integer, String> listNodes(int nodeId) {
        return nodeStatus(nodeId).nodes();
    }

    public CompletableFuture<Map<Integer, String>> listNodesAsync(int nodeId) {
        return nodeStatusAsync(nodeId).thenApply(NodeStatus::nodes);
    }

    // ================================================================ group commands (leader)

    /**
     * The leader of {@code groupId}, found by asking every node this client knows (the node that
     * says it leads in the highest term, else the leader the nodes name); 0 when none is known.
     */
    public int findLeader(int groupId) {
        return join(findLeaderAsync(groupId));
    }

    public CompletableFuture<Integer> findLeaderAsync(int groupId) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        searchLeader(groupId, f);
        return f.thenApplyAsync(l -> l, callbackExecutor);
    }

    /** Where group {@code groupId} stands on its leader, with every follower's match index and lag. */
    public GroupStatus leaderStatus(int groupId, long timeoutMillis) {
        return join(leaderStatusAsync(groupId, timeoutMillis));
    }

    public CompletableFuture<GroupStatus> leaderStatusAsync(int groupId, long timeoutMillis) {
        return new LeaderCall<GroupStatus>(groupId, "status", timeoutMillis, RaftCommands.ADMIN_GROUP_STATUS, GroupStatus.DECODER,
                left -> AdminMessages.GROUP_STATUS_REQUEST.builder().set(1, groupId).build()) {
            @Override
            boolean accept(GroupStatus s) {
                // a node that stepped down between our question and its answer is not the leader
                return s.role() == RaftRole.LEADER;
            }
        }.start();
    }

    /**
     * Hands the leadership of {@code groupId} to voter {@code targetNodeId}: the leader stops taking
     * writes, brings the target up to date and tells it to stand. Returns once the target leads (at
     * once when it already does). Writes in flight either complete or fail with NOT_LEADER; none is
     * lost. Fails with {@link PoyangTimeoutException} when the target did not win in time (the old
     * leader then goes on leading).
     */
    public void transferLeader(int groupId, int targetNodeId, long timeoutMillis) {
        join(transferLeaderAsync(groupId, targetNodeId, timeoutMillis));
    }

    public CompletableFuture<Void> transferLeaderAsync(int groupId, int targetNodeId, long timeoutMillis) {
        // A retry that reaches the target once it leads is answered at once: the target is the leader.
        return new LeaderCall<>(groupId, "leader transfer to node " + targetNodeId, timeoutMillis,
                RaftCommands.ADMIN_TRANSFER_LEADER, AdminMessages.TRANSFER_LEADER_RESPONSE,
                left -> AdminMessages.TRANSFER_LEADER_REQUEST.builder().set(1, groupId).set(2, targetNodeId)
                        .set(3, left).build()).start().thenApply(m -> null);
    }

    /**
     * Prepares a change of {@code groupId}'s configuration to {@code voters} and {@code observers}
     * (joint consensus): new voters are caught up first, then the joint configuration is committed.
     * Returns it (old voters → new voters). Idempotent: preparing the same target again returns the
     * same joint configuration. Refused (CONFLICT) while a different change is prepared.
     */
    public GroupMembers prepareMembers(int groupId, int[] voters, int[] observers, long timeoutMillis) {
        return join(prepareMembersAsync(groupId, voters, observers, timeoutMillis));
    }

    public CompletableFuture<GroupMembers> prepareMembersAsync(int groupId, int[] voters, int[] observers,
                                                               long timeoutMillis) {
        return membersCall(groupId, "membership prepare", RaftCommands.ADMIN_PREPARE_MEMBERS, voters, observers,
                timeoutMillis);
    }

    /**
     * Commits the prepared change (the same {@code voters} and {@code observers} as the prepare);
     * returns the new configuration. Idempotent: committing a change already committed returns the
     * configuration. Refused (CONFLICT) when nothing is prepared or the prepared change leads elsewhere.
     */
    public GroupMembers commitMembers(int groupId, int[] voters, int[] observers, long timeoutMillis) {
        return join(commitMembersAsync(groupId, voters, observers, timeoutMillis));
    }

    public CompletableFuture<GroupMembers> commitMembersAsync(int groupId, int[] voters, int[] observers,
                                                              long timeoutMillis) {
        return membersCall(groupId, "membership commit", RaftCommands.ADMIN_COMMIT_MEMBERS, voters, observers,
                timeoutMillis);
    }

    /** Aborts the prepared change; returns the configuration from before it. Idempotent. */
    public GroupMembers abortMembers(int groupId, long timeoutMillis) {
        return join(abortMembersAsync(groupId, timeoutMillis));
    }

    public CompletableFuture<GroupMembers> abortMembersAsync(int groupId, long timeoutMillis) {
        return membersCall(groupId, "membership abort", RaftCommands.ADMIN_ABORT_MEMBERS, null, null, timeoutMillis);
    }

    private CompletableFuture<GroupMembers> membersCall(int groupId, String what, int command, int[] voters,
                                                        int[] observers, long timeoutMillis) {
        return new LeaderCall<>(groupId, what, timeoutMillis, command, GroupMembers.DECODER, left -> {
            FieldMessage.Builder b = AdminMessages.CHANGE_MEMBERS_REQUEST.builder().set(1, groupId).set(4, left);
            if (voters != null) {
                b.set(2, voters).set(3, observers == null ? new int[0] : observers);
            }
            return b.build();
        }).start();
    }

    // ================================================================ machinery

    /** The {@code onceForGroup} of a node command whose second copy changes nothing. */
    private static final int REPEATABLE_COMMAND = 0;

    /** The result of a future, or its typed failure thrown as it is. */
    private static <T> T join(CompletableFuture<T> f) {
        return Futures.await(f, "an admin command");
    }

    private Peer peerOf(int nodeId) {
        Peer p = peers.get(nodeId);
        if (p == null) {
            throw new IllegalArgumentException("node " + nodeId + " is not known to this admin client (it knows "
                    + knownNodes().keySet() + "); give its admin address with setNodeAddress");
        }
        return p;
    }

    /** A failed answer from node {@code nodeId} as the typed exception callers see. */
    private static Throwable typed(Throwable e, int nodeId, String what) {
        if (e instanceof RemoteException) {
            RemoteException r = (RemoteException) e;
            String m = r.remoteMessage() != null ? r.remoteMessage() : r.getMessage();
            switch (r.responseCode()) {
                case ResponseCode.BIZ_ERROR:
                    return new RaftAdminException(AdminError.of(r.bizCode()), nodeId, m);
                case ResponseCode.TIMEOUT:
                    return new PoyangTimeoutException(what + " did not finish in time on node " + nodeId + ": " + m);
                case ResponseCode.STOPPING:
                    return new StoppedException("node " + nodeId + " is stopping: " + m);
                case ResponseCode.COMMAND_NOT_FOUND:
                    return new RaftAdminException(AdminError.UNSUPPORTED, nodeId, "node " + nodeId
                            + " does not know the admin command for " + what + " (an older version?): " + m);
                default:
                    return new PoyangException("node " + nodeId + " failed the " + what + ": " + r.getMessage(), r);
            }
        }
        if (e instanceof NetTimeoutException) {
            return new PoyangTimeoutException("node " + nodeId + " did not answer the " + what + " in time; it may"
                    + " have taken effect: look at the status before retrying (" + e.getMessage() + ")");
        }
        return e;
    }

    private void schedule(Runnable r, long delayMillis, CompletableFuture<?> f) {
        try {
            timer.schedule(r, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException | NullPointerException e) {
            f.completeExceptionally(new StoppedException("the admin client is stopped"));
        }
    }

    private <T> void complete(CompletableFuture<T> f, T value, Throwable error) {
        try {
            callbackExecutor.execute(() -> {
                if (error == null) {
                    f.complete(value);
                } else {
                    f.completeExceptionally(error);
                }
            });
        } catch (RejectedExecutionException e) {
            if (error == null) {
                f.complete(value);
            } else {
                f.completeExceptionally(error);
            }
        }
    }

    /**
     * A command to one node whose second copy changes nothing (status queries; adding or removing a
     * group or a node, which the node answers with success when it is done already): sent again while
     * the node cannot be reached, also when a connection was lost after the command went out.
     */
    private <T> CompletableFuture<T> toNode(int nodeId, int command, FieldMessage request, DecoderFactory<T> decoder,
                                            String what) {
        return toNode(nodeId, command, request, decoder, what, config.requestTimeoutMillis);
    }

    private <T> CompletableFuture<T> toNode(int nodeId, int command, FieldMessage request, DecoderFactory<T> decoder,
                                            String what, long timeoutMillis) {
        return toNode(nodeId, command, request, decoder, what, timeoutMillis, REPEATABLE_COMMAND);
    }

    /**
     * A command to one node, sent again after a lost connection only when it is {@link #REPEATABLE_COMMAND}
     * or certainly never left; else (a command for {@code onceForGroup}, whose second copy would act
     * again) a connection lost after it was sent fails it with {@link RaftOutcomeUnknownException}.
     */
    private <T> CompletableFuture<T> toNode(int nodeId, int command, FieldMessage request, DecoderFactory<T> decoder,
                                            String what, long timeoutMillis, int onceForGroup) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            checkRunning();
            peerOf(nodeId);
            if (timeoutMillis <= 0) {
                throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
            }
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
            return f;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        new NodeCall<>(nodeId, command, request, decoder, what, timeoutMillis, deadline, onceForGroup, f).attempt();
        return f;
    }

    private final class NodeCall<T> implements RpcCallback<T> {
        private final int nodeId;
        private final int command;
        private final FieldMessage request;
        private final DecoderFactory<T> decoder;
        private final String what;
        private final long timeoutMillis;
        private final long deadlineNanos;
        /**
         * The group a command that must not be repeated acts on (its outcome-unknown error names it);
         * {@link #REPEATABLE_COMMAND} for a command whose second copy changes nothing.
         */
        private final int onceForGroup;
        private final CompletableFuture<T> result;
        private long backoffMillis = config.minRetryBackoffMillis;
        private Throwable lastConnectionError;

        NodeCall(int nodeId, int command, FieldMessage request, DecoderFactory<T> decoder, String what,
                 long timeoutMillis, long deadlineNanos, int onceForGroup, CompletableFuture<T> result) {
            this.onceForGroup = onceForGroup;
            this.timeoutMillis = timeoutMillis;
            this.nodeId = nodeId;
            this.command = command;
            this.request = request;
            this.decoder = decoder;
            this.what = what;
            this.deadlineNanos = deadlineNanos;
            this.result = result;
        }

        void attempt() {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                complete(result, null, lastConnectionError != null ? new NetConnectionException("cannot reach node "
                        + nodeId + " at " + addresses.get(nodeId) + " for the " + what + ": "
                        + lastConnectionError.getMessage()) : new PoyangTimeoutException("no answer from node " + nodeId
                        + " to the " + what + " within " + timeoutMillis + " ms"));
                return;
            }
            try {
                net.sendRequest(peerOf(nodeId), WritePacket.request(command, request), decoder, left,
                        CallOptions.IO_THREAD_CALLBACK, this);
            } catch (RuntimeException e) {
                failed(e, false);   // refused before it was queued: it never left
            }
        }

        @Override
        public void onSuccess(T value) {
            complete(result, value, null);
        }

        @Override
        public void onFailure(Throwable e) {
            failed(e, !(e instanceof NetNotSentException));
        }

        private void failed(Throwable e, boolean mayHaveLeft) {
            if (e instanceof NetConnectionException && mayHaveLeft && onceForGroup != REPEATABLE_COMMAND) {
                complete(result, null, new RaftOutcomeUnknownException(onceForGroup, "outcome unknown: the connection"
                        + " to node " + nodeId + " (" + addresses.get(nodeId) + ") was lost after the " + what
                        + " was sent and before its answer: the node may have done it, may still do it, or never got"
                        + " it. It was not sent"
                        + " again, since a second copy would act again. Check the group's status on node " + nodeId
                        + " (AdminClient.groupStatus, or ./poyang admin status --group " + onceForGroup
                        + ") before retrying (" + e.getMessage() + ")", e));
                return;
            }
            if (e instanceof NetConnectionException) {
                lastConnectionError = e;
                long pause = backoffMillis;
                backoffMillis = Math.min(backoffMillis * 2, config.maxRetryBackoffMillis);
                schedule(this::attempt, pause, result);
                return;
            }
            complete(result, null, typed(e, nodeId, what));
        }
    }

    /** Maps the remaining time of a leader command to the request that carries it. */
    private interface RequestMaker {
        FieldMessage make(long leftMillis);
    }

    /**
     * A group command for the leader: finds it, follows NOT_LEADER answers and retries on the next
     * leader (leader commands are idempotent) until the deadline.
     */
    private class LeaderCall<T> implements RpcCallback<T> {
        private final int groupId;
        private final String what;
        private final long timeoutMillis;
        private final long deadlineNanos;
        private final int command;
        private final DecoderFactory<T> decoder;
        private final RequestMaker maker;
        private final CompletableFuture<T> result = new CompletableFuture<>();
        private final AtomicInteger done = new AtomicInteger();
        private long backoffMillis = config.minRetryBackoffMillis;
        private int node;
        /** Why the last attempt did not succeed (reported if the deadline passes). */
        private volatile Throwable lastError;

        LeaderCall(int groupId, String what, long timeoutMillis, int command, DecoderFactory<T> decoder,
                   RequestMaker maker) {
            if (timeoutMillis <= 0) {
                throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
            }
            this.groupId = groupId;
            this.what = what + " of raft group " + groupId;
            this.timeoutMillis = timeoutMillis;
            this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            this.command = command;
            this.decoder = decoder;
            this.maker = maker;
        }

        /** False when an answer must be asked again (it came from a node that no longer leads). */
        boolean accept(T value) {
            return true;
        }

        CompletableFuture<T> start() {
            try {
                checkRunning();
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return result;
            }
            attempt();
            return result;
        }

        void attempt() {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                Throwable last = lastError;
                fail(last != null && !(last instanceof NotLeaderException) && !(last instanceof NetConnectionException)
                        ? last : new NotLeaderException(groupId, leaders.getOrDefault(groupId, 0), "no leader of raft"
                        + " group " + groupId + " took the " + what + " within " + timeoutMillis + " ms"
                        + (last != null ? " (last: " + last.getMessage() + ")" : "") + "; the group may have no"
                        + " majority, or the nodes of this client may not include its leader"));
                return;
            }
            Integer known = leaders.get(groupId);
            int leader = known == null ? 0 : known;
            if (leader == 0 || !peers.containsKey(leader)) {
                CompletableFuture<Integer> search = new CompletableFuture<>();
                search.whenComplete((l, e) -> {
                    if (e instanceof NodeIdMismatchException) {
                        fail(e);   // the address list is wrong: the command would go to the wrong machine
                        return;
                    }
                    if (l != null && l != 0 && peers.containsKey(l)) {
                        leaders.put(groupId, l);
                        attempt();
                    } else {
                        if (l != null && l != 0) {
                            lastError = new IllegalArgumentException("raft group " + groupId + " is led by node " + l
                                    + ", which this admin client has no address for; add it with setNodeAddress");
                        }
                        retryLater();
                    }
                });
                searchLeader(groupId, search);
                return;
            }
            node = leader;
            long serverTimeout = Math.max(1, left - Math.min(config.answerMarginMillis, left / 4));
            try {
                net.sendRequest(peers.get(leader), WritePacket.request(command, maker.make(serverTimeout)), decoder,
                        left + config.answerMarginMillis, CallOptions.IO_THREAD_CALLBACK, this);
            } catch (RuntimeException e) {
                onFailure(e);
            }
        }

        private void retryLater() {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            long pause = Math.max(1, Math.min(backoffMillis, left));
            backoffMillis = Math.min(backoffMillis * 2, config.maxRetryBackoffMillis);
            schedule(this::attempt, pause, result);
        }

        @Override
        public void onSuccess(T value) {
            if (!accept(value)) {
                leaders.remove(groupId, node);
                lastError = new NotLeaderException(groupId, 0, "node " + node + " no longer leads raft group " + groupId);
                retryLater();
                return;
            }
            if (done.compareAndSet(0, 1)) {
                complete(result, value, null);
            }
        }

        @Override
        public void onFailure(Throwable e) {
            if (e instanceof RemoteException) {
                RemoteException r = (RemoteException) e;
                if (r.responseCode() == ResponseCode.NOT_LEADER) {
                    int hint = r.bizCode();
                    lastError = new NotLeaderException(groupId, hint, r.remoteMessage());
                    if (hint != 0 && hint != node) {
                        leaders.put(groupId, hint);
                        attempt();
                    } else {
                        leaders.remove(groupId, node);
                        retryLater();
                    }
                    return;
                }
                if (r.responseCode() == ResponseCode.BIZ_ERROR && (r.bizCode() == AdminError.NO_SUCH_GROUP.code()
                        || r.bizCode() == AdminError.GROUP_FAILED.code())) {
                    // the node it took for the leader no longer hosts the group, or the group failed there: look again
                    lastError = typed(e, node, what);
                    leaders.remove(groupId, node);
                    retryLater();
                    return;
                }
                if (r.responseCode() == ResponseCode.STOPPING) {
                    lastError = typed(e, node, what);
                    leaders.remove(groupId, node);
                    retryLater();
                    return;
                }
            }
            if (e instanceof NetConnectionException) {
                // not sent, or the connection went away: every leader command is safe to send again
                lastError = new NetConnectionException("node " + node + " (" + addresses.get(node) + "): "
                        + e.getMessage());
                leaders.remove(groupId, node);
                retryLater();
                return;
            }
            fail(typed(e, node, what));
        }

        private void fail(Throwable e) {
            if (done.compareAndSet(0, 1)) {
                complete(result, null, e);
            }
        }
    }

    /** Asks every known node where a group stands (waiting for all); completes with its leader (0: none known). */
    private void searchLeader(int groupId, CompletableFuture<Integer> result) {
        new LeaderSearch(net, groupId, config.statusTimeoutMillis, false, null, null, null, 0, result)
                .start(new TreeMap<>(peers));
    }
}
