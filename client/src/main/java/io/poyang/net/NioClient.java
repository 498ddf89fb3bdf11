package io.poyang.net;

import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The client side of the net layer: one I/O worker by default, one connection per server
 * ({@link Peer}), reconnects with back-off, and a handshake on every new connection. Requests go to
 * a given peer or to a connected one chosen round-robin; each has a timeout and completes exactly
 * once through its callback or future. Register processors before start to receive server pushes.
 *
 * <pre>{@code
 * NioClientConfig cfg = new NioClientConfig();
 * cfg.servers.add("127.0.0.1:9432");
 * NioClient client = new NioClient(cfg);
 * client.start();
 * client.waitForConnected(3000);
 * byte[] echoed = client.sendRequest(null, WritePacket.request(Commands.ECHO, new BytesBody(data)),
 *         BytesDecoder.FACTORY, 1000).get();
 * }</pre>
 */
public final class NioClient extends NioNode {

    private static final PoyangLog log = PoyangLogs.get(NioClient.class);

    private final NioClientConfig clientConfig;
    private final CopyOnWriteArrayList<Peer> peers = new CopyOnWriteArrayList<>();
    private int nextWorker;
    /** Round-robin position for peer choice; a racy int is fine, it only spreads load. */
    private int roundRobin;

    public NioClient(NioClientConfig config) {
        super(config);
        this.clientConfig = config;
    }

    @Override
    protected void doStart() throws Exception {
        startWorkers();
        for (String s : clientConfig.servers) {
            addPeerNow(parse(s), 0);
        }
        log.info("{} started with {} I/O threads and {} servers", describe(), workers.length, peers.size());
    }

    @Override
    protected void doStop() throws Exception {
        stopWorkers();
        log.info("{} stopped", describe());
    }

    /** Adds a server given as "host:port" and starts connecting to it. */
    public Peer addPeer(String hostPort) {
        return addPeer(hostPort, 0);
    }

    public Peer addPeer(InetSocketAddress address) {
        return addPeer(address, 0);
    }

    /**
     * A peer that must be node {@code expectedNodeId} (0: any server): the handshake names it, a
     * server with another node id refuses the connection ({@link ResponseCode#WRONG_NODE}), and a
     * server that says it is another node is disconnected. Either way the peer keeps reconnecting
     * with back-off, its requests fail as not connected, and {@link Peer#wrongNode()} says why.
     */
    public Peer addPeer(String hostPort, int expectedNodeId) {
        InetSocketAddress named = parse(hostPort);
        checkExpectedNodeId(expectedNodeId);
        checkRunning();
        return addPeerNow(named, expectedNodeId);
    }

    public Peer addPeer(InetSocketAddress address, int expectedNodeId) {
        checkExpectedNodeId(expectedNodeId);
        checkRunning();
        return addPeerNow(address, expectedNodeId);
    }

    private static void checkExpectedNodeId(int expectedNodeId) {
        if (expectedNodeId < 0) {
            throw new IllegalArgumentException("expectedNodeId must not be negative: " + expectedNodeId);
        }
    }

    /**
     * {@code address}: a host (a name or an address literal) and port, resolved or not. Nothing here
     * asks a name server: this may run on a thread that must not block (an admin command adding a
     * node runs on the server's I/O thread). A name is looked up on the lookup thread, and the peer
     * connects once it is answered.
     */
    private synchronized Peer addPeerNow(InetSocketAddress address, int expectedNodeId) {
        String host = address.getHostString();
        InetSocketAddress target = address;
        boolean byName = false;
        if (address.isUnresolved()) {
            InetAddress literal = AddressLiteral.parse(host);
            byName = literal == null;
            if (literal != null) {
                target = new InetSocketAddress(literal, address.getPort());
            }
        } else {
            byName = AddressLiteral.parse(host) == null;
        }
        for (Peer p : peers) {
            if (p.host.equalsIgnoreCase(host) && p.port == address.getPort() && p.expectedNodeId == expectedNodeId) {
                return p;
            }
        }
        NioWorker w = workers[nextWorker];
        nextWorker = (nextWorker + 1) % workers.length;
        Peer peer = new Peer(host, address.getPort(), byName, target, expectedNodeId, w);
        peer.status = Peer.Status.CONNECTING;
        peers.add(peer);
        w.execute(() -> w.addPeer(peer));
        return peer;
    }

