package io.poyang.net;

/**
 * Told when a connection of a {@link NioNode} becomes usable (its handshake completed, so
 * {@link NioConnection#remoteHandshake()} names the other side) and when it closes. Servers use it
 * to know which client is on which connection (for pushes) and to drop what a closed connection
 * owned; clients use it to restore state after a reconnect.
 *
 * <p>Called on the connection's I/O thread: implementations must be quick and must not block
 * (hand real work to another thread). An exception thrown here is logged and ignored.
 */
public interface ConnectionListener {

    /** The handshake of {@code connection} completed; it can carry requests and pushes. */
    void onConnected(NioConnection connection);

    /** {@code connection} closed (only for connections that were reported connected). */
    void onClosed(NioConnection connection);
}
