package io.poyang.net;

import io.poyang.common.PoyangException;
import io.poyang.log.PoyangLog;
import io.poyang.log.PoyangLogs;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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

    private final NioServerConfig serverConfig;
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

    @Override
    protected void doStart() throws Exception {
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
        log.info("{} listening on {} with {} I/O threads", describe(), ch.getLocalAddress(), workers.length);
    }

    private void acceptLoop() {
        int next = 0;
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
                // Usually out of file descriptors: back off a little instead of spinning.
                log.warn("{}: accept failed: {}", describe(), e.toString());
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    return;
                }
                continue;
            }
            NioWorker w = workers[next];
            next = next + 1 == workers.length ? 0 : next + 1;
            w.execute(() -> w.register(ch));
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
