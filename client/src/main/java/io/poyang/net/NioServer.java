package io.poyang.net;

import io.poyang.common.PoyangException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;
import io.poyang.log.WarningThrottle;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of the net layer: an accept thread hands each new connection to one of N I/O
 * workers, which owns it from then on. Register processors before {@link #start()}; requests whose
 * command has none get COMMAND_NOT_FOUND. A server can also push requests and one-way messages to
 * a connected client ({@link #sendRequest}, {@link #sendOneWay}).
 *
 * <p>{@link #stop()} stops accepting, answers new requests with STOPPING, lets the requests in
 * flight finish until {@link NioConfig#stopTimeoutMillis}, then closes every connection.
 */
public final class NioServer extends NioNode {

    private static final PoyangLog log = PoyangLogs.get(NioServer.class);

    /** After a failed accept (out of file descriptors, usually), the next try comes this much later. */
    private static final long ACCEPT_RETRY_MILLIS = 100;
    /** Accept failures in a row are warned about at most this often. */
    private static final long ACCEPT_FAILURE_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final NioServerConfig serverConfig;
    /** Accepted sockets not yet closed (counted by the acceptor, given back by the workers). */
    private final AtomicInteger acceptedOpen = new AtomicInteger();
    /** {@link NioServerConfig#maxConnections} resolved at start; 0 for none. */
    private volatile int connectionLimit;
    private ServerSocketChannel serverChannel;
    private Thread acceptor;
    private volatile int port;

    public NioServer(NioServerConfig config) {
        super(config);
        this.serverConfig = config;
    }

    /** The port listened on (the chosen one when the config said 0); valid after start. */
    public int port() {
        return port;
    }

    /** Most connections open at once (resolved from {@link NioServerConfig#maxConnections} at start); 0: none. */
    public int connectionLimit() {
        return connectionLimit;
    }

    /** The connection limit a {@link NioServerConfig#maxConnections} setting means in this process. */
    static int resolveConnectionLimit(int configured, long maxFileDescriptors) {
        if (configured != 0) {
            return Math.max(configured, 0);
        }
        if (maxFileDescriptors <= 0) {
            return 0;
        }
        long reserve = Math.max(64, maxFileDescriptors / 4);
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, maxFileDescriptors - reserve));
    }

    /**
     * The connections this process's file-descriptor limit leaves for all its servers together (the
     * default {@link NioServerConfig#maxConnections} of one server), or 0 when the JVM cannot tell the
     * limit. A process with several servers divides it among them.
     */
    public static int connectionBudget() {
        return resolveConnectionLimit(0, maxFileDescriptors());
    }

    /** The process's file-descriptor limit, or 0 when the JVM cannot tell (not a Unix HotSpot, say). */
    static long maxFileDescriptors() {
        try {
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
                return ((com.sun.management.UnixOperatingSystemMXBean) os).getMaxFileDescriptorCount();
            }
        } catch (RuntimeException | LinkageError e) {
            log.debug("cannot tell the file-descriptor limit: {}", e.toString());
        }
        return 0;
    }

    @Override
    void onAcceptedClosed() {
        acceptedOpen.decrementAndGet();
    }

    @Override
    protected void doStart() throws Exception {
        connectionLimit = resolveConnectionLimit(serverConfig.maxConnections,
                serverConfig.maxConnections == 0 ? maxFileDescriptors() : 0);
        startWorkers();
        ServerSocketChannel ch = ServerSocketChannel.open();
        serverChannel = ch;
        ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        String host = serverConfig.host;
        InetSocketAddress addr = host == null || host.isEmpty()
                ? new InetSocketAddress(serverConfig.port) : new InetSocketAddress(host, serverConfig.port);
        try {
            ch.bind(addr, serverConfig.backlog);
        } catch (BindException e) {
            throw new PoyangException(describe() + " cannot listen on " + addr + ": " + e.getMessage()
                    + " (is another process using the port? pick another one, or 0 for any free port)", e);
        }
        port = ((InetSocketAddress) ch.getLocalAddress()).getPort();
        acceptor = new Thread(this::acceptLoop, config.name + "-accept");
        acceptor.start();
        log.info("{} listening on {} with {} I/O threads, {}", describe(), ch.getLocalAddress(), workers.length,
                connectionLimit > 0 ? "at most " + connectionLimit + " connections" : "no connection limit");
    }

    private void acceptLoop() {
        int next = 0;
        // accept failures, connections refused for the limit, and connections no worker could take:
        // each warned about at once, then at most once per interval with the count in between
        WarningThrottle acceptFailures = new WarningThrottle(ACCEPT_FAILURE_LOG_INTERVAL_NANOS);
        WarningThrottle refusals = new WarningThrottle(ACCEPT_FAILURE_LOG_INTERVAL_NANOS);
        WarningThrottle noWorker = new WarningThrottle(ACCEPT_FAILURE_LOG_INTERVAL_NANOS);
        while (true) {
            SocketChannel ch;
            try {
                ch = serverChannel.accept();
            } catch (ClosedChannelException e) {
                return; // stop closed the listening socket
            } catch (IOException e) {
                if (!serverChannel.isOpen()) {
                    return;
                }
                // Usually out of file descriptors: back off a little instead of spinning, and warn
                // once per interval, not ten times a second for as long as it lasts.
                if (acceptFailures.occurred(System.nanoTime())) {
                    if (acceptFailures.isFirstOfRun()) {
                        log.warn("{}: accept failed: {}; new connections wait in the listen backlog, retried every {}"
                                        + " ms. Out of file descriptors? Raise the limit (ulimit -n) or look for"
                                        + " connections left open", describe(), e.toString(), ACCEPT_RETRY_MILLIS);
                    } else {
                        log.warn("{}: accept still failing, {} more times in the last {} s: {}", describe(),
                                acceptFailures.notLoggedBefore() + 1,
                                TimeUnit.NANOSECONDS.toSeconds(acceptFailures.nanosSinceLastLogged()), e.toString());
                    }
                }
                try {
                    Thread.sleep(ACCEPT_RETRY_MILLIS);
                } catch (InterruptedException ie) {
                    return;
                }
                continue;
            }
            if (acceptFailures.inRun()) {
                log.info("{}: accepting connections again after {} failed attempts", describe(), acceptFailures.endRun());
            }
            int limit = connectionLimit;
            if (limit > 0 && acceptedOpen.get() >= limit) {
                closeQuietly(ch);
                if (refusals.occurred(System.nanoTime())) {
                    log.warn("{}: {} new connection(s) closed at once since the last such warning: {} are open, the"
                                    + " limit (maxConnections) is {}. Raise the file-descriptor limit (ulimit -n), or"
                                    + " maxConnections, or look for clients that leave connections open",
                            describe(), refusals.notLoggedBefore() + 1, acceptedOpen.get(), limit);
                }
                continue;
            }
            // the next worker in turn whose loop still runs: one that crashed (a bug, reported when it
            // happened) would only close what it is handed
            NioWorker w = null;
            for (int tries = 0; tries < workers.length && w == null; tries++) {
                NioWorker candidate = workers[next];
                next = next + 1 == workers.length ? 0 : next + 1;
                if (!candidate.hasExited()) {
                    w = candidate;
                }
            }
            if (w == null) {
                closeQuietly(ch);
                if (noWorker.occurred(System.nanoTime())) {
                    log.error("{}: every I/O worker has ended; new connections are closed. Restart the process",
                            describe());
                }
                continue;
            }
            acceptedOpen.incrementAndGet();
            w.adopt(ch);
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing more to do
        }
    }

    @Override
    protected void doStop() throws Exception {
        if (serverChannel != null) {
            serverChannel.close();
        }
        if (acceptor != null) {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        }
        stopWorkers();
        log.info("{} stopped", describe());
    }

    /** Sends a request to a connected client (a push); the response goes to {@code callback}. */
    public <T> void sendRequest(NioConnection connection, WritePacket request, DecoderFactory<T> decoder,
                                long timeoutMillis, CallOptions options, RpcCallback<T> callback) {
        send(connection.worker, null, connection, request, decoder, timeoutMillis, options, callback);
    }

    /** Like the callback version; the future completes on the callback executor. */
    public <T> CompletableFuture<T> sendRequest(NioConnection connection, WritePacket request,
                                                DecoderFactory<T> decoder, long timeoutMillis) {
        CompletableFuture<T> future = new CompletableFuture<>();
        RpcCallback<T> cb = RpcCallback.completing(future);
        try {
            sendRequest(connection, request, decoder, timeoutMillis, CallOptions.DEFAULT, cb);
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
        return future;
    }

    /** Sends a one-way message to a connected client; dropped if not written before the timeout. */
    public void sendOneWay(NioConnection connection, WritePacket message, long timeoutMillis) {
        sendOneWay(connection.worker, null, connection, message, timeoutMillis, false);
    }
}
