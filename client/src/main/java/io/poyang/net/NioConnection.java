package io.poyang.net;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

/**
 * One TCP connection, owned by one {@link NioWorker}: its socket, its read state (a
 * {@link PacketReader}), its queue of packets to encode and the encoded buffers not yet written.
 * Only {@link #isOpen()}, {@link #id()} and {@link #remoteAddress()} may be called from other
 * threads; hand it to {@link NioServer#sendRequest} to push to a client.
 */
public final class NioConnection {

    final NioWorker worker;
    final SocketChannel channel;
    final int id;
    /** The peer this client connection serves, or null on the server side. */
    final Peer peer;
    final PacketReader reader;
    private final SocketAddress remoteAddress;

    SelectionKey key;
    int interestOps;
    boolean connecting;
    long connectDeadlineNanos;
    boolean handshakeDone;
    /**
     * Set when this side refused the other's handshake and queued the answer saying why: the
     * connection closes, with this reason, once that answer is written; nothing else is read.
     */
    String closeWhenWritten;
    int handshakeSeq;
    volatile Handshake remoteHandshake;
    int remoteMaxFrameBytes;
    private volatile boolean closed;
    String closeReason;

    private int nextSeq = 1;

    // ---- the write side ----
    WritePacket queueHead;
    WritePacket queueTail;
    ByteBuffer[] out = new ByteBuffer[16];
    int outStart;
    int outEnd;
    /** Encoded bytes not yet written. */
    long outBytes;
    /** Bytes encoded for this connection since it opened, and the part of them written. */
    long encodedTotalBytes;
    long writtenTotalBytes;
    /** Encoded requests that free their pending-limit room once written, oldest first. */
    WritePacket awaitingWriteHead;
    WritePacket awaitingWriteTail;
    boolean readPaused;
    boolean dirty;
    NioConnection nextDirty;

    final long createdNanos;
    long lastReadNanos;
    long lastSendNanos;
    /** Client side: a heartbeat ping is out and not yet answered or timed out. */
    boolean heartbeatOut;
    long lastWriteProgressNanos;

    NioConnection(NioWorker worker, SocketChannel channel, int id, Peer peer, long nowNanos, int maxFrameBytes) {
        this.worker = worker;
        this.channel = channel;
        this.id = id;
        this.peer = peer;
        this.createdNanos = nowNanos;
        this.lastReadNanos = nowNanos;
        this.lastSendNanos = nowNanos;
        this.remoteMaxFrameBytes = maxFrameBytes;
        this.reader = new PacketReader(this, maxFrameBytes);
        SocketAddress a = peer != null ? peer.address : null;
        if (a == null) {
            try {
                a = channel.getRemoteAddress();
            } catch (Exception e) {
                a = null;
            }
        }
        this.remoteAddress = a;
    }

    public int id() {
        return id;
    }

    public boolean isOpen() {
        return !closed;
    }

    /** The other side's address (may be null if the socket failed before it was known). */
    public SocketAddress remoteAddress() {
        return remoteAddress;
    }

    /** The other side's handshake (its id and limits), or null before the handshake. */
    public Handshake remoteHandshake() {
        return remoteHandshake;
    }

    boolean isClosed() {
        return closed;
    }

    void markClosed(String reason) {
        closed = true;
        closeReason = reason;
    }

    int nextSeq() {
        int s = nextSeq;
        // seq 0 means "absent" on the wire; wrap within the positive int32 range.
        nextSeq = s == Integer.MAX_VALUE ? 1 : s + 1;
        return s;
    }

    void append(WritePacket p) {
        p.next = null;
        if (queueTail == null) {
            queueHead = p;
        } else {
            queueTail.next = p;
        }
        queueTail = p;
    }

    WritePacket pollQueue() {
        WritePacket p = queueHead;
        if (p != null) {
            queueHead = p.next;
            if (queueHead == null) {
                queueTail = null;
            }
            p.next = null;
        }
        return p;
    }

    void addOut(ByteBuffer b) {
        if (outEnd == out.length) {
            if (outStart > 0) {
                System.arraycopy(out, outStart, out, 0, outEnd - outStart);
                Arrays.fill(out, outEnd - outStart, outEnd, null);
                outEnd -= outStart;
                outStart = 0;
            } else {
                out = Arrays.copyOf(out, out.length * 2);
            }
        }
        out[outEnd++] = b;
    }

    boolean hasUnwritten() {
        return outStart < outEnd;
    }

    @Override
    public String toString() {
        String where = remoteAddress instanceof InetSocketAddress
                ? ((InetSocketAddress) remoteAddress).getHostString() + ":" + ((InetSocketAddress) remoteAddress).getPort()
                : String.valueOf(remoteAddress);
        return "connection#" + id + "(" + where + ")";
    }
}
