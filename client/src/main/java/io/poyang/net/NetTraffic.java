package io.poyang.net;

/** What a {@link NioNode} has carried since it started (see {@link NioNode#traffic()}): for metrics. */
public final class NetTraffic {

    private final long bytesRead;
    private final long bytesWritten;
    private final long packetsReceived;
    private final long requestsReceived;
    private final long responsesReceived;
    private final int connections;

    public NetTraffic(long bytesRead, long bytesWritten, long packetsReceived, long requestsReceived,
                      long responsesReceived, int connections) {
        this.bytesRead = bytesRead;
        this.bytesWritten = bytesWritten;
        this.packetsReceived = packetsReceived;
        this.requestsReceived = requestsReceived;
        this.responsesReceived = responsesReceived;
        this.connections = connections;
    }

    /** Bytes read from the sockets. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Bytes written to the sockets. */
    public long bytesWritten() {
        return bytesWritten;
    }

    /** Every packet decoded (requests, one-way messages, responses, handshakes). */
    public long packetsReceived() {
        return packetsReceived;
    }

    /** Requests and one-way messages received (after the handshake). */
    public long requestsReceived() {
        return requestsReceived;
    }

    /** Answers received to requests this node sent. */
    public long responsesReceived() {
        return responsesReceived;
    }

    /** Connections open now. */
    public int connections() {
        return connections;
    }

    @Override
    public String toString() {
        return "read " + bytesRead + " B, written " + bytesWritten + " B, " + requestsReceived + " requests and "
                + responsesReceived + " responses received, " + connections + " connections";
    }
}
