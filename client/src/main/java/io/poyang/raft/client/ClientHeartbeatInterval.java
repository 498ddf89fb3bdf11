package io.poyang.raft.client;

/**
 * The bounds of a client's heartbeat interval ({@code net.heartbeatIntervalMillis} of a
 * {@link RaftClient}, an {@link AdminClient} or a KvClient) and their check, in one place so that
 * the three configs' setters, and the check of the raw field when each client is made, cannot drift
 * apart. The network layer's own config takes any interval that is not negative (0, no heartbeat,
 * suits node-to-node connections); a client needs one within these bounds to notice a server that
 * went silent with its connection open, without closing sound or idle connections.
 */
public final class ClientHeartbeatInterval {

    /** The least interval: below it a round trip or a short stall closes sound connections. */
    public static final long MIN_MILLIS = 100;
    /**
     * The most interval: half a server's default idle timeout (60 s), past which the server would
     * close an idle client's connections before its pings keep them open.
     */
    public static final long MAX_MILLIS = 30_000;

    private static final String BOUNDS_REASON = "(a silent server is noticed in about twice it; below the least a"
            + " round trip or a short stall closes sound connections, above the most a server's 60 s idle timeout"
            + " closes idle ones)";

    private ClientHeartbeatInterval() {
    }

    /**
     * For a config's {@code heartbeatIntervalMillis(long)} setter: returns {@code millis}, or throws
     * IllegalArgumentException naming the bounds, why they are there, and the value.
     */
    public static long checkSetting(long millis) {
        if (!withinBounds(millis)) {
            throw new IllegalArgumentException("heartbeatIntervalMillis must be between " + MIN_MILLIS + " and "
                    + MAX_MILLIS + " ms " + BOUNDS_REASON + ": " + millis);
        }
        return millis;
    }

    /**
     * For a client being made: the network config's {@code heartbeatIntervalMillis} is a public
     * field, so a value set on it directly has not been through the config's setter and is checked
     * here. Returns {@code millis}, or throws IllegalArgumentException naming the field as the user
     * reaches it, the bounds, the value and the setter to use.
     *
     * @param configClass the config's simple name, e.g. {@code "KvClientConfig"}
     * @param netFieldPath the path from that config to its network config, e.g. {@code "raft.net"}
     * @param clientClass the client's simple name, e.g. {@code "KvClient"}
     */
    public static long checkConfigured(String configClass, String netFieldPath, String clientClass, long millis) {
        if (!withinBounds(millis)) {
            throw new IllegalArgumentException(configClass + "." + netFieldPath + ".heartbeatIntervalMillis is " + millis
                    + " ms; a " + clientClass + "'s must be between " + MIN_MILLIS + " and " + MAX_MILLIS + " ms "
                    + BOUNDS_REASON + " (0 would never notice a silent server). Set it with " + configClass
                    + ".heartbeatIntervalMillis(ms), or leave the default ("
                    + RaftClientConfig.CLIENT_HEARTBEAT_INTERVAL_MILLIS + " ms)");
        }
        return millis;
    }

    private static boolean withinBounds(long millis) {
        return millis >= MIN_MILLIS && millis <= MAX_MILLIS;
    }
}
