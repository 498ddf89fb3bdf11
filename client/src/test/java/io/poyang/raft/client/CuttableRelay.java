package io.poyang.raft.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP relay in front of a test server whose connections a test can cut, both ends at once,
 * as a network that dropped them would: what the client sent has arrived, and no answer will. New
 * connections are relayed after a cut, so a client that reconnects gets through again.
 */
final class CuttableRelay implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    CuttableRelay(int targetPort) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        daemon("relay-accept", this::acceptLoop);
    }

    /** The port clients connect to. */
    int port() {
        return listener.getLocalPort();
    }

    /** Closes every connection relayed so far, on both sides. */
    void cutAll() {
        for (Socket s : open) {
            open.remove(s);
            closeQuietly(s);
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        cutAll();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;   // closed
            }
            try {
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                daemon("relay-to-server", () -> pump(client, server));
                daemon("relay-to-client", () -> pump(server, client));
            } catch (IOException e) {
                closeQuietly(client);   // the server is gone: the client sees a closed connection
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        byte[] buf = new byte[8192];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // cut, or one side closed: either way the relayed connection ends on both sides
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing is all that is asked
        }
    }
}
