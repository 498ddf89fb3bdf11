package io.poyang.raft.server;

import io.poyang.codec.PbCallback;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.ReqContext;
import io.poyang.net.ReqProcessor;
import io.poyang.net.ResponseCode;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.AdminError;
import io.poyang.raft.client.AdminMessages;
import io.poyang.raft.client.FieldMessage;
import io.poyang.raft.client.NodeStatus;
import io.poyang.raft.client.NotLeaderException;
import io.poyang.raft.client.RaftAdminException;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.Members;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.sm.StateMachine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.IntFunction;

/**
 * The server side of {@link io.poyang.raft.client.AdminClient}: commands 203-214 on the
 * replication port. Each processor checks its arguments, calls the node or the group, and answers
 * when the operation is done (membership changes and transfers answer later, from the group's
 * callback thread). Failures become typed answers: NOT_LEADER with the leader's id, TIMEOUT,
 * STOPPING, or BIZ_ERROR with an {@link AdminError} code and a message that says what to do.
 * Processors run on the replication I/O thread and never block.
 */
final class AdminProcessors {

    private static final PoyangLog log = PoyangLogs.get(AdminProcessors.class);

    private final RaftServer server;
    private final RaftServerConfig config;

    AdminProcessors(RaftServer server, RaftServerConfig config) {
        this.server = server;
        this.config = config;
    }

    void registerOn(io.poyang.net.NioServer s) {
        s.register(RaftCommands.ADMIN_NODE_STATUS, processor(AdminMessages.NODE_STATUS_REQUEST, this::nodeStatus));
        s.register(RaftCommands.ADMIN_GROUP_STATUS, processor(AdminMessages.GROUP_STATUS_REQUEST, this::groupStatus));
        s.register(RaftCommands.ADMIN_TRANSFER_LEADER, processor(AdminMessages.TRANSFER_LEADER_REQUEST,
                this::transferLeader));
        s.register(RaftCommands.ADMIN_PREPARE_MEMBERS, processor(AdminMessages.CHANGE_MEMBERS_REQUEST, this::prepare));
        s.register(RaftCommands.ADMIN_COMMIT_MEMBERS, processor(AdminMessages.CHANGE_MEMBERS_REQUEST, this::commit));
        s.register(RaftCommands.ADMIN_ABORT_MEMBERS, processor(AdminMessages.CHANGE_MEMBERS_REQUEST, this::abort));
        s.register(RaftCommands.ADMIN_ADD_GROUP, processor(AdminMessages.ADD_GROUP_REQUEST, this::addGroup));
        s.register(RaftCommands.ADMIN_REMOVE_GROUP, processor(AdminMessages.REMOVE_GROUP_REQUEST, this::removeGroup));
        s.register(RaftCommands.ADMIN_ADD_NODE, processor(AdminMessages.ADD_NODE_REQUEST, this::addNode));
        s.register(RaftCommands.ADMIN_REMOVE_NODE, processor(AdminMessages.REMOVE_NODE_REQUEST, this::removeNode));
        s.register(RaftCommands.ADMIN_RESTART_GROUP, processor(AdminMessages.RESTART_GROUP_REQUEST, this::restartGroup));
        s.register(RaftCommands.ADMIN_SET_PREFERRED_LEADER, processor(AdminMessages.SET_PREFERRED_LEADER_REQUEST,
                this::setPreferredLeader));
    }

    /** One admin command: answered through the future it returns (null: answered already). */
    private interface Handler {
        CompletableFuture<? extends FieldMessage> handle(ReqContext ctx, FieldMessage req);
    }

    private ReqProcessor<FieldMessage> processor(FieldMessage.Schema schema, Handler h) {
        return new ReqProcessor<FieldMessage>() {
            @Override
            public PbCallback<FieldMessage> createDecoder() {
                return schema.create();
            }

            @Override
            public WritePacket process(ReqContext ctx, FieldMessage req) {
                CompletableFuture<? extends FieldMessage> f;
                try {
                    f = h.handle(ctx, req);
                } catch (Throwable e) {
                    return errorPacket(e, ctx);
                }
                f.whenComplete((m, e) -> ctx.respond(e == null ? WritePacket.response(m) : errorPacket(e, ctx)));
                return null;
            }
        };
    }

