package io.poyang.raft.client;

import io.poyang.net.CallOptions;
import io.poyang.net.NioClient;
import io.poyang.net.Peer;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One round of asking nodes where a raft group stands (RAFT_STATUS), shared by {@link RaftClient}
 * and {@link AdminClient}. It completes its future with the leader: the node that says it leads in
 * the highest term, else the leader named with the highest term, else 0 (none known, or no node
 * asked). Nodes that fail to answer count as answered with nothing.
 *
 * <p>The callers differ in which nodes they ask (the caller passes them to {@link #start}), whether
 * the search ends as soon as a node says it leads ({@code finishOnLeader}), and whether the leader
 * found is written into the caller's map of known leaders before the future completes (so that
 * whatever runs on completion already sees it). Answers arrive on I/O threads; the tallies are
 * guarded by this object's monitor.
 */
final class LeaderSearch implements RpcCallback<RaftStatusResponse> {
    private final NioClient net;
    private final int groupId;
    private final long statusTimeoutMillis;
    private final boolean finishOnLeader;
    /** group id → leader, written with a leader found (not 0); null: the caller records it itself. */
    private final Map<Integer, Integer> leaders;
    /** group id → the latest report of a node that the group failed there; null: not kept. */
    private final Map<Integer, GroupFailureReport> failures;
    /** group id → the highest term a node answered with, raised by every answer; null: not kept. */
    private final ConcurrentMap<Integer, Integer> highestTerms;
    /** How many nodes the cluster has (the caller's list, connected or not); 0: not known. */
    private final int clusterNodeCount;
    /** {@link #highestTerms}' value for the group when this search started; null: none. */
    private Integer highestTermAtStart;
    /** Nodes that answered the status query (under their listed id), and the highest term among them. */
    private int answered;
    private int highestTermHeard = -1;
    private final CompletableFuture<Integer> result;
    private final AtomicInteger waiting = new AtomicInteger();
    private int bestLeader;
    private int bestTerm = -1;
    private int namedLeader;
    private int namedTerm = -1;

    /**
     * @param statusTimeoutMillis how long each node's answer is waited for
     * @param finishOnLeader      complete as soon as a node says it leads, without waiting for the rest
     * @param leaders             where to record a leader found (not 0) before completing, or null
     * @param failures            where to record a node's report that the group failed there (and to
     *                            clear it when that node answers without one), or null
     * @param highestTerms        group id → the highest term any node answered a search with, kept
     *                            across searches; raised here, and with {@code finishOnLeader} a node
     *                            leading in an older term does not end the search. Null: not kept
     * @param clusterNodeCount    how many nodes the cluster has, connected or not (0: not known): when
     *                            every one of them answers this search, each in a term below the
     *                            highest one kept, no node is in that term any more (terms never go
     *                            down on a node: the cluster or the group was made anew) and the kept
     *                            term is lowered to the highest heard
     * @param result              completed with the leader's node id, or 0
     */
    LeaderSearch(NioClient net, int groupId, long statusTimeoutMillis, boolean finishOnLeader,
                 Map<Integer, Integer> leaders, Map<Integer, GroupFailureReport> failures,
                 ConcurrentMap<Integer, Integer> highestTerms, int clusterNodeCount,
                 CompletableFuture<Integer> result) {
        this.net = net;
        this.groupId = groupId;
        this.statusTimeoutMillis = statusTimeoutMillis;
        this.finishOnLeader = finishOnLeader;
        this.leaders = leaders;
        this.failures = failures;
        this.highestTerms = highestTerms;
        this.clusterNodeCount = clusterNodeCount;
        this.result = result;
    }

    /**
     * Asks every node of {@code asked} (node id → its peer; completes with 0 at once when it is
     * empty). A node that answers with another id than the one it is listed under fails the search
     * with {@link NodeIdMismatchException}. Call once.
     */
    void start(Map<Integer, Peer> asked) {
        if (asked.isEmpty()) {
            result.complete(0);
            return;
        }
        waiting.set(asked.size());
        synchronized (this) {
            highestTermAtStart = highestTerms == null ? null : highestTerms.get(groupId);
        }
        for (Map.Entry<Integer, Peer> e : asked.entrySet()) {
            Peer p = e.getValue();
            int listedId = e.getKey();
            try {
                net.sendRequest(p, WritePacket.request(RaftCommands.RAFT_STATUS, new RaftStatusRequest(groupId)),
                        RaftStatusResponse.DECODER, statusTimeoutMillis, CallOptions.IO_THREAD_CALLBACK,
                        new RpcCallback<RaftStatusResponse>() {
                            @Override
                            public void onSuccess(RaftStatusResponse s) {
                                if (s.nodeId() != listedId) {
                                    result.completeExceptionally(new NodeIdMismatchException(listedId, s.nodeId(),
                                            p.toString()));
                                    arrived();
                                    return;
                                }
                                LeaderSearch.this.onSuccess(s);
                            }

                            @Override
                            public void onFailure(Throwable error) {
                                LeaderSearch.this.onFailure(error);
                            }
                        });
            } catch (RuntimeException ex) {
                onFailure(ex);
            }
        }
    }

    @Override
    public void onSuccess(RaftStatusResponse s) {
        if (failures != null) {
            if (!s.failure().isEmpty()) {
                failures.put(groupId, new GroupFailureReport(s.nodeId(), s.failure()));
            } else {
                GroupFailureReport known = failures.get(groupId);
                if (known != null && known.nodeId == s.nodeId()) {
                    failures.remove(groupId, known);   // restarted since
                }
            }
        }
        synchronized (this) {
            answered++;
            highestTermHeard = Math.max(highestTermHeard, s.term());
            if (s.role() == RaftRole.LEADER && s.term() > bestTerm) {
                bestLeader = s.nodeId();
                bestTerm = s.term();
            }
            if (s.leaderId() != 0 && s.term() > namedTerm) {
                namedLeader = s.leaderId();
                namedTerm = s.term();
            }
        }
        // A leader replaced while its group was stuck still says it leads, in its old term, and may
        // answer first: it ends the search only when no node has been heard in a later term.
        int highestTerm = highestTerms == null ? s.term() : highestTerms.merge(groupId, s.term(), Math::max);
        if (finishOnLeader && s.role() == RaftRole.LEADER && s.term() >= highestTerm) {
            finish();   // a node that leads answers for itself; no need to wait for the rest
            if (leaders != null && highestTerms != null && highestTerms.get(groupId) > s.term()) {
                // another search heard a later term meanwhile (answers of different connections may be
                // read on different I/O threads) and may have recorded that term's leader before this
                // one overwrote it: forget the old one, the next call searches again
                leaders.remove(groupId, s.nodeId());
            }
        }
        arrived();
    }

    @Override
    public void onFailure(Throwable error) {
        arrived();
    }

    private void arrived() {
        if (waiting.decrementAndGet() == 0) {
            lowerTermNoNodeHolds();
            finish();
        }
    }

    /**
     * Every node of the cluster answered, each in a term below the highest one kept for the group:
     * no node is in that term any more, since a node's term never goes down (the cluster or the
     * group was made anew under the same ids). Kept, it would make every search that could end at the
     * first node saying it leads hear all nodes out, for good. Lowered only if no answer raised it
     * meanwhile. A leader replaced while stuck is never taken back this way: the nodes that elected
     * its successor answer with the later term.
     */
    private void lowerTermNoNodeHolds() {
        int heard;
        Integer kept;
        synchronized (this) {
            if (highestTerms == null || clusterNodeCount <= 0 || answered < clusterNodeCount) {
                return;
            }
            heard = highestTermHeard;
            kept = highestTermAtStart;
        }
        if (kept != null && heard < kept) {
            highestTerms.replace(groupId, kept, heard);
        }
    }

    private void finish() {
        if (result.isDone()) {
            return;   // failed: a node answered under another id (its figures map to the wrong addresses)
        }
        int leader;
        synchronized (this) {
            leader = bestLeader != 0 ? bestLeader : namedLeader;
        }
        if (leaders != null && leader != 0) {
            leaders.put(groupId, leader);
        }
        result.complete(leader);
    }
}
