package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.common.DaemonTimer;
import io.poyang.net.CallOptions;
import io.poyang.net.DecoderFactory;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.NioClient;
import io.poyang.net.Peer;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.core.RaftTransport;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The replication side of a server: one {@link NioClient} with one connection per peer node,
 * shared by every group (their AppendEntries, votes and snapshot chunks interleave on it), with
 * the {@link FaultInjector} in between when a test installed one. Callbacks run on the client's
 * I/O thread.
 */
final class ReplicationTransport implements RaftTransport {

    private final int selfId;
    private final NioClient client;
    private final FaultInjector faults;
    private final Map<Integer, Peer> peers = new ConcurrentHashMap<>();
    private final Map<Integer, String> addresses = new ConcurrentHashMap<>();
    /** Delays and simulated losses of the fault injector; null without one. */
    private final ScheduledExecutorService faultTimer;

    ReplicationTransport(int selfId, NioClient client, FaultInjector faults) {
        this.selfId = selfId;
        this.client = client;
        this.faults = faults;
        if (faults != null) {
            this.faultTimer = DaemonTimer.create("raft-" + selfId + "-fault-timer");
        } else {
            this.faultTimer = null;
        }
    }

    /** Sets (or changes) where node {@code nodeId} listens for replication; connects to it. Any thread. */
    synchronized void setAddress(int nodeId, String hostPort) {
        String old = addresses.put(nodeId, hostPort);
        if (hostPort.equals(old) && peers.containsKey(nodeId)) {
            return;
        }
        Peer oldPeer = peers.remove(nodeId);
        if (oldPeer != null) {
            client.removePeer(oldPeer);
        }
        // the handshake names the node: an address that reaches another node (a typo, a host
        // name that moved, a node of another cluster) is refused, so its answers never count as
        // this node's votes or acknowledgements
        peers.put(nodeId, client.addPeer(hostPort, nodeId));
    }

    /** Forgets node {@code nodeId} (it left the cluster) and closes its connection. Any thread. */
    synchronized void removeAddress(int nodeId) {
        addresses.remove(nodeId);
        Peer old = peers.remove(nodeId);
        if (old != null) {
            client.removePeer(old);
        }
    }

    /** The peers whose address reaches another node than theirs, with the reason, by node id. */
    Map<Integer, String> misaddressed() {
        Map<Integer, String> m = new java.util.TreeMap<>();
        peers.forEach((id, p) -> {
            String why = p.wrongNode();
            if (why != null) {
                m.put(id, why);
            }
        });
        return m;
    }

    /** The known addresses of the other nodes, by id (a copy). */
    Map<Integer, String> addresses() {
        return new java.util.TreeMap<>(addresses);
    }

    @Override
    public <T> void send(int nodeId, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
                         RpcCallback<T> callback) {
        Peer peer = peers.get(nodeId);
        if (peer == null) {
            callback.onFailure(new NetConnectionException("node " + selfId + " has no address for node " + nodeId));
            return;
        }
        if (faults == null) {
            sendNow(peer, command, body, decoder, timeoutMillis, callback);
            return;
        }
        if (faults.isBlocked(selfId, nodeId)) {
            callback.onFailure(new NetConnectionException("fault injector: node " + nodeId
                    + " is unreachable from node " + selfId));
            return;
        }
        if (faults.shouldDrop(selfId, nodeId)) {
            faultTimer.schedule(() -> callback.onFailure(new NetTimeoutException("fault injector: the request to node "
                    + nodeId + " was lost")), timeoutMillis, TimeUnit.MILLISECONDS);
            return;
        }
        RpcCallback<T> guarded = new FaultyAnswer<>(nodeId, timeoutMillis, callback);
        long delay = faults.delayMillis(selfId, nodeId);
        if (delay > 0) {
            faultTimer.schedule(() -> sendNow(peer, command, body, decoder, Math.max(1, timeoutMillis - delay), guarded),
                    delay, TimeUnit.MILLISECONDS);
        } else {
            sendNow(peer, command, body, decoder, timeoutMillis, guarded);
        }
    }

    private <T> void sendNow(Peer peer, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
                             RpcCallback<T> callback) {
        try {
            client.sendRequest(peer, WritePacket.request(command, body), decoder, timeoutMillis,
                    CallOptions.IO_THREAD_CALLBACK, callback);
        } catch (RuntimeException e) {
            // stopped, flow control: the request never left
            callback.onFailure(e);
        }
    }

    /** Applies the answer's direction of the fault injector: an answer from a cut-off node is lost. */
    private final class FaultyAnswer<T> implements RpcCallback<T> {
        private final int from;
        private final long timeoutMillis;
        private final long sentNanos = System.nanoTime();
        private final RpcCallback<T> callback;

        FaultyAnswer(int from, long timeoutMillis, RpcCallback<T> callback) {
            this.from = from;
            this.timeoutMillis = timeoutMillis;
            this.callback = callback;
        }

        @Override
        public void onSuccess(T body) {
            if (faults.isBlocked(from, selfId) || faults.shouldDrop(from, selfId)) {
                long left = timeoutMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentNanos);
                faultTimer.schedule(() -> callback.onFailure(new NetTimeoutException("fault injector: the answer of node "
                        + from + " was lost")), Math.max(0, left), TimeUnit.MILLISECONDS);
                return;
            }
            callback.onSuccess(body);
        }

        @Override
        public void onFailure(Throwable error) {
            callback.onFailure(error);
        }
    }

    void close() {
        if (faultTimer != null) {
            faultTimer.shutdownNow();
        }
    }
}
