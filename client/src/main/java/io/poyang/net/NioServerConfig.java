package io.poyang.net;

/** Settings of a {@link NioServer}; see {@link NioConfig} for the shared ones. */
public final class NioServerConfig extends NioConfig {

    /** Address to bind; null or empty binds all interfaces. */
    public String host;
    /** Port to listen on; 0 picks a free one ({@link NioServer#port()} tells which). */
    public int port;
    public int backlog = 1024;

    /**
     * Most connections open at once. Past it, a new connection is closed as soon as it is accepted
     * (its client sees it closed and can try another node) and a warning says so. 0, the default:
     * the process's file-descriptor limit less a quarter of it (at least 64), when the JVM can tell
     * the limit, else none; with a limit, a flood of connections can no longer take every descriptor
     * and leave none for the files of the process (a raft node's log segments, its snapshots), nor
     * for this server's other sockets. -1: no limit.
     */
    public int maxConnections = 0;

    /** A connection that has not sent a valid handshake this long after accept is closed. */
    public long handshakeTimeoutMillis = 5_000;
    /** A connection that sends nothing this long is closed (clients ping every few seconds). 0 disables. */
    public long idleTimeoutMillis = 60_000;

    public NioServerConfig() {
        // Half the cores: a raft server also needs its dispatchers and log writers.
        super("NioServer", Math.max(1, Runtime.getRuntime().availableProcessors() / 2));
    }

    @Override
    void validate() {
        super.validate();
        check(port >= 0 && port <= 65535, "port must be in 0..65535: " + port);
        check(handshakeTimeoutMillis >= 1, "handshakeTimeoutMillis must be positive: " + handshakeTimeoutMillis);
        check(idleTimeoutMillis >= 0, "idleTimeoutMillis must not be negative: " + idleTimeoutMillis);
        check(maxConnections >= -1, "maxConnections must be -1 (no limit), 0 (from the file-descriptor limit) or"
                + " positive: " + maxConnections);
    }
}
