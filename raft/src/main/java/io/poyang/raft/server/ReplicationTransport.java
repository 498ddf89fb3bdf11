package io.poyang.raft.server;

import io.poyang.codec.Encodable;
import io.poyang.common.DaemonTimer;
import io.poyang.fiber.Dispatcher;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.CallOptions;
import io.poyang.net.DecoderFactory;
import io.poyang.net.NetConnectionException;
import io.poyang.net.NetTimeoutException;
import io.poyang.net.NioClient;
import io.poyang.net.Peer;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.client.RaftCommands;
import io.poyang.raft.core.AppendEntriesBatch;
import io.poyang.raft.core.AppendEntriesResponse;
import io.poyang.raft.core.RaftTransport;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The replication side of a server: one {@link NioClient} with one connection per peer node,
 * shared by every group (their AppendEntries, votes and snapshot chunks interleave on it), with
 * the {@link FaultInjector} in between when a test installed one (it treats a batch of appends as
 * one message: dropped, delayed or cut off whole). Callbacks run on the client's I/O thread.
 */
final class ReplicationTransport implements RaftTransport {

    private static final PoyangLog log = PoyangLogs.get(ReplicationTransport.class);

    private final int selfId;
    private final NioClient client;
    private final FaultInjector faults;
    private final Map<Integer, Peer> peers = new ConcurrentHashMap<>();
    private final Map<Integer, String> addresses = new ConcurrentHashMap<>();
    /** Delays and simulated losses of the fault injector; null without one. */
    private final ScheduledExecutorService faultTimer;

    /** Whether the AppendEntries of one dispatcher round to one node leave as one APPEND_ENTRIES_BATCH. */
    private final boolean batchAppends;
    /** Nodes that answered a batch COMMAND_NOT_FOUND (an older version): their appends go one by one. */
    private final Set<Integer> nodesWithoutBatches = ConcurrentHashMap.newKeySet();
    /** Each dispatcher thread's appends of the current round, by node; see {@link Outbox}. */
    private final ThreadLocal<Map<Integer, Outbox>> outboxes = ThreadLocal.withInitial(HashMap::new);
    private final LongAdder batchesSent = new LongAdder();
    private final LongAdder appendsInBatches = new LongAdder();

