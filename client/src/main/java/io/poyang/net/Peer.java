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

    final InetSocketAddress address;
    final NioWorker worker;
    volatile Status status = Status.NOT_CONNECTED;
    volatile Handshake remoteHandshake;

    // ---- owned by the worker ----
    NioConnection connection;
    WritePacket waitingHead;
    WritePacket waitingTail;
    long backoffMillis;
    long nextConnectNanos;
    String lastFailure;

    Peer(InetSocketAddress address, NioWorker worker) {
        this.address = address;
        this.worker = worker;
    }

    public InetSocketAddress address() {
        return address;
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
        return address.getHostString() + ":" + address.getPort();
    }
}
