package io.poyang.raft.client;

import io.poyang.codec.Encodable;
import io.poyang.common.DaemonTimer;
import io.poyang.common.FlowControlException;
import io.poyang.common.LifeCycle;
import io.poyang.common.PoyangTimeoutException;
import io.poyang.common.StoppedException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
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

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes to raft groups of a cluster. It knows the nodes (their service addresses), keeps one
 * connection to each, finds each group's leader by asking the nodes (RAFT_STATUS), remembers it,
 * follows NOT_LEADER answers to the leader they name, and retries a write that was certainly not
 * applied (NOT_LEADER, a node stopping, no leader known yet, TIMEOUT while the caller's deadline
 * has time left) until the caller's deadline.
 *
 * <p>A write that was sent and got no answer by the deadline — or whose connection was lost, or
 * whose node failed with it in the log — may or may not be applied: it fails with
 * {@link RaftOutcomeUnknownException} and is not retried (a retry could apply it twice). An
 * <b>exactly-once</b> write ({@link #newSession()}, or the write methods that take a session id
 * and seq) is different: the group applies each (session, seq) once and answers a repeat with the
 * first result, so such a write is also resent after no answer or a lost connection, on the same
 * or a new leader, until its deadline.
 *
 * <pre>{@code
 * RaftClientConfig cfg = new RaftClientConfig().node(1, "10.0.0.1:9432").node(2, "10.0.0.2:9432").node(3, "10.0.0.3:9432");
 * RaftClient client = new RaftClient(cfg);
 * client.start();
 * byte[] result = client.write(groupId, bizType, new BytesBody(command), BytesDecoder.FACTORY, 3000).get();
 * }</pre>
 */
public final class RaftClient extends LifeCycle {

    private static final PoyangLog log = PoyangLogs.get(RaftClient.class);

    private final RaftClientConfig config;
    private final NioClient net;
    private final Map<Integer, Peer> peers = new HashMap<>();
    private final List<Integer> nodeIds = new ArrayList<>();
    /** group id → the leader's node id as last learned (absent or 0: unknown). */
    private final ConcurrentHashMap<Integer, Integer> leaders = new ConcurrentHashMap<>();
    /** group id → the leader search in progress. */
    private final ConcurrentHashMap<Integer, CompletableFuture<Integer>> searches = new ConcurrentHashMap<>();
    /**
     * group id → the leader search in progress that hears every node out rather than ending at the
     * first that says it leads: for exactly-once writes and idempotent calls whose attempt went
     * unanswered (see
     * {@link WriteCall#unansweredNode}).
     */
    private final ConcurrentHashMap<Integer, CompletableFuture<Integer>> thoroughSearches = new ConcurrentHashMap<>();
    /**
     * group id → when (System.nanoTime) its last leader search ended without a leader this client is
     * connected to. Writes that wait for a leader start no new search for minRetryBackoffMillis after
     * that, so a leaderless group costs the nodes at most one round of status queries per interval,
     * however many writes wait (each with its own back-off phase).
     */
    private final ConcurrentHashMap<Integer, Long> fruitlessSearchEnds = new ConcurrentHashMap<>();
    /**
     * group id → the highest term a node answered a leader search with. A search that ends at the
     * first node saying it leads does so only for a node leading in this term or a later one: a
     * leader replaced while its group was stuck still says it leads, in its old term, and answers as
     * fast as the new one, so once a search has heard the new term (the thorough search after an
     * unanswered attempt hears every node) plain writes and new calls no longer take the old leader
     * back. (A term only grows on a node; after a cluster or group made anew under the same ids, with
     * lower terms, searches hear all nodes out until one has heard every node answer below this
     * term, which then comes down to the highest term heard: see {@link LeaderSearch}.)
     */
    private final ConcurrentHashMap<Integer, Integer> highestTerms = new ConcurrentHashMap<>();
    /** group id → the latest node report, from a leader search, that the group failed on that node. */
    private final ConcurrentHashMap<Integer, GroupFailureReport> failureReports = new ConcurrentHashMap<>();
    private final Executor callbackExecutor;
    private ScheduledExecutorService timer;
    private final AtomicLong redirects = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    /** Deadline timers of writes waiting for a leader search that still hold their write (tests). */
    private final AtomicInteger searchDeadlinesHoldingWrites = new AtomicInteger();

    public RaftClient(RaftClientConfig config) {
        if (config.nodes.isEmpty()) {
            throw new IllegalArgumentException("a raft client needs the nodes of the cluster: config.node(id, \"host:port\")");
        }
        // net.heartbeatIntervalMillis is a public field the setter's bounds cannot guard
        ClientHeartbeatInterval.checkConfigured("RaftClientConfig", "net", "RaftClient", config.net.heartbeatIntervalMillis);
        this.config = config;
        config.net.servers.clear();
        this.net = new NioClient(config.net);
        this.callbackExecutor = config.callbackExecutor != null ? config.callbackExecutor : ForkJoinPool.commonPool();
    }

    @Override
    protected void doStart() {
        net.start();
        for (Map.Entry<Integer, String> e : config.nodes.entrySet()) {
            peers.put(e.getKey(), net.addPeer(e.getValue()));
            nodeIds.add(e.getKey());
        }
        timer = DaemonTimer.create(config.net.name + "-timer");
    }

    @Override
    protected void doStop() {
        List<Runnable> dropped = timer != null ? timer.shutdownNow() : Collections.<Runnable>emptyList();
        net.stop();
        DaemonTimer.runDropped(dropped);
    }

    /** Waits until the client is connected to every node (or throws, naming those that are not). */
    public void waitForConnected(long timeoutMillis) throws InterruptedException {
        net.waitForConnected(timeoutMillis);
    }

    // ---------------------------------------------------------------- writes

    /**
     * Writes {@code body} (a command of kind {@code bizType}) to group {@code groupId}; the future
     * completes with the state machine's result decoded by {@code resultDecoder}, or fails with
     * {@link RaftOutcomeUnknownException}, {@link PoyangTimeoutException} (not applied: no leader
     * took it before the deadline), {@link FlowControlException}, {@link RemoteException} (BIZ_ERROR:
     * the state machine refused it), {@link NotLeaderException} or {@link StoppedException}.
     */
    public <T> CompletableFuture<T> write(int groupId, int bizType, Encodable body, DecoderFactory<T> resultDecoder,
                                          long timeoutMillis) {
        CompletableFuture<T> f = new CompletableFuture<>();
        write(groupId, bizType, body, resultDecoder, timeoutMillis, RpcCallback.completing(f));
        return f;
    }

    /**
     * Like {@link #write(int, int, Encodable, DecoderFactory, long)}, reporting to {@code callback}
     * exactly once — never from inside this call: a write that cannot even be sent (the client's
     * pending-request bound is full, the client is stopped) throws {@link FlowControlException} or
     * {@link StoppedException} instead, so a callback that writes again cannot recurse.
     */
    public <T> void write(int groupId, int bizType, Encodable body, DecoderFactory<T> resultDecoder, long timeoutMillis,
                          RpcCallback<T> callback) {
        checkRunning();
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
        WriteCall<T> call = new WriteCall<>(groupId, RaftCommands.RAFT_WRITE, new RaftWriteRequest(groupId, bizType, body),
                resultDecoder, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis), callback);
        startAttempts(call);
    }

    /**
     * Sends {@code body} as a request of {@code command} — a service of the state machine registered
     * on the servers' service port (see {@code io.poyang.raft.server.ServiceExtension}) — to the
     * leader of {@code groupId}, exactly as {@link #write} sends a write: the leader is found and
     * remembered, NOT_LEADER answers are followed, requests certainly not processed (NOT_LEADER,
     * STOPPING, no leader known) are retried until the deadline, and the same errors are reported
     * (a request sent and not answered is {@link RaftOutcomeUnknownException}). The service must
     * answer NOT_LEADER with the leader's id in the business code, as raft's write path does.
     * Reports to {@code callback} exactly once, never from inside this call.
     */
    public <T> void callLeader(int groupId, int command, Encodable body, DecoderFactory<T> resultDecoder,
                               long timeoutMillis, RpcCallback<T> callback) {
        checkRunning();
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
        WriteCall<T> call = new WriteCall<>(groupId, command, body, resultDecoder,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis), callback);
        startAttempts(call);
    }

    /**
     * {@link #callLeader} for a request the service applies at most once however many copies of it
     * reach the group — it carries the service's own session and sequence, as a DtKV write does —
     * sent as an exactly-once write is: an attempt not answered within {@code attemptMillis}, whose
     * connection was lost, or whose node stepped down with it in its log (SYS_ERROR with detail
     * {@link RaftCommands#SYS_ERROR_STEPPED_DOWN}) is sent again, the same bytes, to whoever leads
     * then, until the deadline. So is one answered TIMEOUT: the node holds each attempt to the
     * attempt's deadline, and a leader too busy to give it a log index by then did not apply it.
     * Another SYS_ERROR (the node's group failed: a full disk, say) ends the call at once, outcome
     * unknown, as {@link #callLeader} does: the caller hears why now rather than at the deadline. So
     * a leader that still answers pings but no longer answers writes (its group stuck, a disk that
     * hangs the sync, a leader that lost its group but not its process) holds the request for one
     * attempt, not for its whole deadline. The first answer wins: an attempt is dropped when its time is up, so a late
     * answer to it is not heard. A failure after an unanswered attempt is
     * {@link RaftOutcomeUnknownException} (that copy may yet be applied); if {@code callback} is an
     * {@link UnansweredAttemptListener} it hears of each unanswered attempt as it happens. Never use
     * it for a request a second copy would apply twice. Reports to {@code callback} exactly once,
     * never from inside this call.
     */
    public <T> void callLeaderExactlyOnce(int groupId, int command, Encodable body, DecoderFactory<T> resultDecoder,
                                          long timeoutMillis, long attemptMillis, RpcCallback<T> callback) {
        WriteCall<T> call = resendingCall(groupId, command, body, resultDecoder, timeoutMillis, attemptMillis, callback);
        call.exactlyOnce = true;
        call.resendWhenNodeFails = false;
        startAttempts(call);
    }

    /**
     * {@link #callLeader} for a request a second copy changes nothing by — a read, a registration
     * the service keeps as a set — sent like {@link #callLeaderExactlyOnce}: an attempt not answered
     * within {@code attemptMillis}, answered TIMEOUT (the node could not serve it within the
     * attempt: a leader cut off from its peers cannot confirm a read), or whose connection was lost
     * is sent again, the same bytes, to the leader a search that hears every node finds, until the
     * deadline. So a leader that still answers pings but no longer serves the group (its group
     * stuck, a hung disk sync) holds the request for one attempt, not its whole deadline. The first
     * answer wins; an unanswered copy leaves nothing unknown, so failures are reported as by
     * {@link #callLeader} (a SYS_ERROR at once; no answer by the deadline as
     * {@link RaftOutcomeUnknownException}, which for such a request only means "no answer"). Never
     * use it for a request a second copy would apply again. Reports to {@code callback} exactly
     * once, never from inside this call.
     */
    public <T> void callLeaderIdempotent(int groupId, int command, Encodable body, DecoderFactory<T> resultDecoder,
                                         long timeoutMillis, long attemptMillis, RpcCallback<T> callback) {
        WriteCall<T> call = resendingCall(groupId, command, body, resultDecoder, timeoutMillis, attemptMillis, callback);
        call.idempotent = true;
        startAttempts(call);
    }

    /** A call whose attempts each wait at most {@code attemptMillis} (the caller says what is resent). */
    private <T> WriteCall<T> resendingCall(int groupId, int command, Encodable body, DecoderFactory<T> resultDecoder,
                                           long timeoutMillis, long attemptMillis, RpcCallback<T> callback) {
        checkRunning();
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
        if (attemptMillis <= 0) {
            throw new IllegalArgumentException("attemptMillis must be positive: " + attemptMillis);
        }
        WriteCall<T> call = new WriteCall<>(groupId, command, body, resultDecoder,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis), callback);
        call.attemptMillis = attemptMillis;
        return call;
    }

    /** Sends the first attempt; the caller's thread is marked so no callback runs inside this call. */
    private static void startAttempts(WriteCall<?> call) {
        call.callerThread = Thread.currentThread();
        try {
            call.attempt();
        } finally {
            call.callerThread = null;
        }
    }

    /**
     * An exactly-once write: {@link #write(int, int, Encodable, DecoderFactory, long)} carrying
     * ({@code sessionId}, {@code seq}). The group applies it once; a repeat with the same pair —
     * this client's own resends after no answer, a TIMEOUT answer (each attempt carries at most
     * {@link RaftClientConfig#exactlyOnceAttemptMillis} as its deadline to the node; not applied) or a
     * lost connection, or the caller's retry after
     * an outcome-unknown failure — gets the first application's result. Sessions are kept by the
     * servers for {@code RaftConfig.sessionExpiryMillis} after their last write and remember the
     * last {@code sessionWindow} seqs; a seq older than that fails outcome-unknown. {@link #newSession()}
     * makes the ids and numbers the writes.
     */
    public <T> CompletableFuture<T> write(int groupId, int bizType, Encodable body, DecoderFactory<T> resultDecoder,
                                          long timeoutMillis, long sessionId, long seq) {
        CompletableFuture<T> f = new CompletableFuture<>();
        write(groupId, bizType, body, resultDecoder, timeoutMillis, sessionId, seq, RpcCallback.completing(f));
        return f;
    }

    /** The callback form of {@link #write(int, int, Encodable, DecoderFactory, long, long, long)}. */
    public <T> void write(int groupId, int bizType, Encodable body, DecoderFactory<T> resultDecoder, long timeoutMillis,
                          long sessionId, long seq, RpcCallback<T> callback) {
        checkRunning();
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
        if (sessionId == 0) {
            throw new IllegalArgumentException("a session id is not 0 (0 means no session)");
        }
        WriteCall<T> call = new WriteCall<>(groupId, RaftCommands.RAFT_WRITE, new RaftWriteRequest(groupId, bizType, body, sessionId, seq),
                resultDecoder, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis), callback);
        call.exactlyOnce = true;
        startAttempts(call);
    }

    /** A new exactly-once session: a random id and writes numbered from 1 (see {@link RaftSession}). */
    public RaftSession newSession() {
        long id;
        do {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (id == 0);
        return new RaftSession(this, id);
    }

    /**
     * Sends {@code body} as a request of {@code command} to node {@code nodeId} itself, for a service
     * that any node can answer (a state machine's follower reads, say), and reports that node's
     * answer as it is: no leader search, no redirect, no retry — the caller decides where to go
     * next (a {@link RemoteException} carries the node's response code). Throws at once, without
     * sending, {@link IllegalArgumentException} for a node this client does not know,
     * {@link NetConnectionException} when it is not connected, {@link FlowControlException} or
     * {@link StoppedException}; every later outcome goes to {@code callback} (on the I/O thread when
     * {@code callbackOnIoThread}, else on the callback executor).
     */
    public <T> void callNode(int nodeId, int command, Encodable body, DecoderFactory<T> resultDecoder,
                             long timeoutMillis, RpcCallback<T> callback) {
        checkRunning();
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive: " + timeoutMillis);
        }
        Peer p = peers.get(nodeId);
        if (p == null) {
            throw new IllegalArgumentException("node " + nodeId + " is not one of " + nodeIds);
        }
        if (!p.isConnected()) {
            throw new NetConnectionException("node " + nodeId + " is not connected");
        }
        RpcCallback<T> cb = config.callbackOnIoThread ? callback : new RpcCallback<T>() {
            @Override
            public void onSuccess(T result) {
                hop(() -> callback.onSuccess(result));
            }

            @Override
            public void onFailure(Throwable error) {
                hop(() -> callback.onFailure(error));
            }
        };
        net.sendRequest(p, WritePacket.request(command, body), resultDecoder, timeoutMillis,
                CallOptions.IO_THREAD_CALLBACK, cb);
    }

    /** Whether this client has a live connection to node {@code nodeId}. */
    public boolean isConnected(int nodeId) {
        Peer p = peers.get(nodeId);
        return p != null && p.isConnected();
    }

    private void hop(Runnable r) {
        try {
            callbackExecutor.execute(r);
        } catch (RejectedExecutionException e) {
            r.run();
        }
    }

    /**
     * The id this client gives in its handshakes (one per client, the same on every connection):
     * servers know the client's connections by it, so it is the natural client id of sessions and
     * pushes.
     */
    public java.util.UUID clientUuid() {
        return net.uuid();
    }

    /**
     * The client's network node (one connection per server). Before {@link #start()}, an
     * application may register processors for pushes from the servers on it and a connection
     * listener; it must not send on it directly what the raft client manages.
     */
    public NioClient network() {
        return net;
    }

    /** The ids of the nodes this client knows, in the order they were configured. */
    public List<Integer> nodeIds() {
        return java.util.Collections.unmodifiableList(nodeIds);
    }

    /** The leader of {@code groupId} as this client knows it, or 0. */
    public int knownLeader(int groupId) {
        Integer l = leaders.get(groupId);
        return l == null ? 0 : l;
    }

    /** Tells the client where a group's leader is (a hint; a NOT_LEADER answer corrects it). */
    public void updateLeader(int groupId, int nodeId) {
        if (nodeId == 0) {
            leaders.remove(groupId);
        } else {
            leaders.put(groupId, nodeId);
        }
    }

    /** Writes sent again to the leader a NOT_LEADER answer named. */
    public long redirectCount() {
        return redirects.get();
    }

    /** Writes sent again after no leader was known or a node refused them as not applied. */
    public long retryCount() {
        return retries.get();
    }

    /**
     * The deadline timers of writes that waited for a leader search which still hold their write:
     * those whose search has not ended yet (package-private, for tests).
     */
    int searchDeadlinesHoldingWrites() {
        return searchDeadlinesHoldingWrites.get();
    }

    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<WriteCall> WRITE_CALL_DONE =
            AtomicIntegerFieldUpdater.newUpdater(WriteCall.class, "done");
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<WriteCall> SEARCH_TICKET =
            AtomicIntegerFieldUpdater.newUpdater(WriteCall.class, "searchTicket");

    /** One write: attempts until it is answered, certainly not applied past the deadline, or unknown. */
    private final class WriteCall<T> implements RpcCallback<T> {
        private final int groupId;
        private final int command;
        private final Encodable request;
        private final DecoderFactory<T> decoder;
        private final long deadlineNanos;
        private final RpcCallback<T> callback;
        /** 0 until answered; set once through {@link #WRITE_CALL_DONE} (no AtomicInteger per write). */
        volatile int done;
        private int node;
        private int attempts;
        /**
         * The caller's thread during its own attempt: failures to send are thrown to it, not called
         * back. An attempt on any other thread (a leader search that ended meanwhile) calls back.
         */
        Thread callerThread;
        /** An earlier attempt of this exactly-once write went unanswered: it may be in the log. */
        private boolean mayBeInLog;
        /** Taken by whichever ends a leader search first: its answer or the call's deadline. */
        volatile int searchTicket;
        /** The write carries a session: resent after no answer or a lost connection (the group applies it once). */
        boolean exactlyOnce;
        /**
         * The request changes nothing a second copy would change again ({@link #callLeaderIdempotent}):
         * sent again, like an exactly-once write, after an attempt went unanswered or its connection
         * was lost, but an unanswered copy leaves no outcome unknown.
         */
        boolean idempotent;
        /** How long one attempt of an exactly-once or idempotent call waits for its answer before it is sent again. */
        long attemptMillis = config.exactlyOnceAttemptMillis;
        /**
         * An exactly-once write is sent again after any SYS_ERROR of the node it went to (its group
         * failed, say), not only after SYS_ERROR_STEPPED_DOWN. False for {@link #callLeaderExactlyOnce}:
         * its caller hears such an error at once, as from {@link #callLeader}.
         */
        boolean resendWhenNodeFails = true;
        private long backoffMillis;
        /** A node that answered it does not host the group: a search naming it (others still do) is not followed. */
        private volatile int notHosting;
        /**
         * The node an attempt of this exactly-once write or idempotent call last went unanswered on
         * (0: none). It may be a leader that was replaced while stuck: it still says it leads, in its
         * old term, and answers the status query as fast as the new leader does, so from then on this
         * call's leader searches
         * hear every node out and take the leader of the highest term. (A leader that was only slow is
         * still taken when no other node leads in a later term.)
         */
        private int unansweredNode;
        /** The last refusal that made this write wait for another try (NOT_LEADER, STOPPING), for the deadline's error. */
        private String lastRefusal;

        WriteCall(int groupId, int command, Encodable request, DecoderFactory<T> decoder, long deadlineNanos,
                  RpcCallback<T> callback) {
            this.groupId = groupId;
            this.command = command;
            this.request = request;
            this.decoder = decoder;
            this.deadlineNanos = deadlineNanos;
            this.callback = callback;
            this.backoffMillis = config.minRetryBackoffMillis;
        }

        void attempt() {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                fail(new PoyangTimeoutException("no leader of raft group " + groupId + " took the write before its"
                        + " deadline; it was not applied" + whyNoLeader()));
                return;
            }
            int leader = knownLeader(groupId);
            Peer p = leader == 0 ? null : peers.get(leader);
            if (p == null || !p.isConnected()) {
                findLeaderThenAttempt();
                return;
            }
            node = leader;
            attempts++;
            // an exactly-once write or an idempotent call may be sent again, so one attempt need not use
            // up the whole deadline
            long thisAttemptMillis = exactlyOnce || idempotent ? Math.min(left, Math.max(attemptMillis, 1)) : left;
            try {
                net.sendRequest(p, WritePacket.request(command, request), decoder, thisAttemptMillis,
                        CallOptions.IO_THREAD_CALLBACK, this);
            } catch (FlowControlException | StoppedException e) {
                if (callerThread == Thread.currentThread()) {
                    throw e;
                }
                fail(e);
            } catch (NetConnectionException e) {
                // not sent: the connection went away between the check and the send
                leaders.remove(groupId, leader);
                retryLater();
            }
        }

        /** What the nodes said that explains the missing leader, for the deadline's error; "" if nothing. */
        private String whyNoLeader() {
            if (lastRefusal != null) {
                return " (last answer: " + lastRefusal + ")";
            }
            // the write never reached a node; the leader searches may have heard why
            GroupFailureReport r = failureReports.get(groupId);
            return r == null ? "" : " (" + r + ")";
        }

        private void findLeaderThenAttempt() {
            // The search is shared by every call waiting for this group's leader and waits up to
            // statusTimeoutMillis for slow nodes; this call must still end at its own deadline. The
            // search's end and the deadline race for the ticket: one goes on, the other does nothing
            // (so the call never makes two attempts at once).
            Long fruitlessEnd = fruitlessSearchEnds.get(groupId);
            if (fruitlessEnd != null && System.nanoTime() - fruitlessEnd
                    < TimeUnit.MILLISECONDS.toNanos(config.minRetryBackoffMillis)) {
                retryLater();   // a round just found no leader to write to: asking again now finds none either
                return;
            }
            int ticket = searchTicket;
            CompletableFuture<Integer> search = findLeader(groupId, unansweredNode != 0);
            SearchDeadline deadline = null;
            if (!search.isDone()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()) + 1;
                deadline = new SearchDeadline(this, ticket);
                try {
                    timer.schedule(deadline, Math.max(1, left), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    deadline.take();   // stopped: the client's stop ends the call
                }
            }
            SearchDeadline searchDeadline = deadline;
            search.whenComplete((leader, e) -> {
                if (searchDeadline != null) {
                    // whichever of the two takes the ticket, the timer has nothing left to do: it
                    // must not keep the write (its body, its callback) until the deadline
                    searchDeadline.take();
                }
                if (!SEARCH_TICKET.compareAndSet(this, ticket, ticket + 1)) {
                    return;   // the deadline came first
                }
                if (e instanceof NodeIdMismatchException) {
                    fail(e);   // the server list is wrong: redirects would go to the wrong machines
                    return;
                }
                if (leader != null && leader != 0 && leader != notHosting && peers.get(leader) != null
                        && peers.get(leader).isConnected()) {
                    attemptInCallback();
                } else {
                    if (notHosting != 0) {
                        // the search may have made it the hint again (the others still name it)
                        leaders.remove(groupId, notHosting);
                    }
                    retryLater();
                }
            });
        }

        /**
         * An attempt from a future's callback, which would swallow what it throws (it can run on the
         * caller's thread, inside the caller's own attempt, when the search ended at once).
         */
        private void attemptInCallback() {
            try {
                attempt();
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        private void retryLater() {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                attempt();   // fails with the deadline
                return;
            }
            long pause = Math.min(backoffMillis, left);
            backoffMillis = Math.min(backoffMillis * 2, config.maxRetryBackoffMillis);
            retries.incrementAndGet();
            try {
                timer.schedule(this::attempt, pause, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                fail(new StoppedException("the raft client is stopped"));
            }
        }

        @Override
        public void onSuccess(T result) {
            if (WRITE_CALL_DONE.compareAndSet(this, 0, 1)) {
                deliver(result, null);
            }
        }

        @Override
        public void onFailure(Throwable error) {
            if (done != 0) {
                return;
            }
            if (error instanceof RemoteException) {
                RemoteException r = (RemoteException) error;
                switch (r.responseCode()) {
                    case ResponseCode.NOT_LEADER: {
                        // not applied: go to the leader it names, or look for one
                        lastRefusal = r.remoteMessage();
                        int hint = r.bizCode();
                        if (hint != 0 && hint != node) {
                            leaders.put(groupId, hint);
                            redirects.incrementAndGet();
                            attempt();
                        } else {
                            leaders.remove(groupId, node);
                            retryLater();
                        }
                        return;
                    }
                    case ResponseCode.STOPPING:
                        lastRefusal = r.remoteMessage();
                        leaders.remove(groupId, node);
                        retryLater();
                        return;
                    case ResponseCode.BAD_REQUEST:
                        if (r.bizCode() == RaftCommands.DETAIL_NO_SUCH_GROUP) {
                            noSuchGroup();
                            return;
                        }
                        fail(r);
                        return;
                    case ResponseCode.FLOW_CONTROL:
                        fail(new FlowControlException("raft group " + groupId + " on node " + node
                                + " refused the write: " + r.remoteMessage()));
                        return;
                    case ResponseCode.TIMEOUT:
                        if (deadlineNanos - System.nanoTime() > 0) {
                            // The node's deadline for this copy passed, and the node carries the
                            // attempt's deadline, shorter than the call's when the call has an attempt
                            // limit. A write answered so never got a log index (not applied, whether
                            // exactly-once or not), so it is sent again while the call has time: a leader
                            // too busy to take it within one attempt no longer fails a write whose caller
                            // would still wait. (A call without an attempt limit sends its own deadline:
                            // its TIMEOUT comes after it, and it fails below.)
                            lastRefusal = r.remoteMessage();
                            if (idempotent) {
                                // the node could not serve it in time (a leader that lost its peers cannot
                                // confirm a read): ask whoever leads in the highest term
                                unansweredNode = node;
                                leaders.remove(groupId, node);
                            }
                            retryLater();
                            return;
                        }
                        fail(new PoyangTimeoutException("the write's deadline passed before the leader of raft group "
                                + groupId + " could take it; it was not applied"));
                        return;
                    case ResponseCode.SYS_ERROR:
                        if (r.bizCode() == RaftCommands.SYS_ERROR_STEPPED_DOWN) {
                            // the node stopped leading: the next write of the group looks for the new leader
                            leaders.remove(groupId, node);
                        }
                        if (exactlyOnce && r.bizCode() != RaftCommands.SYS_ERROR_SESSION_WINDOW_PASSED
                                && (resendWhenNodeFails || r.bizCode() == RaftCommands.SYS_ERROR_STEPPED_DOWN)
                                && deadlineNanos - System.nanoTime() > 0) {
                            // the node failed or stopped with it in its log: another leader applies it once
                            unanswered(r);
                            leaders.remove(groupId, node);
                            retryLater();
                            return;
                        }
                        fail(new RaftOutcomeUnknownException(groupId, "node " + node + " of raft group " + groupId
                                + " failed with the write in its log: " + r.remoteMessage(), r));
                        return;
                    default:
                        fail(r);
                        return;
                }
            }
            if (error instanceof NetNotSentException
                    || error instanceof NetTimeoutException && ((NetTimeoutException) error).neverSent()) {
                // never left this process (the connection closed with it still queued, or its deadline
                // passed while it waited for a connection or in the write queue): not applied
                leaders.remove(groupId, node);
                lastRefusal = error.getMessage();
                retryLater();
                return;
            }
            if (error instanceof NetTimeoutException || error instanceof NetConnectionException) {
                // Forgotten on a timeout too: a leader whose host died or whose network went black
                // keeps its connection open (no reset comes) until TCP gives up, minutes later, and
                // every call would go on waiting out its deadline there while another node leads.
                // The next call searches; a leader that was only slow is found again at once.
                leaders.remove(groupId, node);
                if ((exactlyOnce || idempotent) && deadlineNanos - System.nanoTime() > 0) {
                    // sent again: under the same (session, seq) applied at most once, answered with the
                    // first result; an idempotent request changes nothing more the second time
                    if (error instanceof NetTimeoutException) {
                        unansweredNode = node;
                    }
                    if (exactlyOnce) {
                        unanswered(error);
                    }
                    retryLater();
                    return;
                }
                fail(new RaftOutcomeUnknownException(groupId, "the write to raft group " + groupId + " (node " + node
                        + ") got no answer: " + error.getMessage() + "; it may or may not be applied", error));
                return;
            }
            fail(error);
        }

        /** An attempt of this exactly-once write ended without its outcome ({@code why}): it may be in the log. */
        private void unanswered(Throwable why) {
            mayBeInLog = true;
            if (callback instanceof UnansweredAttemptListener) {
                try {
                    ((UnansweredAttemptListener) callback).onUnansweredAttempt(node, why);
                } catch (Throwable t) {
                    log.warn("an UnansweredAttemptListener threw", t);
                }
            }
        }

        /**
         * The node taken for the leader does not host the group (not applied there): a membership change
         * moved the group off it. Look for the leader among the other nodes; while they know none but that
         * node (it led until it was taken out; they are electing another), retry with back-off, as with no
         * leader known, until the deadline.
         */
        private void noSuchGroup() {
            notHosting = node;
            leaders.remove(groupId, node);
            redirects.incrementAndGet();
            // the search races the call's deadline like any other (it may wait statusTimeoutMillis)
            findLeaderThenAttempt();
        }

        private void fail(Throwable e) {
            if (WRITE_CALL_DONE.compareAndSet(this, 0, 1)) {
                if (mayBeInLog && !(e instanceof RaftOutcomeUnknownException) && (e instanceof PoyangTimeoutException
                        || e instanceof FlowControlException || e instanceof StoppedException
                        || e instanceof NodeIdMismatchException)) {
                    // This attempt was certainly not applied, but an earlier one may be in the log and
                    // commit yet: "not applied" would invite a second write under a new sequence.
                    e = new RaftOutcomeUnknownException(groupId, "an earlier attempt of this write to raft group "
                            + groupId + " got no answer and may still be applied; the last attempt: " + e.getMessage()
                            + ". Retry it with the same session and sequence to learn its outcome", e);
                }
                deliver(null, e);
            }
        }

        private void deliver(T result, Throwable e) {
            if (config.callbackOnIoThread) {
                invoke(result, e);
                return;
            }
            try {
                callbackExecutor.execute(() -> invoke(result, e));
            } catch (RejectedExecutionException ex) {
                invoke(result, e);
            }
        }

        private void invoke(T result, Throwable e) {
            try {
                if (e == null) {
                    callback.onSuccess(result);
                } else {
                    callback.onFailure(e);
                }
            } catch (Throwable t) {
                log.warn("a raft write callback threw", t);
            }
        }
    }

    /**
     * The deadline of a write while it waits for a leader search: at the deadline it takes the
     * write's search ticket and fails it, unless the search's end took the ticket first. The search's
     * end takes the write from it, so the timer's queue, which keeps it until the deadline, no longer
     * holds the write. (It is not cancelled instead: the timer's cancel scans its queue, and every
     * write that waited for a search would cancel, all at once when the search ends.)
     */
    private final class SearchDeadline extends AtomicReference<WriteCall<?>> implements Runnable {
        private final int ticket;

        SearchDeadline(WriteCall<?> call, int ticket) {
            super(call);
            this.ticket = ticket;
            searchDeadlinesHoldingWrites.incrementAndGet();
        }

        /** The write, the first time only (null after): this deadline lets go of it. */
        WriteCall<?> take() {
            WriteCall<?> call = getAndSet(null);
            if (call != null) {
                searchDeadlinesHoldingWrites.decrementAndGet();
            }
            return call;
        }

        @Override
        public void run() {
            WriteCall<?> call = take();
            if (call != null && SEARCH_TICKET.compareAndSet(call, ticket, ticket + 1)) {
                call.attemptInCallback();   // past the deadline: fails, nothing was sent meanwhile
            }
        }
    }

    // ---------------------------------------------------------------- leaders and status

    /**
     * Asks the connected nodes where {@code groupId} stands and completes with the leader (the node
     * that says it leads, in the highest term; else the leader the nodes name), or 0 when none is
     * known. Concurrent searches for one group share one round of queries. It ends at the first node
     * that says it leads in the highest term this client has heard of for the group (a leader of an
     * older term may be one replaced while its group was stuck), else once every node has answered.
     */
    public CompletableFuture<Integer> findLeader(int groupId) {
        return findLeader(groupId, false);
    }

    /**
     * {@link #findLeader(int)}, ending at the first node that says it leads ({@code hearAll} false) or
     * once every node asked has answered or timed out (true): then the leader of the highest term is
     * taken, even when a replaced leader that still thinks it leads answers first.
     */
    private CompletableFuture<Integer> findLeader(int groupId, boolean hearAll) {
        ConcurrentHashMap<Integer, CompletableFuture<Integer>> inProgress = hearAll ? thoroughSearches : searches;
        CompletableFuture<Integer> running = hearAll ? null : thoroughSearches.get(groupId);
        if (running != null) {
            // A call's attempt went unanswered (perhaps on a stuck leader) and that search hears every
            // node: a quick one now could end at the stuck leader, which says it leads as fast as ever.
            return running;
        }
        running = inProgress.get(groupId);
        if (running != null) {
            return running;
        }
        CompletableFuture<Integer> f = new CompletableFuture<>();
        running = inProgress.putIfAbsent(groupId, f);
        if (running != null) {
            return running;
        }
        f.whenComplete((l, e) -> {
            Peer found = l == null || l == 0 ? null : peers.get(l);
            if (found != null && found.isConnected()) {
                fruitlessSearchEnds.remove(groupId);
            } else {
                fruitlessSearchEnds.put(groupId, System.nanoTime());
            }
            inProgress.remove(groupId, f);
        });
        Map<Integer, Peer> asked = new LinkedHashMap<>();
        for (int id : nodeIds) {
            Peer p = peers.get(id);
            if (p.isConnected()) {
                asked.put(id, p);
            }
        }
        new LeaderSearch(net, groupId, config.statusTimeoutMillis, !hearAll, leaders, failureReports, highestTerms,
                nodeIds.size(), f).start(asked);
        return f;
    }

    /** Asks node {@code nodeId} where group {@code groupId} stands. */
    public CompletableFuture<RaftStatusResponse> queryStatus(int nodeId, int groupId, long timeoutMillis) {
        Peer p = peers.get(nodeId);
        if (p == null) {
            CompletableFuture<RaftStatusResponse> f = new CompletableFuture<>();
            f.completeExceptionally(new IllegalArgumentException("node " + nodeId + " is not one of " + nodeIds));
            return f;
        }
        return net.sendRequest(p, WritePacket.request(RaftCommands.RAFT_STATUS, new RaftStatusRequest(groupId)),
                RaftStatusResponse.DECODER, timeoutMillis);
    }
}