    /** Closes the connection to the peer and forgets it; its pending requests fail. */
    public synchronized void removePeer(Peer peer) {
        if (peers.remove(peer)) {
            peer.worker.execute(() -> peer.worker.removePeer(peer));
        }
    }

    public List<Peer> peers() {
        return Collections.unmodifiableList(new ArrayList<>(peers));
    }

    /** Waits until every peer is connected; throws NetConnectionException naming those that are not. */
    public void waitForConnected(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            StringBuilder missing = null;
            for (Peer p : peers) {
                if (p.status != Peer.Status.CONNECTED) {
                    if (missing == null) {
                        missing = new StringBuilder();
                    } else {
                        missing.append(", ");
                    }
                    missing.append(p).append(' ').append(p.status);
                    String f = p.lastFailure;
                    if (f != null) {
                        missing.append(" (").append(f).append(')');
                    }
                }
            }
            if (missing == null) {
                return;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new NetConnectionException("not connected within " + timeoutMillis + " ms: " + missing);
            }
            awaitStatusChange(left);
        }
    }

    /**
     * Sends a request to {@code peer}, or to a connected peer when null. Throws at once, without
     * sending, when the client is stopped ({@link io.poyang.common.StoppedException}), when no peer
     * can take it ({@link NetConnectionException}) or when the pending limit is full and the options
     * do not say to wait ({@link io.poyang.common.FlowControlException}); every later outcome goes
     * to the callback.
     */
    public <T> void sendRequest(Peer peer, WritePacket request, DecoderFactory<T> decoder, long timeoutMillis,
                                CallOptions options, RpcCallback<T> callback) {
        checkRunning();
        Peer p = peer != null ? peer : choosePeer();
        send(p.worker, p, null, request, decoder, timeoutMillis, options, callback);
    }

    /** Sends to any connected peer with the default options. */
    public <T> void sendRequest(WritePacket request, DecoderFactory<T> decoder, long timeoutMillis,
                                RpcCallback<T> callback) {
        sendRequest(null, request, decoder, timeoutMillis, CallOptions.DEFAULT, callback);
    }

    /**
     * Sends a request and returns a future completed on the callback executor; errors, including
     * those raised before sending, complete it exceptionally.
     */
    public <T> CompletableFuture<T> sendRequest(Peer peer, WritePacket request, DecoderFactory<T> decoder,
                                                long timeoutMillis) {
        CompletableFuture<T> future = new CompletableFuture<>();
        RpcCallback<T> cb = RpcCallback.completing(future);
        try {
            sendRequest(peer, request, decoder, timeoutMillis, CallOptions.DEFAULT, cb);
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
        return future;
    }

    /** Sends a one-way message; it is dropped if it cannot be written before the timeout. */
    public void sendOneWay(Peer peer, WritePacket message, long timeoutMillis) {
        checkRunning();
        Peer p = peer != null ? peer : choosePeer();
        sendOneWay(p.worker, p, null, message, timeoutMillis, false);
    }

    private Peer choosePeer() {
        List<Peer> ps = peers;
        int n = ps.size();
        if (n == 1) {
            Peer p = ps.get(0);
            if (p.status != Peer.Status.NOT_CONNECTED && p.status != Peer.Status.REMOVED) {
                return p;
            }
        } else if (n > 1) {
            int start = roundRobin++ & Integer.MAX_VALUE;
            Peer waiting = null;
            for (int i = 0; i < n; i++) {
                Peer p = ps.get((start + i) % n);
                Peer.Status s = p.status;
                if (s == Peer.Status.CONNECTED) {
                    return p;
                }
                if (waiting == null && (s == Peer.Status.CONNECTING || s == Peer.Status.HANDSHAKING)) {
                    waiting = p;
                }
            }
            if (waiting != null) {
                return waiting;
            }
        }
        throw new NetConnectionException(describe() + ": no server is connected or connecting (" + ps
                + "); it reconnects with back-off, retry later");
    }

    /** "host:port" as an unresolved address (the host without IPv6 brackets). */
    static InetSocketAddress parse(String hostPort) {
        int i = hostPort.lastIndexOf(':');
        if (i <= 0 || i == hostPort.length() - 1) {
            throw new IllegalArgumentException("expected host:port, got '" + hostPort + "'");
        }
        String host = hostPort.substring(0, i);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(i + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in '" + hostPort + "'");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range in '" + hostPort + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }
}