    /** The typed answer for an operation's failure. */
    private WritePacket errorPacket(Throwable e, ReqContext ctx) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        String msg = e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof NotLeaderException) {
            return WritePacket.error(ResponseCode.NOT_LEADER, ((NotLeaderException) e).leaderId(), msg);
        }
        if (e instanceof PoyangTimeoutException) {
            return WritePacket.error(ResponseCode.TIMEOUT, msg);
        }
        if (e instanceof StoppedException) {
            return WritePacket.error(ResponseCode.STOPPING, msg);
        }
        if (e instanceof RaftAdminException) {
            return WritePacket.bizError(((RaftAdminException) e).error().code(), msg);
        }
        if (e instanceof IllegalArgumentException) {
            return WritePacket.bizError(AdminError.BAD_ARGUMENT.code(), msg);
        }
        if (e instanceof IllegalStateException) {
            return WritePacket.bizError(AdminError.CONFLICT.code(), msg);
        }
        log.warn("raft node {}: admin command {} failed", config.nodeId, ctx.command(), e);
        return WritePacket.error(ResponseCode.SYS_ERROR, "node " + config.nodeId + ": " + e);
    }

    private RaftAdminException refuse(AdminError error, String message) {
        return new RaftAdminException(error, config.nodeId, message);
    }

    private RaftGroup group(int groupId) {
        RaftGroup g = server.group(groupId);
        if (g == null) {
            throw refuse(AdminError.NO_SUCH_GROUP, "node " + config.nodeId + " does not host raft group " + groupId
                    + " (it hosts " + groupIds() + "); ask a node that does, or add the group here first");
        }
        return g;
    }

    /** The group, for a command that changes it: refused when the group failed on this node. */
    private RaftGroup workingGroup(int groupId) {
        RaftGroup g = group(groupId);
        Throwable f = g.failure();
        if (f != null) {
            throw refuse(AdminError.GROUP_FAILED, "raft group " + groupId + " failed on node " + config.nodeId + " ("
                    + f + ") and takes no part until it is restarted; fix the cause, then restart the group there"
                    + " (./poyang admin restart-group " + groupId + " --on " + config.nodeId + ") or the node,"
                    + " or ask another node");
        }
        return g;
    }

    private List<Integer> groupIds() {
        List<Integer> ids = new ArrayList<>();
        for (RaftGroup g : server.groups()) {
            ids.add(g.groupId());
        }
        ids.sort(null);
        return ids;
    }

    private static long timeout(FieldMessage req, int field) {
        long t = req.getLong(field);
        if (t <= 0) {
            throw new IllegalArgumentException("timeout_millis must be positive: " + t);
        }
        return t;
    }

    /** Every node of {@code ids} other than this one has a known replication address here. */
    private void checkAddressesKnown(int[] ids, String what) {
        Map<Integer, String> known = server.nodeAddresses();
        for (int id : ids) {
            if (id != config.nodeId && id > 0 && !known.containsKey(id)) {
                throw refuse(AdminError.UNKNOWN_NODE, "node " + id + " (" + what + ") has no known address on node "
                        + config.nodeId + " (it knows " + known.keySet() + "); add it there first (addNode)");
            }
        }
    }

    // ---------------------------------------------------------------- status

    private CompletableFuture<FieldMessage> nodeStatus(ReqContext ctx, FieldMessage req) {
        Map<Integer, String> nodes = new TreeMap<>(server.nodeAddresses());
        nodes.put(config.nodeId, server.selfAddress());
        int[] groups = groupIds().stream().mapToInt(Integer::intValue).toArray();
        return CompletableFuture.completedFuture(new NodeStatus(config.nodeId, groups, nodes).toMessage());
    }

    private CompletableFuture<FieldMessage> groupStatus(ReqContext ctx, FieldMessage req) {
        return group(req.getInt(1)).detailedStatus().thenApply(st -> st.toMessage());
    }

    // ---------------------------------------------------------------- leader operations

    private CompletableFuture<FieldMessage> transferLeader(ReqContext ctx, FieldMessage req) {
        RaftGroup g = workingGroup(req.getInt(1));
        int target = req.getInt(2);
        if (target <= 0) {
            throw new IllegalArgumentException("the transfer target must be a node id (positive): " + target);
        }
        return g.transferLeadership(target, timeout(req, 3)).thenApply(v -> AdminMessages.TRANSFER_LEADER_RESPONSE
                .builder().set(1, g.term()).set(2, g.leaderId()).build());
    }

    private CompletableFuture<FieldMessage> prepare(ReqContext ctx, FieldMessage req) {
        RaftGroup g = workingGroup(req.getInt(1));
        int[] voters = req.getInts(2);
        int[] observers = req.getInts(3);
        new Members(voters, observers);   // refuses a malformed target before anything starts
        checkAddressesKnown(voters, "a voter of the change");
        checkAddressesKnown(observers, "an observer of the change");
        return g.prepareMembers(voters, observers, timeout(req, 4)).thenApply(AdminProcessors::membersMessage);
    }

    private CompletableFuture<FieldMessage> commit(ReqContext ctx, FieldMessage req) {
        RaftGroup g = workingGroup(req.getInt(1));
        new Members(req.getInts(2), req.getInts(3));
        return g.commitMembers(req.getInts(2), req.getInts(3), timeout(req, 4))
                .thenApply(AdminProcessors::membersMessage);
    }

    private CompletableFuture<FieldMessage> abort(ReqContext ctx, FieldMessage req) {
        RaftGroup g = workingGroup(req.getInt(1));
        return g.abortMembers(timeout(req, 4)).thenApply(AdminProcessors::membersMessage);
    }

    static FieldMessage membersMessage(Members m) {
        FieldMessage.Builder b = AdminMessages.MEMBERS_CONFIG.builder().set(1, m.voters()).set(3, m.observers())
                .set(5, m.isJoint());
        if (m.isJoint()) {
            b.set(2, m.newVoters()).set(4, m.oldObservers());
        }
        return b.build();
    }

    // ---------------------------------------------------------------- node operations

    private CompletableFuture<FieldMessage> addGroup(ReqContext ctx, FieldMessage req) {
        int groupId = req.getInt(1);
        if (groupId <= 0) {
            throw new IllegalArgumentException("group ids are positive: " + groupId);
        }
        IntFunction<? extends StateMachine> factory = config.stateMachineFactory;
        if (factory == null && server.group(groupId) == null) {
            throw refuse(AdminError.UNSUPPORTED, "node " + config.nodeId + " cannot add raft group " + groupId
                    + " at runtime: it was started without a state machine factory"
                    + " (RaftServerConfig.Builder.stateMachineFactory)");
        }
        int[] voters = req.getInts(2);
        int[] observers = req.getInts(3);
        Members members = new Members(voters, observers);
        checkAddressesKnown(members.allNodes(), "a member of the group");
        return server.addGroup(groupId, () -> factory.apply(groupId), members).thenApply(g -> ack());
    }

    private CompletableFuture<FieldMessage> removeGroup(ReqContext ctx, FieldMessage req) {
        return server.removeGroup(req.getInt(1), req.getBool(2)).thenApply(v -> ack());
    }

    private CompletableFuture<FieldMessage> restartGroup(ReqContext ctx, FieldMessage req) {
        int groupId = group(req.getInt(1)).groupId();   // NO_SUCH_GROUP, with the groups hosted here
        return server.restartGroup(groupId).thenApply(g -> ack());
    }

    /**
     * Sets this node's preferred leader of the group. A group that failed here takes it too: its
     * restart keeps the setting. The node named must be a voter of the configuration this node
     * knows (of either side of a prepared change): {@link RaftGroup#setPreferredLeader} itself
     * accepts any node (a configuration at start may name one a change is about to add), but an
     * operator who names a node that is no voter has most likely mistyped it, and the group would
     * quietly keep its leader where it is.
     */
    private CompletableFuture<FieldMessage> setPreferredLeader(ReqContext ctx, FieldMessage req) {
        RaftGroup g = group(req.getInt(1));
        int target = req.getInt(2);
        if (target < 0) {
            throw new IllegalArgumentException("a preferred leader is a node id, or 0 for none: " + target);
        }
        Members m = g.members();
        if (target != 0 && !m.isVoter(target)) {
            throw refuse(AdminError.BAD_ARGUMENT, "node " + target + " is not a voter of raft group " + g.groupId()
                    + " on node " + config.nodeId + " (its configuration there: voters " + m + "), so it cannot be its preferred leader; name one of"
                    + " its voters, or 0 for none (a node not yet in the group: add it with a membership change"
                    + " first)");
        }
        int before = g.preferredLeader();
        g.setPreferredLeader(target);
        if (before == target) {
            return g.detailedStatus().thenApply(st -> st.toMessage());
        }
        log.info("raft node {}: group {}'s preferred leader changed from {} to {} by an admin command",
                config.nodeId, g.groupId(), before == 0 ? "none" : "node " + before,
                target == 0 ? "none" : "node " + target);
        // answered once the layout listener ran (a DtKV node writes its servers.properties there, as
        // for an added group): a crash right after the answer then does not bring the old preference
        // back at the next start. A listener that fails is logged, not reported to the caller
        return server.recordLayout("setting the preferred leader of", g.groupId())
                .thenCompose(v -> g.detailedStatus()).thenApply(st -> st.toMessage());
    }

    private CompletableFuture<FieldMessage> addNode(ReqContext ctx, FieldMessage req) {
        int nodeId = req.getInt(1);
        String address = req.getString(2);
        if (nodeId <= 0) {
            throw new IllegalArgumentException("node ids are positive: " + nodeId);
        }
        checkHostPort(address);
        if (nodeId == config.nodeId) {
            if (!address.equals(server.selfAddress()) && !address.equals(config.nodes.get(nodeId))) {
                throw new IllegalArgumentException("node " + nodeId + " is the node asked (listening on "
                        + server.selfAddress() + "); its own address is fixed at start");
            }
            return CompletableFuture.completedFuture(ack());
        }
        server.setNodeAddress(nodeId, address);
        return CompletableFuture.completedFuture(ack());
    }

    private static void checkHostPort(String address) {
        String problem = io.poyang.net.HostPort.problem(address, false);
        if (problem != null) {
            throw new IllegalArgumentException("a node address is one host:port with a port in 1..65535: " + problem);
        }
    }

    private CompletableFuture<FieldMessage> removeNode(ReqContext ctx, FieldMessage req) {
        int nodeId = req.getInt(1);
        if (nodeId == config.nodeId) {
            throw new IllegalArgumentException("node " + nodeId + " is the node asked; a node cannot forget itself");
        }
        for (RaftGroup g : server.groups()) {
            Members m = g.members();
            if (m.contains(nodeId)) {
                throw refuse(AdminError.NODE_IN_USE, "node " + nodeId + " is still in the configuration of raft group "
                        + g.groupId() + " on node " + config.nodeId + " (" + m + "); take it out of the group first"
                        + " (prepare and commit a change without it)");
            }
        }
        server.removeNodeAddress(nodeId);
        return CompletableFuture.completedFuture(ack());
    }

    private static FieldMessage ack() {
        return AdminMessages.ACK.builder().build();
    }

    @Override
    public String toString() {
        return "AdminProcessors[node " + config.nodeId + ", groups " + Arrays.toString(groupIds().toArray()) + "]";
    }
}