    ReplicationTransport(int selfId, NioClient client, FaultInjector faults, boolean batchAppends) {
        this.selfId = selfId;
        this.client = client;
        this.faults = faults;
        this.batchAppends = batchAppends;
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

    /** APPEND_ENTRIES_BATCH requests sent so far (each with two or more appends). */
    long batchesSent() {
        return batchesSent.sum();
    }

    /** Whether this node sends its appends to {@code nodeId} in batches (false once it answered COMMAND_NOT_FOUND). */
    boolean batchesAppendsTo(int nodeId) {
        return batchAppends && !nodesWithoutBatches.contains(nodeId);
    }

    /** AppendEntries requests that left inside a batch so far. */
    long appendsInBatches() {
        return appendsInBatches.sum();
    }

    /**
     * Sends a request to node {@code nodeId}. An AppendEntries sent from a dispatcher thread waits
     * for the end of the dispatcher's round (no longer: no timer), so the appends of all the groups
     * that round ran leave as one APPEND_ENTRIES_BATCH frame to each node; a lone one leaves as it
     * is. Callbacks run on the client's I/O thread.
     */
    @Override
    @SuppressWarnings("unchecked")
    public <T> void send(int nodeId, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
                         RpcCallback<T> callback) {
        if (command == RaftCommands.APPEND_ENTRIES && batchAppends && !nodesWithoutBatches.contains(nodeId)) {
            Outbox o = outboxes.get().computeIfAbsent(nodeId, Outbox::new);
            if (o.flushQueued || Dispatcher.runAtRoundEnd(o)) {
                o.flushQueued = true;
                o.add(body, timeoutMillis, (RpcCallback<AppendEntriesResponse>) callback);
                return;
            }
            // not on a dispatcher thread: nothing to batch with
        }
        sendOne(nodeId, command, body, decoder, timeoutMillis, callback);
    }

    /**
     * The AppendEntries one dispatcher thread sends to one node in the current round; run at the
     * round's end, it sends them. Touched by that thread only.
     */
    private final class Outbox implements Runnable {
        private final int nodeId;
        private final ArrayList<Encodable> bodies = new ArrayList<>();
        private final ArrayList<RpcCallback<AppendEntriesResponse>> callbacks = new ArrayList<>();
        private long timeoutMillis = Long.MAX_VALUE;
        boolean flushQueued;

        Outbox(int nodeId) {
            this.nodeId = nodeId;
        }

        void add(Encodable body, long timeoutMillis, RpcCallback<AppendEntriesResponse> callback) {
            bodies.add(body);
            callbacks.add(callback);
            // the batch must time out when its most impatient part would have
            this.timeoutMillis = Math.min(this.timeoutMillis, timeoutMillis);
        }

        @Override
        public void run() {
            flushQueued = false;
            int n = bodies.size();
            long timeout = timeoutMillis;
            timeoutMillis = Long.MAX_VALUE;
            if (n == 1) {
                sendOne(nodeId, RaftCommands.APPEND_ENTRIES, bodies.get(0), AppendEntriesResponse.DECODER, timeout,
                        callbacks.get(0));
            } else if (n > 1) {
                List<Encodable> parts = new ArrayList<>(bodies);
                List<RpcCallback<AppendEntriesResponse>> partCallbacks = new ArrayList<>(callbacks);
                batchesSent.increment();
                appendsInBatches.add(n);
                sendOne(nodeId, RaftCommands.APPEND_ENTRIES_BATCH, new AppendEntriesBatch.Parts<>(parts),
                        AppendEntriesBatch.ANSWER_DECODER, timeout,
                        new BatchAnswerCallback(nodeId, parts, partCallbacks, timeout));
            }
            bodies.clear();
            callbacks.clear();
        }
    }

    /** Hands each part's answer of a batch to the part's own callback, as if the part had been sent alone. */
    private final class BatchAnswerCallback implements RpcCallback<List<AppendEntriesBatch.PartAnswer>> {
        private final int nodeId;
        private final List<Encodable> parts;
        private final List<RpcCallback<AppendEntriesResponse>> callbacks;
        private final long timeoutMillis;

        BatchAnswerCallback(int nodeId, List<Encodable> parts, List<RpcCallback<AppendEntriesResponse>> callbacks,
                            long timeoutMillis) {
            this.nodeId = nodeId;
            this.parts = parts;
            this.callbacks = callbacks;
            this.timeoutMillis = timeoutMillis;
        }

        @Override
        public void onSuccess(List<AppendEntriesBatch.PartAnswer> answers) {
            for (int i = 0; i < callbacks.size(); i++) {
                RpcCallback<AppendEntriesResponse> cb = callbacks.get(i);
                AppendEntriesBatch.PartAnswer a = i < answers.size() ? answers.get(i) : null;
                if (a == null || a.code == ResponseCode.SUCCESS && a.response == null) {
                    cb.onFailure(new RemoteException(ResponseCode.SYS_ERROR, 0, "node " + nodeId + " answered a batch of "
                            + callbacks.size() + " appends with " + answers.size() + " answers, part " + i + " without one"));
                } else if (a.code == ResponseCode.SUCCESS) {
                    cb.onSuccess(a.response);
                } else {
                    cb.onFailure(new RemoteException(a.code, a.bizCode, a.message));
                }
            }
        }

        @Override
        public void onFailure(Throwable error) {
            if (error instanceof RemoteException
                    && ((RemoteException) error).responseCode() == ResponseCode.COMMAND_NOT_FOUND) {
                // A node of an older version: it processed none of the parts. From now on its appends
                // go one by one; these go again at once.
                if (nodesWithoutBatches.add(nodeId)) {
                    log.info("node {}: node {} does not take batched appends ({}); its appends are sent one by one",
                            selfId, nodeId, ((RemoteException) error).remoteMessage());
                }
                for (int i = 0; i < parts.size(); i++) {
                    sendOne(nodeId, RaftCommands.APPEND_ENTRIES, parts.get(i), AppendEntriesResponse.DECODER,
                            timeoutMillis, callbacks.get(i));
                }
                return;
            }
            for (RpcCallback<AppendEntriesResponse> cb : callbacks) {
                cb.onFailure(error);
            }
        }
    }

    private <T> void sendOne(int nodeId, int command, Encodable body, DecoderFactory<T> decoder, long timeoutMillis,
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
