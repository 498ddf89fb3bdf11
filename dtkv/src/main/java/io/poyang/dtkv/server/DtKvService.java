package io.poyang.dtkv.server;

import io.poyang.codec.Encodable;
import io.poyang.common.DaemonTimer;
import io.poyang.dtkv.KvCommands;
import io.poyang.dtkv.KvWatchNotify;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.net.CallOptions;
import io.poyang.net.ConnectionListener;
import io.poyang.net.Handshake;
import io.poyang.net.IgnoreBodyDecoder;
import io.poyang.net.NioConnection;
import io.poyang.net.NioServer;
import io.poyang.net.RpcCallback;
import io.poyang.net.WritePacket;
import io.poyang.raft.core.RaftGroup;
import io.poyang.raft.server.RaftServer;
import io.poyang.raft.server.ServiceExtension;

import java.util.Collections;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * DtKV on a node's service port: registers the DtKV commands (KV_WRITE, KV_READ, KV_WATCH), knows
 * which client is on which connection (by the client id of its handshake, the id KvClient also puts
 * in its requests) and pushes watch notifications and lock events to clients. One per
 * {@link RaftServer}, shared by the node's DtKV groups:
 *
 * <pre>{@code
 * DtKvService kv = new DtKvService();
 * RaftServer server = RaftServer.builder()
 *         .nodeId(1).node(1, "127.0.0.1:9431") ...
 *         .serviceExtension(kv)
 *         .group(1, kv.stateMachine(1), 1, 2, 3)
 *         .build();
 * }</pre>
 *
 * <p>Threads: processors run on the service I/O thread and hand work to the group's dispatcher
 * (writes through raft's own write path, reads and watch registrations through the state machine's
 * task channel); the connection maps are concurrent; pushes are queued to the connection's I/O
 * worker from the dispatcher without waiting.
 */
public final class DtKvService implements ServiceExtension, ConnectionListener {

    private static final PoyangLog log = PoyangLogs.get(DtKvService.class);
    /**
     * A watch notification waits this long for its acknowledgement, which in practice means as long
     * as its connection is open: the client answers once its listeners ran, however long they take.
     * Were it counted undelivered sooner, its keys would be sent again while the client still works
     * through the first copy, and a client whose listeners are slower than that would queue
     * notifications without bound. A client that is gone or stopped reading loses its connection to
     * the net layer's own checks (idle, write stall), which fails the push.
     */
    static final long WATCH_PUSH_TIMEOUT_MILLIS = TimeUnit.DAYS.toMillis(1);
    /** A lock event push not answered this long is given up (nothing is sent again: it is best effort). */
    static final long LOCK_EVENT_PUSH_TIMEOUT_MILLIS = 10_000;
    /**
     * A watch notification that failed on an open connection (the client answered with an error, or
     * this node's pending limit was full) is reported undelivered, and so sent again, only after this
     * long: at once, a client that cannot take notifications would get them again in a busy loop.
     */
    static final long FAILED_PUSH_RETRY_MILLIS = 1_000;

    /**
     * Watch notifications give their room in the service port's pending limit back once written: a
     * client acknowledges one only after its listeners ran, and held until then, the notifications
     * of a few hundred clients with stuck listeners (each up to {@link KvConfig#maxNotifyBytes})
     * filled the limit and no other watcher on the node was told anything. Each watcher has one
     * notification in flight at most, so what waits for acknowledgements stays bounded anyway.
     */
    private static final CallOptions WATCH_PUSH_OPTIONS = CallOptions.IO_THREAD_CALLBACK.freeingRoomWhenWritten();

    /** Failed watch pushes are warned about at most this often (see {@link #noteFailedPush}). */
    private static final long FAILED_PUSH_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private final Object failedPushLog = new Object();
    private long failedPushesNotLogged;
    private long lastFailedPushLogNanos;

    private volatile RaftServer server;
    private volatile NioServer service;
    private final ConcurrentHashMap<NioConnection, ClientConnection> connections = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<UUID, CopyOnWriteArrayList<ClientConnection>> byClient = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, DtKvStateMachine> machines = new ConcurrentHashMap<>();
    private final AtomicLong nextConnectionId = new AtomicLong(1);
    /** Delays the report of failed pushes (see {@link #FAILED_PUSH_RETRY_MILLIS}); made at the first one. */
    private ScheduledExecutorService retryTimer;
    /** Uninstalled: no timer is made any more (its thread would outlive the node). */
    private boolean uninstalled;

    /** A client connection as DtKV knows it; its id names the connection's watcher in every group. */
    static final class ClientConnection {
        final long id;
        final NioConnection connection;
        final UUID client;

        ClientConnection(long id, NioConnection connection, UUID client) {
            this.id = id;
            this.connection = connection;
            this.client = client;
        }
    }

