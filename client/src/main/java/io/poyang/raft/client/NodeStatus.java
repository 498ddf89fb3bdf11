package io.poyang.raft.client;

import io.poyang.net.DecoderFactory;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a raft node reports about itself (message NodeStatus of raft.proto, the answer to
 * ADMIN_NODE_STATUS): its id, the groups it hosts, and the nodes it knows with their replication
 * addresses (itself included). Immutable.
 */
public final class NodeStatus {

    public static final DecoderFactory<NodeStatus> DECODER = AdminMessages.NODE_STATUS.mapped(NodeStatus::of);

    private final int nodeId;
    private final int[] groupIds;
    private final Map<Integer, String> nodes;

    public NodeStatus(int nodeId, int[] groupIds, Map<Integer, String> nodes) {
        this.nodeId = nodeId;
        this.groupIds = groupIds.clone();
        Arrays.sort(this.groupIds);
        this.nodes = Collections.unmodifiableMap(new LinkedHashMap<>(nodes));
    }

    static NodeStatus of(FieldMessage m) {
        int[] ids = m.getInts(3);
        String[] addresses = m.getStrings(4);
        Map<Integer, String> nodes = new LinkedHashMap<>();
        for (int i = 0; i < ids.length; i++) {
            nodes.put(ids[i], i < addresses.length ? addresses[i] : "");
        }
        return new NodeStatus(m.getInt(1), m.getInts(2), nodes);
    }

    /** Encodes this status as raft.proto's NodeStatus. */
    public FieldMessage toMessage() {
        int[] ids = new int[nodes.size()];
        String[] addresses = new String[ids.length];
        int i = 0;
        for (Map.Entry<Integer, String> e : nodes.entrySet()) {
            ids[i] = e.getKey();
            addresses[i++] = e.getValue();
        }
        return AdminMessages.NODE_STATUS.builder().set(1, nodeId).set(2, groupIds).set(3, ids).set(4, addresses)
                .build();
    }

    public int nodeId() {
        return nodeId;
    }

    /** The groups the node hosts, sorted. */
    public int[] groupIds() {
        return groupIds.clone();
    }

    /** The nodes it knows (itself included), node id → replication "host:port". */
    public Map<Integer, String> nodes() {
        return nodes;
    }

    @Override
    public String toString() {
        return "node " + nodeId + ": groups " + Arrays.toString(groupIds) + ", nodes " + nodes;
    }
}
