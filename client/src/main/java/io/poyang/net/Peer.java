package io.poyang.net;

import java.net.InetSocketAddress;

/**
 * A server a {@link NioClient} talks to: its address, its connection status and its reconnect
 * back-off. The status may be read from any thread; everything else belongs to the peer's I/O
 * worker.
 */
public final class Peer {

    public enum Status {
        /** No connection; a reconnect is scheduled after the back-off. */
        NOT_CONNECTED,
        CONNECTING,
        /** Connected; waiting for the server's handshake. */
        HANDSHAKING,
        /** Ready for requests. */
        CONNECTED,
        /** Removed from the client; never reconnects. */
        REMOVED
    }

    /** The host as the peer was added (a name or an address literal, without IPv6 brackets). */
    final String host;
    final int port;
    /** {@link #host} is a name (not an address literal): it is looked up, and again after each failure. */
    final boolean byName;
    /**
     * Where the next connection goes: {@link #host} as last resolved (unresolved while no lookup has
     * succeeded). Replaced by the worker when a lookup after a failed or closed connection finds the
     * host elsewhere.
     */
    volatile InetSocketAddress address;
    /** The node id the server at {@link #address} must have; 0: any. */
    final int expectedNodeId;
    final NioWorker worker;
    volatile Status status = Status.NOT_CONNECTED;
    volatile Handshake remoteHandshake;

    // ---- owned by the worker ----
    NioConnection connection;
    WritePacket waitingHead;
    WritePacket waitingTail;
    long backoffMillis;
    long nextConnectNanos;
    volatile String lastFailure;
    /**
     * Why the server at {@link #address} is not node {@link #expectedNodeId} (it said so in its
     * handshake, or refused ours), or null. Cleared by the next accepted handshake.
     */
    volatile String wrongNode;
    /** A lookup of {@link #host} is on its way (owned by the worker). */
    boolean lookingUp;
    /** Why the last lookup of {@link #host} failed, or null after one succeeded (owned by the worker; logged once). */
    String lookupFailure;

    Peer(String host, int port, boolean byName, InetSocketAddress address, int expectedNodeId, NioWorker worker) {
        this.host = host;
        this.port = port;
        this.byName = byName;
        this.address = address;
        this.expectedNodeId = expectedNodeId;
        this.worker = worker;
    }

    /** The address the next connection goes to (unresolved while the host could not be looked up). */
    public InetSocketAddress address() {
        return address;
    }

    /** The node id the server must say it has in its handshake; 0 when any server will do. */
    public int expectedNodeId() {
        return expectedNodeId;
    }

    /** Why the last connection closed (or could not open), or null after a handshake succeeded. */
    public String lastFailure() {
        return lastFailure;
    }

    /**
     * Non-null while the address reaches another node than {@link #expectedNodeId()}: the reason,
     * naming both ids. The client keeps retrying (with back-off) until the address is corrected.
     */
    public String wrongNode() {
        return wrongNode;
    }

    public Status status() {
        return status;
    }

    public boolean isConnected() {
        return status == Status.CONNECTED;
    }

    /** The server's handshake (its id and limits) of the current or last connection, or null. */
    public Handshake remoteHandshake() {
        return remoteHandshake;
    }

    void addWaiting(WritePacket p) {
        if (waitingTail == null) {
            waitingHead = p;
        } else {
            waitingTail.next = p;
        }
        waitingTail = p;
    }

    WritePacket takeWaiting() {
        WritePacket h = waitingHead;
        waitingHead = null;
        waitingTail = null;
        return h;
    }

    @Override
    public String toString() {
        return host + ":" + port + (expectedNodeId != 0 ? " (node " + expectedNodeId + ")" : "");
    }
}