    /** A supplier of this group's state machine on this node, for {@code RaftServerConfig.Builder.group}. */
    public java.util.function.Supplier<DtKvStateMachine> stateMachine(int groupId) {
        return stateMachine(groupId, new KvConfig());
    }

    /** Like {@link #stateMachine(int)} with settings ({@code config.groupId} is set to {@code groupId}). */
    public java.util.function.Supplier<DtKvStateMachine> stateMachine(int groupId, KvConfig config) {
        config.validate();   // here, where the embedding configures, not when raft first builds the machine
        return () -> {
            KvConfig c = copy(config);
            c.groupId = groupId;
            return new DtKvStateMachine(this, c);
        };
    }

    private static KvConfig copy(KvConfig k) {
        KvConfig c = new KvConfig();
        c.sessionIdleMillis = k.sessionIdleMillis;
        c.sessionSweepIntervalMillis = k.sessionSweepIntervalMillis;
        c.sessionWindowMax = k.sessionWindowMax;
        c.expireRetryMillis = k.expireRetryMillis;
        c.snapshotChunkBytes = k.snapshotChunkBytes;
        c.maxEventsPerNotify = k.maxEventsPerNotify;
        c.maxNotifyBytes = k.maxNotifyBytes;
        c.maxWatchesPerConnection = k.maxWatchesPerConnection;
        return c;
    }

    // ---------------------------------------------------------------- ServiceExtension

    @Override
    public void install(RaftServer server, NioServer service) {
        this.server = server;
        this.service = service;
        synchronized (this) {
            uninstalled = false;
        }
        service.register(KvCommands.KV_WRITE, new KvProcessors.Write(this));
        service.register(KvCommands.KV_READ, new KvProcessors.Read(this));
        service.register(KvCommands.KV_WATCH, new KvProcessors.Watch(this));
        service.setConnectionListener(this);
    }

    @Override
    public void uninstall(RaftServer server) {
        connections.clear();
        byClient.clear();
        synchronized (this) {
            uninstalled = true;
            if (retryTimer != null) {
                retryTimer.shutdownNow();   // the groups stopped: their watchers are gone
                retryTimer = null;
            }
        }
    }

    // ---------------------------------------------------------------- groups

    void register(DtKvStateMachine sm) {
        machines.put(sm.groupId(), sm);
    }

    void unregister(DtKvStateMachine sm) {
        machines.remove(sm.groupId(), sm);
    }

    /** The group of a request: 0 means the node's first DtKV group. Null when this node has none such. */
    RaftGroup group(int groupId) {
        RaftServer s = server;
        if (s == null) {
            return null;
        }
        if (groupId == 0) {
            int lowest = Integer.MAX_VALUE;
            for (Integer id : machines.keySet()) {
                if (id < lowest && s.group(id) != null) {   // a group being removed may not have left yet
                    lowest = id;
                }
            }
            if (lowest == Integer.MAX_VALUE) {
                return null;
            }
            groupId = lowest;
        }
        return s.group(groupId);
    }

    /** The DtKV groups this node serves now, sorted (a group removed at runtime leaves this list). */
    public java.util.List<Integer> groupIds() {
        java.util.List<Integer> ids = new java.util.ArrayList<>(machines.keySet());
        java.util.Collections.sort(ids);
        return ids;
    }

    DtKvStateMachine machine(RaftGroup g) {
        return g == null ? null : machines.get(g.groupId());
    }

    int nodeId() {
        RaftServer s = server;
        return s == null ? 0 : s.nodeId();
    }

    // ---------------------------------------------------------------- connections

    @Override
    public void onConnected(NioConnection connection) {
        Handshake hs = connection.remoteHandshake();
        UUID client = hs == null ? new UUID(0, 0) : new UUID(hs.uuidMost(), hs.uuidLeast());
        ClientConnection c = new ClientConnection(nextConnectionId.getAndIncrement(), connection, client);
        connections.put(connection, c);
        byClient.computeIfAbsent(client, k -> new CopyOnWriteArrayList<>()).add(c);
    }

    @Override
    public void onClosed(NioConnection connection) {
        ClientConnection c = connections.remove(connection);
        if (c == null) {
            return;
        }
        CopyOnWriteArrayList<ClientConnection> list = byClient.get(c.client);
        if (list != null) {
            list.remove(c);
            if (list.isEmpty()) {
                byClient.remove(c.client, list);
            }
        }
        for (DtKvStateMachine sm : machines.values()) {
            sm.onConnectionClosed(c.id);
        }
    }

    /** The DtKV view of a connection (registered at its handshake), or null. */
    ClientConnection connection(NioConnection connection) {
        return connections.get(connection);
    }

    // ---------------------------------------------------------------- pushes (dispatcher threads)

