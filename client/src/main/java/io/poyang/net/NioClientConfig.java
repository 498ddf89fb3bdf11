package io.poyang.net;

import java.util.ArrayList;
import java.util.List;

/** Settings of a {@link NioClient}; see {@link NioConfig} for the shared ones. */
public final class NioClientConfig extends NioConfig {

    /** Servers to connect to at start, as "host:port" strings; more can be added later. */
    public List<String> servers = new ArrayList<>();

    public long connectTimeoutMillis = 3_000;
    /** The handshake response must arrive this long after the connection opened. */
    public long handshakeTimeoutMillis = 5_000;
    /** First wait before reconnecting; doubles after each failure up to the max. */
    public long reconnectMinBackoffMillis = 100;
    public long reconnectMaxBackoffMillis = 5_000;
    /**
     * A connection that sent nothing, or read nothing, this long sends a ping: it keeps an idle
     * connection alive past the server's idle timeout, and finds a server that stopped answering
     * while requests go out (a host cut off without a reset). The connection closes when nothing at
     * all is read within this long after the ping; answers queued behind others are waited for as
     * long as bytes arrive. 0 disables.
     */
    public long heartbeatIntervalMillis = 10_000;
    /**
     * Resolves the servers' host names, on the lookup thread: when a server given by name is added,
     * and again after each failed or closed connection to it, so a name that moves is followed. Not
     * asked for a host given as an IP address.
     */
    public HostResolver hostResolver = HostResolver.SYSTEM;

    public NioClientConfig() {
        super("NioClient", 1);
    }

    @Override
    void validate() {
        super.validate();
        check(connectTimeoutMillis >= 1, "connectTimeoutMillis must be positive: " + connectTimeoutMillis);
        check(handshakeTimeoutMillis >= 1, "handshakeTimeoutMillis must be positive: " + handshakeTimeoutMillis);
        check(reconnectMinBackoffMillis >= 1, "reconnectMinBackoffMillis must be positive: " + reconnectMinBackoffMillis);
        check(reconnectMaxBackoffMillis >= reconnectMinBackoffMillis,
                "reconnectMaxBackoffMillis must be at least reconnectMinBackoffMillis");
        check(hostResolver != null, "hostResolver must not be null (HostResolver.SYSTEM is the default)");
        check(heartbeatIntervalMillis >= 0, "heartbeatIntervalMillis must not be negative: " + heartbeatIntervalMillis);
    }
}
