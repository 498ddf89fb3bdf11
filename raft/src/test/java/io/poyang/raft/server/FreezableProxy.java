package io.poyang.raft.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of one port (or, with no target, a peer that accepts and
 * never answers). While <b>frozen</b> it reads nothing from either side of any connection, as a
 * peer whose process stopped would: the sender's socket buffers fill and stay full. Thawing lets
 * the bytes through again; {@link #dropConnections} closes every connection (both sides). Public for
 * the dtkv module's tests (raft's test-jar).
 */
public final class FreezableProxy implements AutoCloseable {

    private static final int BUFFER_BYTES = 64 * 1024;

    private final ServerSocket server;
    private final int targetPort;
    private final Thread acceptor;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean frozen;
    private volatile boolean closed;
    private final Object thaw = new Object();

    /**
     * @param targetPort where to forward, or 0 for a peer that accepts and never reads
     * @param receiveBufferBytes the receive buffer of accepted sockets (small: the sender's backlog shows sooner)
     */
    public FreezableProxy(int targetPort, int receiveBufferBytes) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.setReceiveBufferSize(receiveBufferBytes);
        server.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.acceptor = new Thread(this::acceptLoop, "proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public String address() {
        return "127.0.0.1:" + port();
    }

    /** Connections accepted so far. */
    volatile int accepted;

    public void freeze() {
        frozen = true;
    }

    public void thaw() {
        synchronized (thaw) {
            frozen = false;
            thaw.notifyAll();
        }
    }

    /** Closes every connection through the proxy; new ones are accepted as before. */
    public void dropConnections() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket in;
            try {
                in = server.accept();
            } catch (IOException e) {
                return;   // closed
            }
            accepted++;
            sockets.add(in);
            if (targetPort == 0) {
                continue;   // a peer that never reads
            }
            try {
                Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(out);
                pump(in, out, "proxy-up-" + in.getPort());
                pump(out, in, "proxy-down-" + in.getPort());
            } catch (IOException e) {
                closeQuietly(in);
            }
        }
    }

    private void pump(Socket from, Socket to, String name) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[BUFFER_BYTES];
            try {
                InputStream is = from.getInputStream();
                OutputStream os = to.getOutputStream();
                while (true) {
                    awaitThawed();
                    int n = is.read(buf);
                    if (n < 0) {
                        break;
                    }
                    // A read already waiting when the freeze came returns the next bytes: they wait here
                    // for a thaw, so nothing passes once frozen (before, they went through, and a test
                    // had to use that one chunk up itself, which a heartbeat ping could take first).
                    awaitThawed();
                    os.write(buf, 0, n);
                }
            } catch (IOException | InterruptedException e) {
                // a side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (thaw) {
            while (frozen && !closed) {
                thaw.wait(100);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        thaw();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        dropConnections();
    }
}