    /**
     * Pushes a watch notification ({@code body} as {@code command}) to a connection; {@code callback}
     * hears the acknowledgement, or the failure (late when the connection is still open: see
     * {@link #FAILED_PUSH_RETRY_MILLIS}).
     */
    void push(ClientConnection c, int command, Encodable body, RpcCallback<Object> callback) {
        send(c, command, body, WATCH_PUSH_TIMEOUT_MILLIS, WATCH_PUSH_OPTIONS, new RpcCallback<Object>() {
            @Override
            public void onSuccess(Object result) {
                callback.onSuccess(result);
            }

            @Override
            public void onFailure(Throwable error) {
                if (c.connection.isOpen()) {
                    noteFailedPush(c, error);
                    reportLater(() -> callback.onFailure(error));
                } else {
                    callback.onFailure(error);
                }
            }
        });
    }

    /**
     * Tells a connection's client that this node dropped its watches of {@code groupId} (a
     * KV_WATCH_NOTIFY with {@code moved} set): it registers them with the leader. Nothing else
     * would make a client whose connection stays open do so (a notification is sent again by its
     * watcher's bookkeeping, which this node no longer has), so one that fails while the connection
     * is open (the pending limit full, an error answer) is sent again, every
     * {@link #FAILED_PUSH_RETRY_MILLIS}, until it is answered, the connection closes (the client
     * re-registers then anyway) or the node stops.
     */
    void pushMoved(ClientConnection c, int groupId, long raftIndex) {
        push(c, KvCommands.KV_WATCH_NOTIFY, new KvWatchNotify(groupId, raftIndex, Collections.emptyList(), true),
                new RpcCallback<Object>() {
                    @Override
                    public void onSuccess(Object result) {
                    }

                    @Override
                    public void onFailure(Throwable error) {
                        if (c.connection.isOpen() && isInstalled()) {
                            pushMoved(c, groupId, raftIndex);
                        }
                    }
                });
    }

    private synchronized boolean isInstalled() {
        return !uninstalled;
    }

    private void send(ClientConnection c, int command, Encodable body, long timeoutMillis, CallOptions options,
                      RpcCallback<Object> callback) {
        NioServer s = service;
        if (s == null || !c.connection.isOpen()) {
            callback.onFailure(new IllegalStateException("connection closed"));
            return;
        }
        try {
            s.sendRequest(c.connection, WritePacket.request(command, body), IgnoreBodyDecoder.factory(),
                    timeoutMillis, options, callback);
        } catch (RuntimeException e) {
            callback.onFailure(e);
        }
    }

    /**
     * Warns about watch pushes that failed on open connections (the pending limit full, an error
     * answer), once per {@link #FAILED_PUSH_LOG_INTERVAL_NANOS} with a count: each is retried every
     * second, so one per failure could be thousands of lines a second, and none at all left an
     * operator guessing why watchers heard nothing.
     */
    private void noteFailedPush(ClientConnection c, Throwable error) {
        long now = System.nanoTime();
        long count;
        synchronized (failedPushLog) {
            failedPushesNotLogged++;
            if (lastFailedPushLogNanos != 0 && now - lastFailedPushLogNanos < FAILED_PUSH_LOG_INTERVAL_NANOS) {
                return;
            }
            count = failedPushesNotLogged;
            failedPushesNotLogged = 0;
            lastFailedPushLogNanos = now;
        }
        log.warn("{} watch notification(s) could not be sent on open connections since the last such warning;"
                        + " the latest, to client {} on {}: {}. Each is sent again {} ms later (this warning comes at"
                        + " most every {} s)", count, c.client, c.connection, error.toString(), FAILED_PUSH_RETRY_MILLIS,
                TimeUnit.NANOSECONDS.toSeconds(FAILED_PUSH_LOG_INTERVAL_NANOS));
    }

    private void reportLater(Runnable report) {
        ScheduledExecutorService t;
        synchronized (this) {
            if (retryTimer == null && !uninstalled) {
                retryTimer = DaemonTimer.create("raft-" + nodeId() + "-kv-push-retry");
            }
            t = retryTimer;
        }
        if (t == null) {
            report.run();   // the node stopped: its groups and watchers are gone
            return;
        }
        try {
            t.schedule(report, FAILED_PUSH_RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            report.run();   // the node is stopping
        }
    }

    /** Pushes a lock event to every connection of the client it names (a client may be on several nodes' ports). */
    void pushToClient(long uuidMost, long uuidLeast, int command, Encodable body) {
        CopyOnWriteArrayList<ClientConnection> list = byClient.get(new UUID(uuidMost, uuidLeast));
        if (list == null) {
            return;
        }
        for (ClientConnection c : list) {
            send(c, command, body, LOCK_EVENT_PUSH_TIMEOUT_MILLIS, CallOptions.IO_THREAD_CALLBACK, IGNORE);
        }
    }

    private static final RpcCallback<Object> IGNORE = new RpcCallback<Object>() {
        @Override
        public void onSuccess(Object result) {
        }

        @Override
        public void onFailure(Throwable error) {
            log.debug("a lock event push failed: {}", error.toString());
        }
    };
}
